#!/bin/bash
# client_approve.sh - the approval flow (SPEC §9) driven by sharness-client:
# an admin run waits, `approvals` lists it, an app certificate cannot decide,
# `approve`/`deny` with a person certificate release or refuse it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
C=$CLIENT  # lib.sh: $CLIENT or build/sharness-client
tmp=$T/client  # client_run's files (lib.sh); inside $T, removed at exit
mkdir -p "$tmp"

e2e_start
cd "$WS" || exit 1

client_run approvals
check_eq "approvals with nothing pending: exit 0" "$RC" 0
check_eq "approvals: says when nothing waits" "$OUT" $'no runs are waiting for approval\n'
client_run approvals --json
check_eq "approvals --json: a JSON document" \
	"$(jq -r 'if type == "object" or type == "array" then "json" else "other" end' "$tmp/out" 2>/dev/null)" json

# Approval flow for the admin profile (SPEC §9), person certificate decides.
P=(--cert "$T/certs/person.pem" --key "$T/certs/person.key")
"$C" run --profile admin -- 'echo approved-run' >"$tmp/adm.out" 2>"$tmp/adm.err" &
apid=$!
id=""
for _ in $(seq 1 50); do
	id=$("$C" "${P[@]}" approvals --json 2>/dev/null | jq -r '(.approvals // .)[] | select(.cmd == "echo approved-run") | .id' 2>/dev/null | head -1)
	[ -n "$id" ] && break
	sleep 0.1
done
check "approvals: a pending admin run is listed" test -n "$id"
[ -n "$id" ] || kill "$apid" 2>/dev/null  # do not wait for the daemon's approval limit
# Approvals in sight (SPEC §15.3): a run whose reply is late looks for its
# own approval and names it on stderr, while it waits.
wait_line() { # FILE LINE: up to 5 s
	for _ in $(seq 1 50); do grep -qxF "$2" "$1" && return 0; sleep 0.1; done
	return 1
}
check "a waiting run names its approval on stderr while it waits" \
	wait_line "$tmp/adm.err" "waiting for a person's approval: $id (sharness-client approve $id)"
"$C" "${P[@]}" approvals >"$tmp/list" 2>&1
check "approvals: the readable list shows its id and cmd" bash -c "grep -q '^$id ' '$tmp/list' && grep -q 'cmd echo approved-run' '$tmp/list'"
client_run approve "$id"
check_eq "approve with an app certificate is refused (125)" "$RC" 125
check "approve: ... with the daemon's 403 message" grep -q '(HTTP 403' "$tmp/err"
client_run "${P[@]}" approve "$id"
check_eq "approve with a person certificate" "$OUT$RC" "approved $id"$'\n0'
wait "$apid"; arc=$?
check_eq "approved run: exits 0 with its output" "$(cat "$tmp/adm.out") $arc" "approved-run 0"
SHARNESS_STREAM=0 "$C" run --profile admin -- 'echo denied-run' >"$tmp/adm.out" 2>"$tmp/adm.err" &
apid=$!
id=""
for _ in $(seq 1 50); do
	id=$("$C" "${P[@]}" approvals --json 2>/dev/null | jq -r '(.approvals // .)[] | select(.cmd == "echo denied-run") | .id' 2>/dev/null | head -1)
	[ -n "$id" ] && break
	sleep 0.1
done
[ -n "$id" ] || kill "$apid" 2>/dev/null
check "... and so does a run that is not streamed (SHARNESS_STREAM=0)" \
	wait_line "$tmp/adm.err" "waiting for a person's approval: $id (sharness-client approve $id)"
client_run "${P[@]}" deny "$id" --json
check_eq "deny --json: exit 0" "$RC" 0
wait "$apid"; arc=$?
check_eq "denied run: exits 125 without running" "$arc $(cat "$tmp/adm.out")" "125 "
# Besides the "waiting for a person's approval" line, which the client
# prints once it sees the run listed (at once when the person is slower).
check "denied run: one line naming the denial (HTTP 403)" bash -c "[ \"\$(grep -vc '^waiting for a person' '$tmp/adm.err')\" = 1 ] && grep -qi '^sharness-client: .*denied.*(HTTP 403' '$tmp/adm.err'"
client_run "${P[@]}" approve "$id"
check_eq "approve of an already-decided id exits 125" "$RC" 125
