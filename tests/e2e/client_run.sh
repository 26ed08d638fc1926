#!/bin/bash
# client_run.sh - `sharness-client run` and the read/approve commands against
# the real daemon: exit codes 0/N/124/125/128+N, stdout/stderr separation,
# stdin, cwd, word joining, certificate errors, readable and --json output,
# the approval flow, and no fork/exec while it talks to the daemon.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
C=$CLIENT  # lib.sh: $CLIENT or build/sharness-client
tmp=$T/client  # client_run's files (lib.sh); inside $T, removed at exit
mkdir -p "$tmp"

e2e_start
cd "$WS" || exit 1

client_run run -- true
check_eq "run: true exits 0" "$RC" 0
check_eq "run: true prints nothing" "$OUT$ERR" ""
client_run run -- 'echo out; echo err >&2; exit 3'
check_eq "run: exit 3 is passed through" "$RC" 3
check_eq "run: stdout goes to stdout" "$OUT" $'out\n'
check_eq "run: stderr goes to stderr" "$ERR" $'err\n'
client_run run -- exit 255
check_eq "run: exit 255 is passed through" "$RC" 255
client_run run -- echo a   b "c  d"
check_eq "run: words after -- are joined by single spaces (as ssh)" "$OUT" $'a b c d\n'
client_run run -- 'printf "%s\n" "$((6*7))" "$0"'
check_eq "run: the text is run by bash -c inside the sandbox" "$OUT" $'42\nbash\n'
client_run run -- pwd
check_eq "run: cwd defaults to the client's working directory" "$OUT" "$WS"$'\n'
mkdir -p "$WS/sub dir"
client_run run --cwd "$WS/sub dir" -- pwd
check_eq "run: --cwd" "$OUT" "$WS/sub dir"$'\n'
(cd "$WS/sub dir" && "$C" run -- pwd >"$tmp/o2" 2>&1)
check_eq "run: cwd follows the client's own cwd" "$(cat "$tmp/o2")" "$WS/sub dir"
printf 'line1\nzwei é\n' | "$C" run --stdin -- 'cat; echo end' >"$tmp/out"
check_eq "run: --stdin is the command's stdin" "$(cat "$tmp/out")" $'line1\nzwei é\nend'
echo "not sent" | "$C" run -- 'cat; echo eof' >"$tmp/out"
check_eq "run: without --stdin the command's stdin is empty" "$(cat "$tmp/out")" "eof"
client_run run --env GREETING=hello -- 'echo "$GREETING"'
check_eq "run: --env NAME=VALUE reaches the command" "$OUT" $'hello\n'
"$C" run -- 'printf "a\tb é✓ 🚀\n"' >"$tmp/out"
check_eq "run: UTF-8 output arrives byte for byte" "$(od -An -c "$tmp/out" | tr -s ' ')" \
	"$(printf 'a\tb é✓ 🚀\n' | od -An -c | tr -s ' ')"
client_run run -- 'kill -KILL $$'
check_eq "run: killed by SIGKILL exits 137 (128+9)" "$RC" 137
client_run run -- 'kill -TERM $$'
check_eq "run: killed by SIGTERM exits 143 (128+15)" "$RC" 143
start=$(date +%s)
client_run run --timeout 1 -- 'echo started; sleep 30'
check_eq "run: timeout exits 124" "$RC" 124
check "run: ... within a few seconds" test $(( $(date +%s) - start )) -le 5
client_run run --profile nosuchprofile -- true
check_eq "run: unknown profile exits 125" "$RC" 125
check "run: ... with the daemon's message on one line" \
	bash -c "[ \"\$(wc -l <'$tmp/err')\" = 1 ] && grep -q \"^sharness-client: .*nosuchprofile.*(HTTP 404\" '$tmp/err'"
client_run run --cwd /nonexistent-dir -- true
check_eq "run: cwd outside the workspaces exits 125" "$RC" 125
check "run: ... with a message" grep -q '^sharness-client: .*(HTTP 4' "$tmp/err"
client_run run --env PATH=/tmp -- true
check_eq "run: a dangerous env name is refused with 125" "$RC" 125
check "run: ... naming the key" grep -q 'PATH' "$tmp/err"
client_run run -- 'echo $SHARNESS_KEY $SHARNESS_CERT'
check_eq "run: the client's own environment does not reach the command" "$OUT" $'\n'

# Certificates
client_run --ca "$T/certs/app.pem" run -- true
check_eq "run: a CA that did not sign the server exits 125" "$RC" 125
check "run: ... saying the server certificate failed verification" grep -q "certificate failed verification" "$tmp/err"
"$root/certs/mkcerts" "$tmp/rogue" >/dev/null 2>&1
client_run --cert "$tmp/rogue/app.pem" --key "$tmp/rogue/app.key" run -- true
check_eq "run: a client certificate from another CA exits 125" "$RC" 125
check "run: ... in one clear line" bash -c "[ \"\$(wc -l <'$tmp/err')\" = 1 ] && grep -q '^sharness-client: ' '$tmp/err'"
port=${SHARNESS_URL##*:}
client_run --url "https://localhost:$port" run -- echo by-name
check_eq "run: https://localhost:PORT verifies the DNS SAN" "$OUT$RC" $'by-name\n0'

# strace: the messenger never forks or execs, even with a command that does.
strace -f -qq -e trace=execve,execveat,clone,clone3,fork,vfork -o "$tmp/st" "$C" run -- 'sh -c "echo child"; (echo sub)' >"$tmp/out" 2>&1
check_eq "run under strace: output arrives" "$(cat "$tmp/out")" $'child\nsub'
check_eq "run under strace: exactly one execve (its own), no new process (threads only)" \
	"$(grep -cE 'execve' "$tmp/st") $(grep -E 'clone|fork' "$tmp/st" | grep -vc 'CLONE_THREAD')" "1 0"

# OpenSSL's config file could load engines or providers and change the TLS
# settings from outside: the client never reads it (tls.h, tls_lib_init),
# neither the one OPENSSL_CONF names nor the built-in one.
printf 'openssl_conf = bad\n' >"$T/openssl.cnf"
cnf_unread() { # ARGS...: the client under strace; true when it opened no config file
	OPENSSL_CONF=$T/openssl.cnf strace -f -qq -e trace=open,openat -o "$tmp/st.cnf" "$C" "$@" >/dev/null 2>&1
	! grep -q 'openssl\.cnf' "$tmp/st.cnf"
}
check "run over its own TLS connection reads no openssl.cnf" cnf_unread run -- true
check "doctor reads no openssl.cnf" cnf_unread doctor

# Reading commands
client_run profiles
check_eq "profiles: exit 0" "$RC" 0
check "profiles: readable list names analyse with its policy hash" bash -c "grep -q '^analyse ' '$tmp/out' && grep -q 'policy sha256:' '$tmp/out'"
client_run profiles --json
check_eq "profiles --json: the daemon's JSON" "$(jq -r '[.profiles[].name] | index("analyse") != null' "$tmp/out")" true
api GET /v0/profiles
check_eq "profiles --json equals GET /v0/profiles" "$(jq -cS . "$tmp/out")" "$(jq -cS . <<<"$BODY")"
client_run policy
check "policy: exit 0 with an indented policy_hash" bash -c "[ $RC = 0 ] && grep -q '^  \"policy_hash\": \"sha256:' '$tmp/out'"
client_run policy --json
check_eq "policy --json: one line of JSON with policy_hash" "$(jq -r '.policy_hash | startswith("sha256:")' "$tmp/out")" true

