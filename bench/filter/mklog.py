#!/usr/bin/env python3
"""mklog.py OUT.log OUT.creds OUT.secrets [MB] - build the benchmark log for
the secret filter: Debian files (headers, Python stdlib, docs), random base64
and hex dumps, with fake credentials of many formats sprinkled in.  Writes the
sprinkled credentials, one per line, to OUT.creds and 1,000 vault keys to
OUT.secrets (100 of which are also sprinkled, raw or base64/hex-encoded)."""
import base64, glob, os, random, sys, zlib

out, creds_path, secrets_path = sys.argv[1:4]
target = int(sys.argv[4] if len(sys.argv) > 4 else 100) << 20
rnd = random.Random(42)
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64U = B62 + "_-"
HEX = "0123456789abcdef"
def r(a, n): return "".join(rnd.choice(a) for _ in range(n))
def b62crc(body):
    v = zlib.crc32(body.encode()) & 0xffffffff
    s = ""
    for _ in range(6):
        s = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[v % 62] + s
        v //= 62
    return s
def gh(p): b = r(B62, 30); return p + b + b62crc(b)
def pem():
    return "-----BEGIN RSA PRIVATE KEY-----\nMIIEpA" + "".join("\n" + r(B62 + "+/", 64) for _ in range(10)) + "\n-----END RSA PRIVATE KEY-----"
makers = [
    lambda: ("token " , gh("ghp_")),
    lambda: ("", gh("npm_")),
    lambda: ("aws_access_key_id = ", "AKIA" + r("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    lambda: ("STRIPE=", "sk_live_" + r(B62, 40)),
    lambda: ("", "xoxb-" + r("0123456789", 12) + "-" + r("0123456789", 13) + "-" + r(B62, 24)),
    lambda: ("", "glpat-" + r(B64U, 20)),
    lambda: ("", "AIza" + r(B64U, 35)),
    lambda: ("OPENAI_API_KEY=", "sk-proj-" + r(B64U, 74) + "T3BlbkFJ" + r(B64U, 74)),
    lambda: ("", "sk-ant-api03-" + r(B64U, 93) + "AA"),
    lambda: ("Authorization: Bearer ", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + r(B64U, 60) + "." + r(B64U, 43)),
    lambda: ("DATABASE_URL=postgres://app:", r(B62, 16)),
    lambda: ("", "hf_" + r(B62, 34)),
    lambda: ("", "dop_v1_" + r(HEX, 64)),
    lambda: ("", "SG." + r(B64U, 22) + "." + r(B64U, 43)),
    lambda: ("", "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    lambda: ("", "pypi-AgEIcHlwaS5vcmc" + r(B64U, 150)),
    lambda: ("", pem()),
    lambda: ("export DB_PASSWORD=", "Pw-" + r(B62, 14)),
    lambda: ("", "https://hooks.slack.com/services/T" + r("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10) + "/B" + r("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10) + "/" + r(B62, 24)),
    lambda: ("", "shpat_" + r(HEX, 32)),
]

files = sorted(glob.glob("/usr/include/**/*.h", recursive=True)) + \
        sorted(glob.glob("/usr/lib/python3*/**/*.py", recursive=True))
rnd.shuffle(files)
# The first character is never '#': a secrets-file line starting with it is
# a comment, and the key would silently not be loaded.
secrets = [r(B62, 1) + r(B62 + "+/!@#", rnd.randint(15, 39)) for _ in range(1000)]
with open(secrets_path, "w") as f:
    for i, s in enumerate(secrets):
        f.write("KEY_%d=%s\n" % (i, s) if i % 2 else s + "\n")
creds = []
size = 0
fi = 0
with open(out, "w") as o:
    while size < target:
        kind = rnd.random()
        if kind < 0.8 and fi < len(files):
            try:
                chunk = open(files[fi], encoding="utf-8", errors="replace").read()
            except OSError:
                chunk = ""
            fi += 1
        elif kind < 0.9:
            chunk = "\n".join(base64.b64encode(os.urandom(57)).decode() for _ in range(2000)) + "\n"
        else:
            chunk = "\n".join(os.urandom(30).hex() for _ in range(2000)) + "\n"
        if rnd.random() < 0.05:
            if rnd.random() < 0.3:
                s = secrets[rnd.randrange(1000)]
                enc = rnd.choice([s, base64.b64encode(s.encode()).decode(), s.encode().hex()])
                line = "value: " + enc + " end\n"
                creds.append(enc)
            else:
                pre, cred = rnd.choice(makers)()
                line = pre + cred + ("@db:5432/app" if pre.endswith("app:") else "") + "\n"
                creds.append(cred)
            cut = chunk.rfind("\n", 0, len(chunk) // 2) + 1
            chunk = chunk[:cut] + line + chunk[cut:]
        o.write(chunk)
        size += len(chunk)
with open(creds_path, "w") as f:
    for c in creds:
        f.write(c.replace("\n", "\\n") + "\n")
