#!/usr/bin/env bash
# One daemon per uid range and per state_dir: a second daemon whose uid_range
# or state_dir overlaps a live one refuses to start, naming its pid, and
# touches nothing of the first; a daemon of another range and state_dir runs
# beside it, and its crash recovery never reaches the first one's runs.
. "$(dirname "$0")/lib.sh"
e2e_start
FIRST_PID=$DAEMON_PID

second() { # JQ-FILTER LOG: start a second daemon from the first's config changed by JQ-FILTER
	jq --arg port "$(free_port)" "$1 | .listen = (\"127.0.0.1:\" + \$port)" "$T/sharnessd.json" >"$T/second.json"
	"$SHARNESSD" --config "$T/second.json" >"$2" 2>&1 &
	SECOND_PID=$!
}

# A long run of the first daemon, which the others must leave alone.
run_cmd 'sleep 30' analyse >/dev/null &
LONG=$!
for _ in $(seq 1 50); do pgrep -f '^sleep 30$' >/dev/null && break; sleep 0.1; done
check "the first daemon's long run is under way" pgrep -f '^sleep 30$'

second ".uid_range.first = ($UID_FIRST + 2048) | .state_dir = \"$T/state2\"" "$T/overlap.log"
wait "$SECOND_PID"; rc=$?
check_eq "an overlapping uid_range: refused (exit 1)" "$rc" 1
check_match "the refusal names the live daemon's pid and range" "$(cat "$T/overlap.log")" \
	"another sharnessd \\(pid $FIRST_PID\\) uses uid_range $UID_FIRST-$((UID_FIRST + 4095)), which overlaps this one"

R2=$((UID_FIRST + 4096 * 7))
second ".uid_range.first = $R2" "$T/samestate.log"
wait "$SECOND_PID"; rc=$?
check_eq "the same state_dir: refused (exit 1)" "$rc" 1
check_match "the refusal names the live daemon's pid and the state_dir" "$(cat "$T/samestate.log")" \
	"another sharnessd \\(pid $FIRST_PID\\) uses state_dir $T/state"
check "the first daemon's run survived both" pgrep -f '^sleep 30$'
check "the first daemon still runs" kill -0 "$FIRST_PID"

# A daemon of its own range and state_dir starts beside it; SIGKILLed and
# started again, its recovery touches nothing of the first.
second ".uid_range.first = $R2 | .state_dir = \"$T/state3\" | .audit_log = \"$T/audit3.log\"" "$T/third.log"
for _ in $(seq 1 400); do grep -q 'listening on' "$T/third.log" && break; sleep 0.05; done
check_match "a daemon of another range and state_dir starts beside it" "$(cat "$T/third.log")" 'listening on'
kill -KILL "$SECOND_PID"; wait "$SECOND_PID" 2>/dev/null
sleep 0.3
second ".uid_range.first = $R2 | .state_dir = \"$T/state3\" | .audit_log = \"$T/audit3.log\"" "$T/third2.log"
for _ in $(seq 1 400); do grep -q 'listening on' "$T/third2.log" && break; sleep 0.05; done
check_match "it starts again after a SIGKILL (its claims died with it)" "$(cat "$T/third2.log")" 'listening on'
check "the first daemon's run survived the other's crash recovery" pgrep -f '^sleep 30$'
kill -TERM "$SECOND_PID"; wait "$SECOND_PID" 2>/dev/null

run_cmd 'echo still here'
check_eq "the first daemon still serves" "$STATUS $(jf .stdout)" "200 still here"
wait "$LONG" 2>/dev/null

# "A daemon vanished after an approved admin run" (issue 13): on 0.1 the
# front runs as uid_range.first, and a second daemon's start-up killed every
# process of a uid in the range, the waiting front included.  The same
# moment again: an admin run waits for a person, a second daemon of the
# same range starts, the person approves.
curl -s -o "$T/adm.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: application/json' \
	-d '{"cmd": "echo approved-ran", "profile": "admin"}' "$SHARNESS_URL/v0/run" >"$T/adm.status" &
ADM=$!
id=
for _ in $(seq 1 50); do
	api GET /v0/approvals '' person
	id=$(jf '.approvals[0].id // empty')
	[ -n "$id" ] && break
	sleep 0.1
done
second ".state_dir = \"$T/state4\"" "$T/during-approval.log"
wait "$SECOND_PID"; rc=$?
check_eq "a second daemon of the same range while an admin run waits: refused" "$rc" 1
api POST "/v0/approvals/$id" '{"decision": "allow"}' person
wait "$ADM"
check_eq "the approved run then ran" "$(cat "$T/adm.status") $(jq -r .stdout "$T/adm.body")" "200 approved-ran"
check "the first daemon still runs after it" kill -0 "$FIRST_PID"
e2e_stop
