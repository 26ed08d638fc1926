#!/usr/bin/env bash
# tests/e2e/filter_cli.sh - `sharnessd --filter` end to end: the real binary,
# stdin -> stdout, the summary on stderr, vault keys from a secrets file,
# refusal of a short secret, benign input unchanged, idempotence.
set -u
cd "$(dirname "$0")/../.."
BIN=${SHARNESSD:-build/sharnessd}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
if [ ! -x "$BIN" ]; then
	echo "not ok 1 - $BIN is not built (make all)"
	exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# A GitHub token with a valid CRC-32 checksum, made here, never stored.
gh=$(python3 -c '
import random, zlib
A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
b = "".join(random.choice(A) for _ in range(30)); v = zlib.crc32(b.encode()); s = ""
for _ in range(6): s = A[v % 62] + s; v //= 62
print("ghp_" + b + s)')
aws="AKIA$(tr -dc 'A-Z2-7' </dev/urandom | head -c 16)"
printf 'token %s\nkey=%s\n' "$gh" "$aws" | "$BIN" --filter >"$T/out" 2>"$T/err"
check "github token and aws key id replaced" \
	'[ "$(cat "$T/out")" = "$(printf "token [filtered: github-pat]\nkey=[filtered: aws-access-key-id]")" ]'
check "summary line on stderr counts 2" 'grep -q "2 replaced" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ]'

echo 'DB=Vault-Secret-9x!' >"$T/secrets"
printf 'echo Vault-Secret-9x! | base64: %s\nhex: %s\n' "$(printf 'Vault-Secret-9x!\n' | base64)" \
	"$(printf 'Vault-Secret-9x!' | od -An -tx1 | tr -d ' \n')" >"$T/in"
"$BIN" --filter --secrets "$T/secrets" <"$T/in" >"$T/out" 2>"$T/err"
check "vault key raw, base64 and hex all replaced" \
	'! grep -q "Vault-Secret\|VmF1bHQtU2VjcmV0\|5661756c742d536563726574" "$T/out" && [ "$(grep -o "filtered: vault key" "$T/out" | wc -l)" -eq 3 ]'
check "summary counts one vault key" 'grep -q "1 vault keys" "$T/err"'

# Wrapped by the tools that wrap (SPEC §7: base64 and hex of a vault key
# are found): `base64 .env` at 76 columns (57 bytes a line), `openssl base64`
# at 64 (48), `xxd -p` at 60 (30), the same indented as in YAML and with CRLF
# line ends.  In each file the key's middle sits on the tool's second line
# end, at three alignments.  Checked on the output joined back into one
# line: no 8 characters from the middle of the key's part survive.
echo 'API_TOKEN=Vault-Wrapped-Key-0042/x' >"$T/wsecrets"
envfile() { # FILE AT: a .env file whose key starts at byte AT
	python3 -c 'import sys; at = int(sys.argv[1]); sys.stdout.write(("HOST_URL=https://example.org/x\n" * 9)[:at - 10] + "API_TOKEN=Vault-Wrapped-Key-0042/x\nLOG=info\n")' "$2" >"$1"
}
wrapped_gone() { # FORM RAW OUT: OUT, joined, holds no middle of the key's part of RAW's FORM
	python3 - "$1" "$2" "$3" <<'PY'
import base64, binascii, sys
form, raw, path = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3]
i = raw.index(b"Vault-Wrapped-Key-0042/x")
text = open(path).read()
out = "".join(text.split())
if form == "hex":
	mid = binascii.hexlify(raw).decode()[2 * i + 16: 2 * i + 32]
else:
	mid = base64.b64encode(raw).decode()[(4 * i + 2) // 3 + 8: (4 * i + 2) // 3 + 16]
sys.exit(0 if mid not in out and "[filtered: vault key]" in text else 1)
PY
}
for pre in 0 1 2; do
	envfile "$T/env$pre" $((114 - 12 + pre))
	base64 "$T/env$pre" | "$BIN" --filter --secrets "$T/wsecrets" >"$T/env$pre.b64.out" 2>/dev/null
	check "base64 .env (76 columns), key at alignment $pre: no part survives" 'wrapped_gone b64 "$T/env$pre" "$T/env$pre.b64.out"'
	envfile "$T/env$pre" $((96 - 12 + pre))
	openssl base64 -in "$T/env$pre" | "$BIN" --filter --secrets "$T/wsecrets" >"$T/env$pre.ssl.out" 2>/dev/null
	check "openssl base64 (64 columns), alignment $pre: no part survives" 'wrapped_gone b64 "$T/env$pre" "$T/env$pre.ssl.out"'
	envfile "$T/env$pre" $((90 - 12 + pre))
	xxd -p "$T/env$pre" | "$BIN" --filter --secrets "$T/wsecrets" >"$T/env$pre.hex.out" 2>/dev/null
	check "xxd -p (60 columns), alignment $pre: no part survives" 'wrapped_gone hex "$T/env$pre" "$T/env$pre.hex.out"'
done
envfile "$T/env1" $((96 - 12 + 1))
base64 -w 64 "$T/env1" | sed 's/^/    /; s/$/\r/' | "$BIN" --filter --secrets "$T/wsecrets" >"$T/env1.yaml.out" 2>/dev/null
check "base64 indented as in YAML, with CRLF: no part survives" 'wrapped_gone b64 "$T/env1" "$T/env1.yaml.out"'
head -c 300000 /dev/urandom | base64 >"$T/dump"
"$BIN" --filter --secrets "$T/wsecrets" <"$T/dump" >"$T/dump.out" 2>/dev/null
check "a base64 dump of 300 KB without the key passes byte for byte" 'cmp -s "$T/dump" "$T/dump.out"'

echo 'short=abc' >"$T/bad"
"$BIN" --filter --secrets "$T/bad" </dev/null >"$T/out" 2>"$T/err"; rc=$?
check "short secret refused with the line number" '[ $rc -ne 0 ] && grep -q "bad:1: the secret is 3 characters long" "$T/err"'

cat /usr/include/stdio.h /usr/include/stdlib.h /usr/include/string.h >"$T/benign"
"$BIN" --filter <"$T/benign" >"$T/out" 2>/dev/null
check "system headers pass byte for byte" 'cmp -s "$T/benign" "$T/out"'

printf 'token %s\n' "$gh" | "$BIN" --filter 2>/dev/null | "$BIN" --filter >"$T/twice" 2>"$T/err"
check "filtering twice changes nothing" 'grep -q "0 replaced" "$T/err" && [ "$(cat "$T/twice")" = "token [filtered: github-pat]" ]'

printf 'PRIVATE_KEY_TYPES = typing.Union[\nSECRET_TYPES = RSAPrivateKey, DSAPrivateKey\npassword = get_password(user)\nsee https://user:password@host/x\n' >"$T/code"
"$BIN" --filter <"$T/code" >"$T/out" 2>/dev/null
check "code assignments and a placeholder URL password pass unchanged" 'cmp -s "$T/code" "$T/out"'

# 1.9 MB through the zero-copy read path (15 windows): the vault key raw and in
# base64 every 64 KB, so copies fall on window and hold-back boundaries.
python3 - "$T/big" <<'PY'
import base64, sys
k = "Vault-Secret-9x!"
with open(sys.argv[1], "w") as f:
    for i in range(32):
        f.write(("log line %d ok\n" % i) * (65536 // 16 - 8 + i))
        f.write("raw %s b64 %s\n" % (k, base64.b64encode(("xy" + k).encode()).decode()))
PY
"$BIN" --filter --secrets "$T/secrets" <"$T/big" >"$T/out" 2>"$T/err"
check "1.9 MB input: all 64 copies of the vault key replaced, nothing else changed" \
	'[ "$(grep -c "raw \[filtered: vault key\] b64 eHl\[filtered: vault key\]" "$T/out")" -eq 32 ] && grep -q "64 replaced" "$T/err" && [ "$(grep -vc "filtered" "$T/out")" -eq "$(grep -vc "Vault-Secret" "$T/big")" ]'
check "summary gives the filter's rate and the rate with I/O" 'grep -Eq "[0-9.]+ MB/s \([0-9.]+ MB/s with I/O\)$" "$T/err"'
