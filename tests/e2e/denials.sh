#!/usr/bin/env bash
# `denials` in every reply (issue 14): each lock that refused something
# during a run is named, with a hint that says what would work; what only
# the command's stderr tells is marked "inferred".  The client prints one
# `sharness: ...` line per denial; the audit line names the locks.
. "$(dirname "$0")/lib.sh"
jq '.name = "small" | .description = "tiny limits" | .output_max_bytes = 1024 | .pids_max = 16 | .memory_max_mb = 64 |
	.timeout_s = {"default": 10, "max": 20}' "$ROOT/profiles/analyse.json" >"$T/small.json"
E2E_PROFILES="$T/small.json"
SECRET=sk-vault-denial-secret-24680
printf '%s\n' "$SECRET" >"$T/secrets"
e2e_start "{\"secrets_file\": \"$T/secrets\"}"
locks() { jf '[.denials[] | .lock + (if .inferred then "?" else "" end)] | join(",")'; }
denial() { # DESC CMD PROFILE EXPECTED-LOCKS [EXTRA-JSON]
	run_cmd "$2" "$3" "${5:-{\}}"
	check_eq "$1" "$STATUS $(locks)" "200 $4"
}

denial "nothing refused: an empty list" 'echo hi' analyse ""
check_eq "denials is a list in every reply" "$(jf '.denials | type')" array
denial "timeout" 'sleep 5' small timeout '{"timeout_s": 1}'
check_match "timeout: the hint says how to get more" "$(jf '.denials[0].hint')" 'timeout_s'
denial "timeout of a run that writes all the time (each write goes through the actor)" \
	'while :; do echo x > busy.txt; done' build timeout '{"timeout_s": 1}'
rm -f "$WS/busy.txt"
denial "output cap" 'head -c 5000 /dev/zero | tr "\0" a' small output
denial "pids limit" 'for i in $(seq 40); do sleep 1 & done 2>/dev/null; wait' small pids
if [ "$(jf '.usage.oom_killed')" != null ]; then
	denial "memory limit (OOM kill)" 'python3 -c "b = bytearray(200 << 20); print(len(b))"' small memory
	check_match "memory: the detail names memory_max" "$(jf '.denials[0].detail')" 'memory_max \(64 MiB\)'
fi
denial "a .git (authoritative, from the actor)" 'mkdir -p sub && mkdir sub/.git 2>/dev/null; rm -rf sub' build git
check_match "git: the detail names the call and path" "$(jf '.denials[0].detail')" 'refused mkdir sub/\.git'
denial "a TCP connect without network (authoritative)" \
	'python3 -c "import socket; socket.socket().connect((\"127.0.0.1\", 22))" 2>/dev/null' analyse network
check_match "network: the hint points to build" "$(jf '.denials[0].hint')" 'build profile'
python3 -c "import socket,time,os; s=socket.socket(socket.AF_UNIX); s.bind('$WS/host.sock'); s.listen(1); time.sleep(20)" &
sock_pid=$!
for _ in $(seq 1 50); do [ -S "$WS/host.sock" ] && break; sleep 0.1; done
denial "a unix socket not the run's (authoritative)" \
	'python3 -c "import socket; socket.socket(socket.AF_UNIX).connect(\"host.sock\")" 2>/dev/null' analyse unix-socket
kill "$sock_pid" 2>/dev/null; wait "$sock_pid" 2>/dev/null; rm -f "$WS/host.sock"
denial "the proxy's refusal (authoritative)" 'curl -s -o /dev/null https://evil.example/' build proxy
check_match "proxy: the detail is the proxy's sentence" "$(jf '.denials[0].detail')" "evil.example.*not on the allowlist"
denial "a read-only workspace (inferred)" 'touch x 2>&1' analyse 'read-only?'
check_match "read-only: the hint names a writable profile" "$(jf '.denials[0].hint')" 'build or test'
denial "noexec (inferred from exit 126)" 'printf "#!/bin/sh\necho ran\n" > x.sh; chmod +x x.sh; ./x.sh; s=$?; rm -f x.sh; exit $s' build 'noexec?'
check_match "noexec: the hint names the test profile and interpreters" "$(jf '.denials[0].hint')" 'test profile.*bash x\.sh'
denial "no DNS without network (inferred)" 'curl -sS https://example.com/ 2>&1' analyse 'network?'

# A detail quotes what the run chose (a path, a socket's address, a host):
# it leaves the front as the output does, filtered and valid UTF-8, cut
# only between characters.  A stray byte would make a strict parser (the
# client's jansson, Python's) refuse the whole reply.
strict_json() { python3 -c 'import json, sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' 2>&1; }
detail_of() { jf "[.denials[] | select(.lock == \"$1\") | .detail][0]"; }
FF='d=$(printf "d\377"); mkdir -p "$d"; mkdir "$d/.git"; s=$?; rm -rf "$d"; exit $s'
run_cmd "$FF" build
check_eq "a path with byte 0xff: the reply is strict JSON" "$STATUS $(printf '%s' "$BODY" | strict_json)" "200 "
check_eq "0xff path: the byte is U+FFFD in the detail" "$(detail_of git)" \
	"refused mkdir d"$'\xef\xbf\xbd'"/.git: it would create or change a .git"
LONG='p=x$(printf "\303\251%.0s" $(seq 110))/$(printf "\303\251%.0s" $(seq 110)); mkdir -p "$p"; mkdir "$p/.git"; s=$?; rm -rf "$p"; exit $s'
run_cmd "$LONG" build
check_eq "a detail cut inside a character (past 239 bytes): strict JSON" "$STATUS $(printf '%s' "$BODY" | strict_json)" "200 "
check_eq "the cut falls before the character it would split" "$(detail_of git)" \
	"refused mkdir x$(printf '\303\251%.0s' $(seq 110))/"$'\303\251'
run_cmd "mkdir -p $SECRET; mkdir $SECRET/.git; rm -rf $SECRET" build
check_eq "a secret in a .git path is filtered" "$(detail_of git)" \
	'refused mkdir [filtered: vault key]/.git: it would create or change a .git'
check_eq "... and counted (mkdir's message on stderr is the other), nowhere in the reply" \
	"$(jf .filtered) $(grep -c vault-denial <<<"$BODY")" "2 0"
# The path reaches the front whole and is cut only once filtered: a secret
# across byte 120 (where the supervisor once cut it) or across the detail's
# own cut goes out as the marker, never as its head.
PAD=$(printf 'a%.0s' $(seq 100))
run_cmd "mkdir -p $PAD$SECRET; mkdir $PAD$SECRET/.git; rm -rf $PAD$SECRET" build
check_eq "a secret across byte 120 of a path is filtered whole" "$(detail_of git)" \
	"refused mkdir $PAD[filtered: vault key]/.git: it would create or change a .git"
check_eq "... no piece of it in the reply" "$(grep -c vault-denial <<<"$BODY")" 0
PAD=$(printf 'a%.0s' $(seq 210))
run_cmd "mkdir -p $PAD$SECRET; mkdir $PAD$SECRET/.git; rm -rf $PAD$SECRET" build
check_match "a secret across the detail's cut: the marker is cut, not the secret" "$(detail_of git)" \
	"^refused mkdir $PAD\\[filtered"
check_eq "... no piece of it in the reply" "$(grep -c -e vault-denial -e sk-vault <<<"$BODY")" 0
run_cmd "curl -s -o /dev/null https://$SECRET.example/" build
check_match "a secret in a host name the proxy refused is filtered" "$(detail_of proxy)" \
	"^the egress proxy refused: host '\[filtered: vault key\]\.example' port 443 is not on the allowlist"
check_eq "... nowhere in the reply" "$(grep -c vault-denial <<<"$BODY")" 0
# ... whole, across byte 199 of the proxy's sentence, where the front once
# cut it before the filter (review s38 M1).
LABEL=$(printf 'a%.0s' $(seq 59))
run_cmd "curl -s -o /dev/null https://$LABEL.$LABEL.$LABEL.$SECRET.example/" build
check_match "a secret across byte 199 of the proxy's refusal is filtered whole" "$(detail_of proxy)" \
	"^the egress proxy refused: host '$LABEL\\.$LABEL\\.$LABEL\\.\\[filtered"
check_eq "... no piece of it in the reply" "$(grep -c -e vault-den -e sk-vault <<<"$BODY")" 0
# The person's socket, named with the secret; the listener says when it
# listens (a line on a pipe), so nothing waits on a clock.
exec {ready}< <(exec python3 -c "import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind('$WS/$SECRET.sock'); s.listen(1); print('ready', flush=True); sys.stdin.read()" </dev/null)
listener=$!
read -r -u "$ready" line
run_cmd "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"$SECRET.sock\")' 2>/dev/null" analyse
check_eq "a secret in a unix socket's path is filtered" "$(detail_of unix-socket)" \
	"refused a connect to the unix socket [filtered: vault key].sock: its listener is not this run's"
kill "$listener" 2>/dev/null; exec {ready}<&-; rm -f "$WS/$SECRET.sock"
check_eq "the daemon's log holds none of these paths (the run chose them; only the reply's copy is filtered)" \
	"$(grep -c vault-denial "$T/daemon.log")" 0
check_match "... it names the locks" "$(cat "$T/daemon.log")" \
	"refused a write that would create or change a .git .*refused a connect to a unix socket not the run's"
# The same text in a stream's exit event and a job's status.
api POST /v0/run "$(jq -nc --arg c "$FF" '{cmd: $c, profile: "build", stream: true}')"
last=$(tail -n 1 <<<"$BODY")
check_eq "stream: the exit event is strict JSON" "$STATUS $(printf '%s' "$last" | strict_json)" "200 "
check_eq "stream: the detail has U+FFFD" "$(jq -r '.denials[0].detail' <<<"$last")" \
	"refused mkdir d"$'\xef\xbf\xbd'"/.git: it would create or change a .git"
api POST /v0/jobs "$(jq -nc --arg c "mkdir -p $SECRET; mkdir $SECRET/.git; rm -rf $SECRET; $FF" '{cmd: $c, profile: "build"}')"
job=$(jf .job_id)
for _ in $(seq 1 200); do # until it ended (bounded: 20 s)
	api GET "/v0/jobs/$job"
	[ "$(jf .state)" != running ] && break
	sleep 0.1
done
check_eq "job status: strict JSON" "$STATUS $(jf .state) $(printf '%s' "$BODY" | strict_json)" "200 exited "
check_eq "job status: both details clean" "$(jf '[.denials[].detail] | join("|")')" \
	"refused mkdir [filtered: vault key]/.git: it would create or change a .git|refused mkdir d"$'\xef\xbf\xbd'"/.git: it would create or change a .git"

# The client: one line per denial on stderr, after the command's own.
export SHARNESS_URL="https://127.0.0.1:$PORT" SHARNESS_CA="$T/certs/ca.pem" SHARNESS_CERT="$T/certs/app.pem" SHARNESS_KEY="$T/certs/app.key"
client_run run --profile build --cwd "$WS" -- 'mkdir -p sub; mkdir sub/.git'
rm -rf "$WS/sub"
check_match "client: a 'sharness: git: ...' line on stderr" "$ERR" $'Operation not permitted\nsharness: git: refused mkdir sub/\\.git: it would create or change a \\.git; runs may read repositories'
check_eq "client: the command's exit code stands" "$RC" 1
client_run run --profile build --cwd "$WS" -- "$FF"
check_eq "client: a path with byte 0xff keeps the command's exit code (was 125: reply refused)" "$RC" 1
check_match "client: ... and prints its denial" "$ERR" $'sharness: git: refused mkdir d\xef\xbf\xbd/\\.git'
client_run run --profile analyse --cwd "$WS" -- 'touch x'
check_match "client: an inferred one says so" "$ERR" 'sharness: read-only \(inferred from the output\): '
check_match "audit: the run's line names the locks" "$(tail -n 20 "$T/audit.log" | grep '"denials"' | tail -1)" '"denials":\["read-only"\]'
e2e_stop
[ "$E2E_FAILED" = 0 ]
