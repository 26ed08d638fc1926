#!/usr/bin/env python3
"""classes.py DIR [MB] - one benchmark input per content class for the secret
filter (issue 16.3), MB megabytes each (default 40), written as DIR/CLASS.txt:

  source   C headers and Python sources of this system
  buildlog compiler, make, test-runner and npm lines as a build prints them
  json     API-style JSON records, one per line (ids, hashes, URLs, numbers)
  minjs    minified JavaScript: long lines of short identifiers and literals
  base64   base64 blobs in 76-column lines (attachments, embedded files)
  prose    English text: licenses and package documentation

None holds a credential on purpose, so every line the filter changes is a
false positive (run.sh counts them).  Deterministic (seeded)."""
import base64, glob, gzip, json, os, random, sys

out_dir = sys.argv[1]
target = int(sys.argv[2] if len(sys.argv) > 2 else 40) << 20
rnd = random.Random(16)
os.makedirs(out_dir, exist_ok=True)


def fill(name, chunks):
    """Write chunks (an endless generator of str) until `target` bytes."""
    n = 0
    with open(os.path.join(out_dir, name + ".txt"), "w", encoding="utf-8", errors="replace") as f:
        for c in chunks:
            f.write(c)
            n += len(c.encode("utf-8", "replace"))
            if n >= target:
                return


def files_text(patterns, opener=open):
    paths = []
    for p in patterns:
        paths += sorted(glob.glob(p, recursive=True))
    while True:
        for p in paths:
            try:
                with opener(p, "rt", encoding="utf-8", errors="replace") as f:
                    yield f.read()
            except OSError:
                pass


def ident():
    return rnd.choice("abcdefghijklmnopqrstuvwxyz_$") + "".join(
        rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rnd.randint(0, 3)))


def buildlog():
    srcs = ["src/net/%s.c" % w for w in ("conn", "http", "tls", "queue", "pool", "dns")]
    while True:
        k = rnd.random()
        if k < 0.4:
            s = rnd.choice(srcs)
            yield "cc -O2 -g -Wall -Wextra -Werror -fPIE -D_GNU_SOURCE -Iinclude -c %s -o build/%s.o\n" % (s, s[:-2])
        elif k < 0.55:
            s = rnd.choice(srcs)
            yield "%s:%d:%d: warning: unused variable 'tmp%d' [-Wunused-variable]\n" % (
                s, rnd.randint(1, 900), rnd.randint(1, 80), rnd.randint(0, 99))
        elif k < 0.7:
            yield "[%5d/%5d] Building CXX object lib/CMakeFiles/core.dir/%s.cpp.o\n" % (
                rnd.randint(1, 9999), 9999, ident())
        elif k < 0.85:
            yield "  PASS  tests/%s.test.js (%d.%03d s)\n" % (ident(), rnd.randint(0, 9), rnd.randint(0, 999))
        else:
            yield "npm http fetch GET 200 https://registry.npmjs.org/%s %dms (cache miss)\n" % (
                ident(), rnd.randint(5, 900))


def jsonl():
    while True:
        rec = {
            "id": rnd.randint(1, 10 ** 12),
            "uuid": "%08x-%04x-%04x-%04x-%012x" % tuple(rnd.getrandbits(b) for b in (32, 16, 16, 16, 48)),
            "sha": "%040x" % rnd.getrandbits(160),
            "url": "https://api.example.com/v2/items/%d?page=%d" % (rnd.randint(1, 99999), rnd.randint(1, 50)),
            "name": ident() + "-" + ident(),
            "score": round(rnd.random() * 100, 3),
            "tags": [ident() for _ in range(rnd.randint(0, 4))],
            "created_at": "2026-%02d-%02dT%02d:%02d:%02dZ" % (
                rnd.randint(1, 12), rnd.randint(1, 28), rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59)),
        }
        yield json.dumps(rec, separators=(",", ":")) + "\n"


def minjs():
    ops = ["=", "+", "-", "*", "&&", "||", "===", "!==", "?", ":", ",", ";"]
    while True:
        parts = []
        for _ in range(rnd.randint(400, 2000)):
            k = rnd.random()
            if k < 0.45:
                parts.append(ident())
            elif k < 0.6:
                parts.append(str(rnd.randint(0, 4096)))
            elif k < 0.7:
                parts.append('"%s"' % ident())
            elif k < 0.8:
                parts.append("function(%s,%s){return " % (ident(), ident()))
            elif k < 0.85:
                parts.append("}")
            else:
                parts.append(rnd.choice(ops))
        yield "".join(parts) + "\n"


def b64():
    while True:
        blob = base64.b64encode(rnd.randbytes(57 * rnd.randint(20, 200))).decode()
        yield "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76)) + "\n"


fill("source", files_text(["/usr/include/**/*.h", "/usr/lib/python3*/**/*.py"]))
fill("buildlog", buildlog())
fill("json", jsonl())
fill("minjs", minjs())
fill("base64", b64())
prose_globs = ["/usr/share/common-licenses/*"]
gz = sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz"))[:400]


def prose():
    plain = files_text(prose_globs)
    while True:
        yield next(plain)
        for p in gz[:40]:
            try:
                with gzip.open(p, "rt", encoding="utf-8", errors="replace") as f:
                    yield f.read()
            except OSError:
                pass


fill("prose", prose())
