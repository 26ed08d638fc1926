#!/usr/bin/env bash
# Approval for admin (SPEC §9) through the real daemon with curl: the full
# cycle, wrong role, deny, expiry, replay, withdrawal, and an approved run
# that still has no privileges.
. "$(dirname "$0")/lib.sh"
e2e_start '{"approval_timeout_s": 3}'

start_body() { # BODY -> background request; its status/body land in $T/adm.*
	curl -s -o "$T/adm.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
		--key "$T/certs/app.key" -H 'Content-Type: application/json' -d "$1" "$SHARNESS_URL/v0/run" >"$T/adm.status" &
	ADM=$!
}
start_admin() { start_body "$(jq -nc --arg c "$1" '{cmd: $c, profile: "admin"}')"; } # CMD
pending_id() { # CMD -> the id of the pending run with that cmd
	local id=
	for _ in $(seq 1 50); do
		api GET /v0/approvals '' person
		id=$(printf '%s' "$BODY" | jq -r --arg c "$1" '.approvals[] | select(.cmd == $c) | .id')
		[ -n "$id" ] && break
		sleep 0.1
	done
	printf '%s' "$id"
}

start_admin 'id -u; su -c "rm -rf /" root </dev/null; echo "su=$?"; python3 -c "import os; os.setuid(0)" 2>&1 | tail -1'
id=$(pending_id 'id -u; su -c "rm -rf /" root </dev/null; echo "su=$?"; python3 -c "import os; os.setuid(0)" 2>&1 | tail -1')
check_match "a waiting admin run is listed" "$id" '^[0-9a-f]{32}$'
api GET /v0/approvals '' person
check_eq "the listing names requester, role, profile, cwd" "$(jf '.approvals[0] | [.requester, .requester_role, .profile, .cwd, (.age_s >= 0)] | map(tostring) | join(" ")')" "app app admin $WS true"
check "the run is still waiting" kill -0 "$ADM"
api POST "/v0/approvals/$id" '{"decision": "allow"}' app
check_eq "app may not decide" "$STATUS/$(jf .error.code)" 403/role_not_allowed
api POST "/v0/approvals/$id" '{"decision": "allow"}' orchestrator
check_eq "orchestrator may not decide" "$STATUS/$(jf .error.code)" 403/role_not_allowed
api POST "/v0/approvals/$id" '{"decision": "maybe"}' person
check_eq "a bad decision is refused" "$STATUS/$(jf .error.code)" 400/bad_decision
api POST "/v0/approvals/$id" '{"decision": "allow"}' person
check_eq "person allows" "$STATUS/$(jf .decision)" 200/allow
wait "$ADM"
check_eq "the approved run ran" "$(cat "$T/adm.status")" 200
out=$(jq -r .stdout "$T/adm.body")
check_match "approved run: still not root" "$(head -1 <<<"$out")" '^[1-9][0-9]{6,}$'
check "approved run: su fails (no privileges)" grep -q '^su=1$' <<<"$out"
check "approved run: setuid(0) fails" grep -q 'Operation not permitted' <<<"$out"
api POST "/v0/approvals/$id" '{"decision": "allow"}' person
check_eq "an approval is single-use (replay refused)" "$STATUS/$(jf .error.code)" 404/unknown_approval

start_admin 'echo should-not-run'
id=$(pending_id 'echo should-not-run')
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
check_eq "person denies" "$STATUS/$(jf .decision)" 200/deny
wait "$ADM"
check_eq "denied: 403 approval_denied" "$(cat "$T/adm.status")/$(jq -r .error.code "$T/adm.body")" 403/approval_denied

start_admin 'echo too-late'
id=$(pending_id 'echo too-late')
wait "$ADM"
check_eq "expired: 403 approval_expired" "$(cat "$T/adm.status")/$(jq -r .error.code "$T/adm.body")" 403/approval_expired
api POST "/v0/approvals/$id" '{"decision": "allow"}' person
check_eq "an expired approval cannot be decided" "$STATUS" 404

start_admin 'echo withdrawn'
id=$(pending_id 'echo withdrawn')
kill "$ADM"
wait "$ADM" 2>/dev/null
sleep 0.5
api GET /v0/approvals '' person
check_eq "a requester hanging up withdraws the approval" "$(jf '.approvals | length')" 0
api POST "/v0/approvals/$id" '{"decision": "allow"}' person
check_eq "a withdrawn approval cannot be decided" "$STATUS" 404
api POST /v0/approvals/0123 '{"decision": "allow"}' person
check_eq "unknown id: 404" "$STATUS/$(jf .error.code)" 404/unknown_approval
check_eq "audit: decisions logged" "$(grep -c '"decision":"allow"' "$T/audit.log")" 1

# The person sees the whole request: stdin (filtered preview and size), the
# extra environment (filtered) and the timeout, not only cmd.
body=$(jq -nc --arg ws "$WS" '{cmd: "bash", profile: "admin", stdin: "echo from stdin > planted\n", env: {FOO: "bar"}, timeout_s: 9}')
start_body "$body"
id=$(pending_id 'bash')
api GET /v0/approvals '' person
entry=$(printf '%s' "$BODY" | jq -c --arg id "$id" '.approvals[] | select(.id == $id)')
check_eq "the approver sees stdin, its size, env and timeout" \
	"$(jq -r '[.stdin, .stdin_bytes, (.env | join(",")), .timeout_s] | map(tostring) | join("|")' <<<"$entry")" \
	$'echo from stdin > planted\n|26|FOO=bar|9'
"$CLIENT" --cert "$T/certs/person.pem" --key "$T/certs/person.key" approvals >"$T/list.txt" 2>&1
check "sharness-client approvals shows them too" grep -q '^    env FOO=bar$' "$T/list.txt"
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
wait "$ADM"

# The preview is the first 4 KiB of stdin as filtered whole: a secret across
# that byte is no match once cut, and its head went out to the agent's
# listing (review s37 front 3).
gh=$(python3 -c '
import random, zlib
A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
b = "".join(random.choice(A) for _ in range(30)); v = zlib.crc32(b.encode()); s = ""
for _ in range(6): s = A[v % 62] + s; v //= 62
print("ghp_" + b + s)')
body=$(jq -nc --arg s "$(printf '%4079s' '' | tr ' ' x) $gh tail" '{cmd: "cat >/dev/null", profile: "admin", stdin: $s}')
start_body "$body"
id=$(pending_id 'cat >/dev/null')
api GET /v0/approvals '' app
check_eq "a secret across the preview's end: the agent's listing shows none of it" \
	"$(jf '.approvals[0].stdin' | grep -c "${gh:0:12}") $(jf '.approvals[0].stdin_bytes')" "0 4125"
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
wait "$ADM"

# --- the approver sees the exact command (SPEC §15.2, issue 13) ---------------
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
PC=(--cert "$T/certs/person.pem" --key "$T/certs/person.key")
# (a) A carriage return and an erase-line sequence must not paint "ls -la"
# over the real command on the approver's terminal.
spoof=$'touch SPOOFED_RAN #\r\e[2K    cmd ls -la'
start_admin "$spoof"
id=$(pending_id "$spoof")
check_match "spoof: the run waits" "$id" '^[0-9a-f]{32}$'
"$CLIENT" "${PC[@]}" approvals >"$T/list.txt" 2>&1
check "spoof: no control character reaches the terminal" bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$T/list.txt'"
check "spoof: the approver reads the whole command, escapes visible" \
	grep -qxF '    cmd touch SPOOFED_RAN #\r\e[2K    cmd ls -la' "$T/list.txt"
check "spoof: and its SHA-256" grep -qxF "    cmd sha256 $(sha "$spoof")" "$T/list.txt"
api GET /v0/approvals '' person
check_eq "spoof: the listing's cmd_sha256 is the exact command's" \
	"$(jf '.approvals[0].cmd_sha256')" "$(sha "$spoof")"
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
wait "$ADM"
# Bidi overrides (Trojan Source) and other invisible characters are named.
bidi=$'echo safe # \u202e\u2066 x\u200b'
start_admin "$bidi"
id=$(pending_id "$bidi")
"$CLIENT" "${PC[@]}" approvals >"$T/list.txt" 2>&1
check "bidi: U+202E, U+2066, U+200B shown as escapes" grep -qxF '    cmd echo safe # \u202e\u2066 x\u200b' "$T/list.txt"
"$CLIENT" "${PC[@]}" approvals --json >"$T/list.json" 2>&1
check "bidi: approvals --json prints them as \\u escapes too" bash -c "! grep -q \$'\u202e' '$T/list.json' && grep -qiF '\\u202e' '$T/list.json'"
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
wait "$ADM"

# (b) A script inside a block that looks like an OpenSSH key: the filter
# hides part of it, the person must still see all of it.
b64=$(printf 'printf PWNED > README.md; rm -f src/main.c' | base64 -w0)
keyed=$(printf 'git status #-----BEGIN OPENSSH PRIVATE KEY-----\necho %s > /tmp/p; base64 -d /tmp/p > /tmp/q; bash /tmp/q\n#-----END OPENSSH PRIVATE KEY-----' "$b64")
start_admin "$keyed"
id=$(pending_id "$keyed")
check_match "keyed: the person's listing has the exact command" "$id" '^[0-9a-f]{32}$'
api GET /v0/approvals '' person
entry=$(printf '%s' "$BODY" | jq -c --arg id "$id" '.approvals[] | select(.id == $id)')
check_eq "keyed: person: cmd raw, its SHA-256, the filtered text beside it" \
	"$(jq -r '[.cmd_shown, .cmd_sha256, (.cmd_filtered_parts >= 1), (.cmd_filtered | contains("[filtered: openssh-private-key]"))] | map(tostring) | join(" ")' <<<"$entry")" \
	"raw $(sha "$keyed") true true"
api GET /v0/approvals '' app
entry=$(printf '%s' "$BODY" | jq -c --arg id "$id" '.approvals[] | select(.id == $id)')
check_eq "keyed: app: only the filtered text, marked so, and the SHA-256" \
	"$(jq -r '[.cmd_shown, .cmd_sha256, (.cmd | contains("[filtered: openssh-private-key]")), (.cmd | contains("'"$b64"'")), has("cmd_filtered")] | map(tostring) | join(" ")' <<<"$entry")" \
	"filtered $(sha "$keyed") true false false"
"$CLIENT" "${PC[@]}" approvals >"$T/list.txt" 2>&1
check "keyed: sharness-client approvals shows the hidden script to the person" \
	grep -qxF "      | echo $b64 > /tmp/p; base64 -d /tmp/p > /tmp/q; bash /tmp/q\\n" "$T/list.txt"
check "keyed: ... and says what the filter would hide" grep -q '^    filter: 1 part(s) of cmd look like secrets' "$T/list.txt"
"$CLIENT" approvals >"$T/list.app.txt" 2>&1
check "keyed: app's client view says the command is filtered" grep -q '^    cmd (filtered: 1 part(s)' "$T/list.app.txt"
check "the GET /v0/approvals audit line carries no command" bash -c "! grep '\"path\":\"/v0/approvals\"' '$T/audit.log' | grep -qF '$b64'"
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
wait "$ADM"
check_eq "audit: the denied run's line records the exact command's SHA-256" \
	"$(jq -r --arg id "$id" 'select(.approval_id == $id and .path == "/v0/run") | .cmd_sha256' "$T/audit.log")" "$(sha "$keyed")"

# --- the audit log records the exact command's SHA-256 beside the filtered
# text, in every line about a run, in every profile (SPEC §15.2) -------------
for prof in analyse build; do
	run_cmd "$keyed" "$prof"
	rid=$(jf .run_id)
	check_eq "audit ($prof): run_started and the final line both carry cmd_sha256" \
		"$(jq -r --arg r "$rid" 'select(.run_id == $r) | "\(.event // "final") \(.cmd_sha256) \(.cmd | contains("[filtered:"))"' "$T/audit.log" | sort | tr '\n' ,)" \
		"final $(sha "$keyed") true,run_started $(sha "$keyed") true,"
done

# --- another identity sees none of an agent's pending runs, nor takes its
# request_id (review s37: it copied the nonce onto its own admin run, and the
# first agent's client printed that run's approval id for the person) -------
"$ROOT/certs/mkcerts" "$T/certs" --client agent2 app >/dev/null
admin_as() { # CERT REQUEST-ID CMD -> status and body in $T/as.*
	curl -s -o "$T/as.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/$1.pem" \
		--key "$T/certs/$1.key" -H "Sharness-Request-Id: $2" -H 'Content-Type: application/json' \
		-d "$(jq -nc --arg c "$3" '{cmd: $c, profile: "admin"}')" "$SHARNESS_URL/v0/run" >"$T/as.status"
}
rid=0123456789abcdef0123456789abcdef
admin_as app "$rid" 'echo mine' &
MINE=$!
id=$(pending_id 'echo mine')
api GET /v0/approvals '' agent2
check_eq "another identity: its listing holds none of app's pending runs" "$STATUS $(jf '.approvals | length')" "200 0"
api GET /v0/approvals '' app
check_eq "... the requester's own holds its run and its request_id" "$(jf '[.approvals[] | .id + " " + .request_id] | join(",")')" "$id $rid"
admin_as app "$rid" 'echo mine again'
check_eq "a second run of the certificate with that request_id: 409 duplicate_request_id, nothing more waits" \
	"$(cat "$T/as.status") $(jq -r .error.code "$T/as.body") $(api GET /v0/approvals '' person; jf '.approvals | length')" \
	"409 duplicate_request_id 1"
admin_as agent2 "$rid" 'echo B-RAN-THIS-AS-ADMIN' &
THEIRS=$!
theirs=$(pending_id 'echo B-RAN-THIS-AS-ADMIN')
api GET /v0/approvals '' app
check_eq "another identity's run with that request_id waits apart: app's listing still holds only its own" \
	"$(jf '[.approvals[] | .id] | join(",")')" "$id"
api POST "/v0/approvals/$theirs" '{"decision": "deny"}' person
api POST "/v0/approvals/$id" '{"decision": "deny"}' person
wait "$MINE" "$THEIRS"

# --- capacity: nobody is asked about a run that cannot even queue; an
# approved run waits in the queue for a slot instead of losing its approval ---
e2e_stop
e2e_start '{"approval_timeout_s": 10, "max_runs": 1, "queue_max": 1}'
run_bg() { # CMD: an analyse run in the background that holds the only slot
	curl -s -o /dev/null --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" --key "$T/certs/app.key" \
		-H 'Content-Type: application/json' -d "$(jq -nc --arg c "$1" '{cmd: $c}')" "$SHARNESS_URL/v0/run" &
	BG=$!
	for _ in $(seq 1 50); do [ "$(range_procs)" -gt "$(warm_procs)" ] && break; sleep 0.05; done
}
run_bg 'sleep 2'
BG1=$BG
# A second run fills the queue (queue_max 1) behind the one holding the slot.
curl -s -o /dev/null --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" --key "$T/certs/app.key" \
	-H 'Content-Type: application/json' -d '{"cmd":"true"}' "$SHARNESS_URL/v0/run" &
BG2=$!
sleep 0.5
start_admin 'echo not-asked'
wait "$ADM"
check_eq "queue full: an admin run gets 503 at once" "$(cat "$T/adm.status")/$(jq -r .error.code "$T/adm.body")" 503/at_capacity
api GET /v0/approvals '' person
check_eq "queue full: no person was asked" "$(jf '.approvals | length')" 0
wait "$BG1" "$BG2"

start_admin 'echo queued-after-approval'
id=$(pending_id 'echo queued-after-approval')
run_bg 'sleep 2'
check "the only slot is busy when the person approves" test "$(range_procs)" -gt "$(warm_procs)"
t0=$(date +%s.%N)
api POST "/v0/approvals/$id" '{"decision": "allow"}' person
check_eq "approved while the only slot is busy" "$STATUS/$(jf .decision)" 200/allow
wait "$ADM"
waited=$(echo "$(date +%s.%N) - $t0" | bc)
check_eq "the approved run waited for the slot and ran" \
	"$(cat "$T/adm.status")/$(jq -r .stdout "$T/adm.body")" 200/queued-after-approval
check "it waited for the 'sleep 2' holding the slot (${waited} s after the approval)" \
	awk -v w="$waited" 'BEGIN { exit !(w >= 1.0) }'
wait "$BG"

# One certificate's runs take at most a quarter of the places (max_runs 1
# here: one), so one identity cannot fill them for the others.
start_admin 'echo first-of-app'
first=$(pending_id 'echo first-of-app')
admin_as app 0123456789abcdef0123456789abcde0 'echo second-of-app'
check_eq "a certificate's runs past a quarter of the approval places: 429 too_many_approvals" \
	"$(cat "$T/as.status") $(jq -r .error.code "$T/as.body")" "429 too_many_approvals"
admin_as agent2 0123456789abcdef0123456789abcde1 'echo of-agent2' &
OTHER=$!
check_match "... another identity's run still waits for the person" "$(pending_id 'echo of-agent2')" '^[0-9a-f]{32}$'
api POST "/v0/approvals/$(pending_id 'echo of-agent2')" '{"decision": "deny"}' person
api POST "/v0/approvals/$first" '{"decision": "deny"}' person
wait "$ADM" "$OTHER"

# --- a cwd that is not UTF-8 is refused at once (400 bad_cwd): it never
# reaches the listing, which would be no JSON then, and the person would see
# no pending run at all (approval_timeout_s 10 here: the legit run waits
# while the checks run) ----------------------------------------------------------
strict_json() { python3 -c 'import json, sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' 2>&1; }
start_admin 'echo legit-pending'
legit=$(pending_id 'echo legit-pending')
printf '{"cmd": "echo bad-cwd", "profile": "admin", "cwd": "%s/\xff"}' "$WS" >"$T/badcwd.json"
curl -s -o "$T/badcwd.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: application/json' --data-binary @"$T/badcwd.json" \
	"$SHARNESS_URL/v0/run" >"$T/badcwd.status" &
bad=$!
# Until its reply came, or the listing holds it (which an old build does).
for _ in $(seq 1 50); do
	kill -0 "$bad" 2>/dev/null || break
	api GET /v0/approvals '' person
	grep -aq bad-cwd <<<"$BODY" && break
	sleep 0.1
done
api GET /v0/approvals '' person
check_eq "non-UTF-8 cwd: the listing stays strict JSON" "$STATUS $(printf '%s' "$BODY" | strict_json)" "200 "
check_eq "... and shows the pending run, not the refused one" "$(jf '[.approvals[].cmd] | join(",")')" "echo legit-pending"
SHARNESS_CERT=$T/certs/person.pem SHARNESS_KEY=$T/certs/person.key client_run approvals
check_eq "sharness-client approvals reads it (exit 0, the pending run)" "$RC $(grep -c 'echo legit-pending' <<<"$OUT")" "0 1"
wait "$bad"
check_eq "non-UTF-8 cwd: 400 bad_cwd naming the field" \
	"$(cat "$T/badcwd.status") $(jq -r '.error | .code + " " + .message' "$T/badcwd.body")" \
	"400 bad_cwd Field 'cwd' must be valid UTF-8."
api POST "/v0/approvals/$legit" '{"decision": "deny"}' person
wait "$ADM"
