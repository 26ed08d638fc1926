#!/usr/bin/env bash
# The wire API of SPEC §3 through the real daemon: every field, every
# validation, every status code, and the audit log.
. "$(dirname "$0")/lib.sh"
e2e_start

run_cmd 'echo hi; echo err >&2; exit 3'
check_eq "200 for a started run" "$STATUS" 200
check_eq "stdout apart" "$(jf .stdout)" "hi"
check_eq "stderr apart" "$(jf .stderr)" "err"
check_eq "exit code" "$(jf .exit)" 3
check_eq "signal null on exit" "$(jf .signal)" null
check_eq "timed_out false" "$(jf .timed_out)" false
check_eq "profile echoed" "$(jf .profile)" analyse
check_match "policy_hash" "$(jf .policy_hash)" '^sha256:[0-9a-f]{64}$'
check_match "run_id" "$(jf .run_id)" '^[0-9a-f]{32}$'
check_match "ms is a number" "$(jf .ms)" '^[0-9]+$'
check_eq "reply keys" "$(jf 'keys|sort|join(",")')" "denials,exit,filtered,ms,policy_hash,profile,run_id,signal,stderr,stdout,timed_out,timeout_s,truncated,usage"

run_cmd 'kill -9 $$'
check_eq "killed by a signal: exit null" "$(jf .exit)" null
check_eq "killed by a signal: signal KILL" "$(jf .signal)" KILL

run_cmd 'cat hello.txt'
check_eq "cwd defaults to the first workspace" "$(jf .stdout)" "hello from the workspace"
run_cmd 'pwd' analyse "{\"cwd\": \"$WS/src/../src\"}"
check_eq "cwd inside a workspace" "$(jf .stdout)" "$WS/src"
run_cmd 'cat' analyse '{"stdin": "bytes for stdin\n"}'
check_eq "stdin is given to the command" "$(jf .stdout)" "bytes for stdin"
run_cmd 'cat; echo done' analyse
check_eq "stdin is /dev/null by default" "$(jf .stdout)" "done"
run_cmd 'echo "$GREETING $OTHER"' analyse '{"env": {"GREETING": "hello", "OTHER": "x y"}}'
check_eq "env reaches the command" "$(jf .stdout)" "hello x y"
run_cmd 'env | sort | cut -d= -f1 | tr "\n" " "'
check_eq "environment built from nothing" "$(jf .stdout)" "HOME LANG PATH PWD SHELL SHLVL TZ _ "
run_cmd 'sleep 5' analyse '{"timeout_s": 1}'
check_eq "timeout: timed_out true" "$(jf .timed_out)" true
check_eq "timeout: exit null" "$(jf .exit)" null
check_eq "timeout: signal KILL" "$(jf .signal)" KILL
check_match "timeout: reply within 1 s of the deadline" "$(jf .ms)" '^1[0-9]{3}$'
run_cmd 'true' analyse '{"timeout_s": 99999}'
check_eq "timeout capped at the profile maximum" "$(jf .timeout_s)/$(jf .timeout_capped)" "600/true"
run_cmd 'printf "\xff\xfeok"'
check_eq "invalid UTF-8 replaced" "$(jf .stdout)" $'\xef\xbf\xbd\xef\xbf\xbdok'
check_eq "invalid UTF-8 flagged" "$(jf .invalid_utf8_replaced)" true
run_cmd 'head -c 3000000 /dev/zero | tr "\0" a; echo; echo END'
check_eq "output cap: truncated" "$(jf .truncated)" true
check_match "output cap: head, marker, tail" "$(jf '.stdout|length')" '^10[0-9]{5}$'
check_eq "output cap: the tail survives" "$(jf '.stdout|split("\n")|.[-2]')" END
check "output cap: marker" grep -q 'bytes truncated' <<<"$(jf .stdout)"

# 400s: malformed JSON, wrong types, unknown fields, dangerous env names.
api POST /v0/run '{"cmd": '
check_eq "400 bad JSON" "$STATUS/$(jf .error.code)" 400/bad_json
api POST /v0/run '[1,2]'
check_eq "400 not an object" "$STATUS/$(jf .error.code)" 400/bad_json
api POST /v0/run '{"cmd": 5}'
check_eq "400 wrong type" "$STATUS/$(jf .error.code)" 400/bad_field
api POST /v0/run '{"cmd": ""}'
check_eq "400 empty cmd" "$STATUS/$(jf .error.code)" 400/bad_field
api POST /v0/run '{}'
check_eq "400 missing cmd" "$STATUS/$(jf .error.code)" 400/missing_field
api POST /v0/run '{"cmd": "true", "colour": "blue"}'
check_eq "400 unknown field" "$STATUS/$(jf .error.code)" 400/unknown_field
check "unknown field named" grep -q colour <<<"$(jf .error.message)"
api POST /v0/run '{"cmd": "a\u0000b"}'
check_eq "400 NUL in a string" "$STATUS/$(jf .error.code)" 400/bad_json
for name in PATH LD_PRELOAD BASH_ENV HOME SHELL IFS NODE_OPTIONS PYTHONSTARTUP; do
	api POST /v0/run "{\"cmd\": \"true\", \"env\": {\"$name\": \"x\"}}"
	check_eq "400 dangerous env $name" "$STATUS/$(jf .error.code)" 400/dangerous_env
done
api POST /v0/run '{"cmd": "true", "env": {"1BAD": "x"}}'
check_eq "400 invalid env name" "$STATUS/$(jf .error.code)" 400/bad_env
api POST /v0/run '{"cmd": "true", "timeout_s": -1}'
check_eq "400 negative timeout" "$STATUS/$(jf .error.code)" 400/bad_field
api POST /v0/run '{"cmd": "true", "cwd": "relative/dir"}'
check_eq "400 relative cwd" "$STATUS/$(jf .error.code)" 400/bad_cwd

# 404s
run_cmd true anlyse
check_eq "404 unknown profile" "$STATUS/$(jf .error.code)" 404/unknown_profile
check_eq "404 message names it" "$(jf .error.message)" "There is no profile named 'anlyse'; GET /v0/profiles lists them."
run_cmd true analyse '{"cwd": "/etc"}'
check_eq "404 cwd outside the workspaces" "$STATUS/$(jf .error.code)" 404/cwd_outside_workspace
ln -s /etc "$WS/etc-link"
run_cmd true analyse "{\"cwd\": \"$WS/etc-link\"}"
check_eq "404 cwd symlink out of the workspace" "$STATUS/$(jf .error.code)" 404/cwd_outside_workspace
# A link that leaves the workspace and comes back must not tell whether
# the host path on the way exists: both are refused alike.
ln -s "/root/../$WS" "$WS/there-and-back"
ln -s "/no-such-dir/../$WS" "$WS/nowhere-and-back"
run_cmd true analyse "{\"cwd\": \"$WS/there-and-back\"}"
a="$STATUS/$(jf .error.code)"
run_cmd true analyse "{\"cwd\": \"$WS/nowhere-and-back\"}"
check_eq "cwd links through host paths are refused alike (no probing)" "$a $STATUS/$(jf .error.code)" "404/cwd_outside_workspace 404/cwd_outside_workspace"
api GET /v0/nothing
check_eq "404 unknown path" "$STATUS/$(jf .error.code)" 404/not_found

# 405, 413, 415
api GET /v0/run
check_eq "405 wrong method" "$STATUS/$(jf .error.code)" 405/method_not_allowed
api POST /v0/policy '{}'
check_eq "405 POST on a GET endpoint" "$STATUS" 405
allow() { # METHOD PATH -> "STATUS ALLOW"
	local st
	st=$(curl -s -o /dev/null -D "$T/headers" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
		--key "$T/certs/app.key" -X "$1" "$SHARNESS_URL$2")
	echo "$st $(tr -d '\r' <"$T/headers" | sed -n 's/^[Aa]llow: //p')"
}
jid=0123456789abcdef0123456789abcdef
check_eq "405 Allow: every method of the path" \
	"$(allow GET /v0/run), $(allow PUT /v0/policy), $(allow PUT /v0/jobs), $(allow PUT /v0/jobs/$jid), $(allow DELETE /v0/jobs/$jid/output), $(allow GET /v0/approvals/$jid)" \
	"405 POST, 405 GET, 405 GET, POST, 405 GET, DELETE, 405 GET, 405 POST"
check_eq "a job path that is no endpoint stays 404" "$(allow DELETE /v0/jobs/$jid/x) $(allow GET /v0/jobs/$jid/x)" "404  404 "
head -c 3000000 /dev/zero | tr '\0' 'a' | sed 's/^/{"cmd":"/; s/$/"}/' >"$T/big.json"
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: application/json' --data-binary @"$T/big.json" "$SHARNESS_URL/v0/run")
check_eq "413 body too large" "$STATUS" 413
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
	--data-binary @"$T/big.json" "$SHARNESS_URL/v0/run")
check_eq "413 chunked body too large" "$STATUS" 413
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: text/plain' -d '{"cmd":"true"}' "$SHARNESS_URL/v0/run")
check_eq "415 wrong content type" "$STATUS" 415

# GET endpoints
api GET /v0/profiles
check_eq "profiles 200" "$STATUS" 200
check_eq "profiles listed" "$(jf '[.profiles[].name]|join(",")')" "admin,analyse,build,test"
check_match "profile hash" "$(jf '.profiles[0].policy_hash')" '^sha256:[0-9a-f]{64}$'
api GET /v0/policy person
check_eq "policy readable by person" "$STATUS" 200
check_match "policy hash" "$(jf .policy_hash)" '^sha256:[0-9a-f]{64}$'
check_eq "policy lists the uid range" "$(jf .uid_range.first)" "$UID_FIRST"
check_match "policy lists the Landlock ABI" "$(jf .kernel.landlock_abi)" '^[0-9]+$'
check "policy lists seccomp denials" grep -q ptrace <<<"$(jf '.seccomp_denied|join(",")')"
check "policy never lists vault values" test "$(jf .filter.vault_keys)" -ge 0

# Concurrent runs: all succeed, each with its own uid.
pids=()
for i in 1 2 3 4 5 6; do
	(api POST /v0/run "{\"cmd\": \"sleep 0.5; echo run$i; id -u\"}"; echo "$STATUS $(jf .stdout | tr '\n' ' ')" >"$T/conc.$i") &
	pids+=($!)
done
wait "${pids[@]}"
pids=()
got=$(cat "$T"/conc.* | awk '{print $1}' | sort -u)
check_eq "concurrent runs all 200" "$got" 200
check_eq "concurrent runs each had their own uid" "$(cat "$T"/conc.* | awk '{print $3}' | sort -u | wc -l)" 6

# Beyond max_runs (8): 10 slow runs at once; two wait in the queue and all
# are answered (queue.sh covers a full queue's 503 and Retry-After).
for i in $(seq 1 10); do
	(curl -s -o /dev/null -D "$T/hdr.$i" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
		--key "$T/certs/app.key" -H 'Content-Type: application/json' -d '{"cmd":"sleep 1"}' \
		"$SHARNESS_URL/v0/run" >"$T/cap.$i"; echo >>"$T/cap.$i") &
	pids+=($!)
done
wait "${pids[@]}"
check_eq "beyond max_runs: the queue answers all 10" "$(cat "$T"/cap.* | sort | uniq -c | awk '{print $2":"$1}' | tr '\n' ' ')" "200:10 "

# The audit log: one JSON line per request with the fields of SPEC §11.
lines=$(wc -l <"$T/audit.log")
check "audit lines are JSON" jq -e . "$T/audit.log"
run_cmd 'echo audited'
sleep 0.1
check_eq "a run has two audit lines: before it starts, and its end" "$(wc -l <"$T/audit.log")" $((lines + 2))
last=$(tail -1 "$T/audit.log")
first=$(tail -2 "$T/audit.log" | head -1)
check_eq "the start line names the run before it runs" "$(jq -r '[.event, .run_id, .cmd, .peer_cn, .timeout_s] | map(tostring) | join(" ")' <<<"$first")" \
	"run_started $(jq -r .run_id <<<"$last") echo audited app 60"
check_eq "audit fields" "$(jq -r '[.run_id!=null, .peer_cn, .peer_role, .profile, (.policy_hash|startswith("sha256:")), .cmd, .cwd, (.uid>'"$UID_FIRST"'), .exit, .timed_out, (.ms>=0), .filtered, .truncated]|map(tostring)|join(" ")' <<<"$last")" \
	"true app app analyse true echo audited $WS true 0 false true 0 false"

# Nothing is left behind.
sleep 0.3
check_settled "nothing of the runs left (processes, cgroups) but the waiting sandboxes"
check "daemon still serving" api GET /v0/policy

# Client text echoed in errors and the audit log stays valid UTF-8, even cut
# at a byte limit or taken from a percent-encoded URL.
long=$(printf 'a%.0s' $(seq 1 63))é
api POST /v0/run "{\"cmd\": \"true\", \"profile\": \"$long\"}"
check "an error quoting a cut multi-byte name is valid UTF-8 JSON" python3 -c 'import json,sys; json.loads(sys.argv[1].encode("utf-8","surrogateescape").decode("utf-8"))' "$BODY"
api GET '/v0/%FF%FEx'
sleep 0.1
check "an audit line for a non-UTF-8 path is valid JSON" python3 -c 'import json,sys; [json.loads(l.encode("utf-8","surrogateescape").decode("utf-8")) for l in open(sys.argv[1], encoding="utf-8", errors="surrogateescape")]' "$T/audit.log"

# A command that closes its own stdout and stderr still dies with its client.
curl -s -m 2 -o /dev/null --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" --key "$T/certs/app.key" \
	-H 'Content-Type: application/json' -d '{"cmd": "exec >&- 2>&-; sleep 30", "timeout_s": 30}' "$SHARNESS_URL/v0/run"
sleep 1.5
check_eq "closed stdout/stderr: the run died with its client" "$(ps -eo uid=,comm= | awk -v f=$UID_FIRST '$1>f && $1<f+4096 && $2=="sleep"' | wc -l)" 0
