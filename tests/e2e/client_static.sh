#!/bin/bash
# client_static.sh - sharness-client as a binary, without a daemon: statically
# linked (its unwind tables found, not registered at start), never forks or
# execs (strace), and its own failures (bad flags, missing certificates,
# unreachable daemon, bad URL) are exit 125 with one clear line on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
C=$CLIENT  # lib.sh: $CLIENT or build/sharness-client
tmp=$T/client-static  # inside the harness's $T, removed at exit
mkdir -p "$tmp"

check "client: binary exists" test -x "$C"
f=$(file -b "$C")
if [ -n "${SHARNESS_SANITIZED:-}" ]; then
	# ASan needs its dynamic runtime; the release build is checked by `make test`.
	echo "# skipped under the sanitizer build: static linking (5 checks)"
else
case $f in *"statically linked"*) ok "client: file says statically linked";;
	*) not_ok "client: file says statically linked"; echo "# $f";; esac
check "client: no ELF interpreter" bash -c "! readelf -lW '$C' | grep -q INTERP"
check "client: no dynamic section" bash -c "readelf -d '$C' | grep -q 'no dynamic section'"
# Its start registers no unwind tables (client/frames.c): the unwinder finds
# them through the program header, and a program linked the same way still
# unwinds a cancelled thread (it aborts where that header is missing).
check "client: its unwind tables have a program header (GNU_EH_FRAME)" bash -c "readelf -lW '$C' | grep -q GNU_EH_FRAME"
unwind=$(dirname "$C")/tests/client_unwind
check_eq "client: a program linked as the client is unwinds a cancelled thread" \
	"$("$unwind" 2>&1; echo "exit $?")" "cancelled thread unwound: yes
exit 0"
fi

# strace: exactly one execve (its own) and no process creation of any kind.
st() { # st NAME ARGS... < stdin : trace the client, check the syscalls
	local name=$1; shift
	strace -f -qq -e trace=execve,execveat,clone,clone3,fork,vfork -o "$tmp/st" "$C" "$@" >/dev/null 2>&1
	local ex cl
	ex=$(grep -c 'execve' "$tmp/st"); cl=$(grep -E 'clone|fork' "$tmp/st" | grep -vc 'CLONE_THREAD')
	if [ "$ex" = 1 ] && [ "$cl" = 0 ] && grep -q "execve(\"$C\"" "$tmp/st"; then
		ok "client: $name: one execve (its own), no new process (threads only)"
	else
		not_ok "client: $name: one execve (its own), no new process (threads only)"; sed 's/^/# /' "$tmp/st"
	fi
}
st "--help" --help </dev/null
echo '{"tool_name":"Bash","tool_input":{"command":"ls; id"}}' >"$tmp/hook.json"
st "hook claude" hook claude <"$tmp/hook.json"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' >"$tmp/mcp.in"
st "mcp" mcp <"$tmp/mcp.in"
st "run against a closed port" --url https://127.0.0.1:1 --ca /dev/null --cert /dev/null --key /dev/null run -- true </dev/null

# --help and usage
out=$("$C" --help); rc=$?
check_eq "client: --help exits 0" "$rc" 0
case $out in *"hook claude"*"mcp"*"SHARNESS_URL"*) ok "client: --help lists the commands and environment";;
	*) not_ok "client: --help lists the commands and environment";; esac
"$C" >/dev/null 2>&1; check_eq "client: no command is a usage error (2)" "$?" 2
"$C" frobnicate >/dev/null 2>"$tmp/err"; rc=$?
check_eq "client: unknown command exits 2" "$rc" 2
check "client: unknown command is named" grep -q "unknown command 'frobnicate'" "$tmp/err"
"$C" run --bogus -- true 2>"$tmp/err"; rc=$?
check_eq "client: run with an unknown option exits 125" "$rc" 125
check "client: unknown option is named" grep -q "unknown option '--bogus'" "$tmp/err"
"$C" run --timeout 0 -- true 2>"$tmp/err"; check_eq "client: run --timeout 0 exits 125" "$?" 125
"$C" run true 2>"$tmp/err"; check_eq "client: run without -- exits 125" "$?" 125

# Configuration errors: one line, exit 125, naming what to fix.
certs="$tmp/certs"
"$root/certs/mkcerts" "$certs" >/dev/null 2>&1
check "client: test certificates made" test -s "$certs/app.pem"
one_line() { [ "$(wc -l <"$1")" = 1 ] && grep -q '^sharness-client: ' "$1"; }

env -u SHARNESS_URL -u SHARNESS_CA -u SHARNESS_CERT -u SHARNESS_KEY HOME="$tmp/home" XDG_CONFIG_HOME= \
	"$C" --url https://127.0.0.1:1 run -- true 2>"$tmp/err"; rc=$?
check_eq "client: missing default certificates exit 125" "$rc" 125
check "client: the default CA path is named ($tmp/home/.config/sharness/ca.pem)" \
	grep -qF "$tmp/home/.config/sharness/ca.pem" "$tmp/err"
check "client: ... in one line" one_line "$tmp/err"
env -u SHARNESS_CA XDG_CONFIG_HOME="$tmp/xdg" "$C" --url https://127.0.0.1:1 run -- true 2>"$tmp/err"
check "client: XDG_CONFIG_HOME/sharness is the default directory" grep -qF "$tmp/xdg/sharness/ca.pem" "$tmp/err"

export SHARNESS_CA=$certs/ca.pem SHARNESS_CERT=$certs/app.pem SHARNESS_KEY=$certs/app.key
# a free port: bind one, note it, close it
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SHARNESS_URL=https://127.0.0.1:$port "$C" run -- true 2>"$tmp/err"; rc=$?
check_eq "client: unreachable daemon exits 125" "$rc" 125
check_eq "client: unreachable daemon message" "$(cat "$tmp/err")" \
	"sharness-client: cannot reach sharnessd at https://127.0.0.1:$port: Connection refused"
"$C" --url https://127.0.0.1:$port profiles 2>/dev/null; check_eq "client: profiles against no daemon exits 125" "$?" 125
# A daemon that cuts the connection within the handshake (stopping,
# restarting, at its connection limit) has not judged the certificate yet
# (TLS 1.3): the message says so, for an end after reading the ClientHello
# (EOF) and one before (reset).
for how in eof reset; do
	python3 - "$tmp/cut.port" "$how" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(20); c, _ = s.accept()
if sys.argv[2] == "eof":
    c.settimeout(1)
    try:
        while c.recv(65536): pass
    except socket.timeout: pass
    c.shutdown(socket.SHUT_WR)
c.close()
PY
	for _ in $(seq 1 100); do [ -s "$tmp/cut.port" ] && break; sleep 0.05; done
	"$C" --url "https://127.0.0.1:$(cat "$tmp/cut.port")" run -- true 2>"$tmp/err"; rc=$?
	wait; rm -f "$tmp/cut.port"
	check_eq "client: a connection cut in the handshake ($how) exits 125" "$rc" 125
	check_match "client: ... says the daemon closed it, not that the certificate is refused ($how)" "$(cat "$tmp/err")" \
		'^sharness-client: sharnessd at https://127\.0\.0\.1:[0-9]+ closed the connection during the TLS handshake \(.*\): it may be restarting or at its connection limit; try again$'
done
SHARNESS_URL=http://127.0.0.1:7443 "$C" run -- true 2>"$tmp/err"; rc=$?
check_eq "client: http:// URL refused with 125" "$rc" 125
check "client: http:// URL message names SHARNESS_URL" grep -q "SHARNESS_URL 'http://127.0.0.1:7443' must start with https://" "$tmp/err"
"$C" --url 'https://127.0.0.1:99999' run -- true 2>"$tmp/err"; check_eq "client: bad port refused with 125" "$?" 125
"$C" --url "https://127.0.0.1:$port" --key "$certs/person.key" run -- true 2>"$tmp/err"; rc=$?
check_eq "client: key not matching the certificate exits 125" "$rc" 125
check "client: ... says so" grep -q "does not match the certificate" "$tmp/err"
"$C" --url "https://127.0.0.1:$port" --cert "$tmp/nope.pem" run -- true 2>"$tmp/err"
check "client: unreadable --cert is named with its flag" grep -q "cannot read the client certificate $tmp/nope.pem: No such file or directory (set --cert or SHARNESS_CERT)" "$tmp/err"

head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' a | "$C" --url "https://127.0.0.1:$port" run --stdin -- cat 2>"$tmp/err"
check_eq "client: stdin over 1 MiB exits 125" "$?" 125
check "client: ... says so" grep -q "stdin is larger than the 1 MiB" "$tmp/err"
"$C" approve '../x' 2>"$tmp/err"; check_eq "client: approve with a path-like id is refused (2)" "$?" 2
