#!/usr/bin/env bash
# One daemon per uid range and per state_dir: a second daemon whose uid_range
# or state_dir overlaps a live one refuses to start, naming its pid, and
# touches nothing of the first; a daemon of another range and state_dir runs
# beside it, and its crash recovery never reaches the first one's runs.  A
# lookalike claim of a uid other than root's stops no start.
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

# A claim counts only when root made its socket (instance.c): abstract names
# are open to every local user, and a lookalike of another uid kept every
# start refused, naming whatever pid it made up.  --doctor reads the same.
squat_py='import socket, sys, time
socks = []
for name in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind("\0" + name)
    socks.append(s)
print("ready", flush=True)
time.sleep(600)'
squat() { # AS(root|nobody) NAME...: hold each name until killed (SQUAT_PID)
	local as=()
	[ "$1" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	shift
	# /usr/bin's python: one under root's home (pyenv) is not nobody's to run.
	"${as[@]}" "$(command -v /usr/bin/python3 || command -v python3)" -c "$squat_py" "$@" >"$T/squat.out" 2>&1 &
	SQUAT_PID=$!
	# Up to 20 s: python under setpriv on a loaded machine once took more than 5.
	for _ in $(seq 1 200); do grep -q ready "$T/squat.out" && break; sleep 0.1; done
}
R5=$((UID_FIRST + 4096 * 11))
jq --arg port "$(free_port)" --arg t "$T" --argjson f "$R5" \
	'.uid_range.first = $f | .state_dir = ($t + "/state5") | .audit_log = ($t + "/audit5.log") | .listen = ("127.0.0.1:" + $port)' \
	"$T/sharnessd.json" >"$T/fifth.json"
wait_listening() { # LOG PID
	for _ in $(seq 1 400); do grep -q 'listening on' "$1" && break; kill -0 "$2" 2>/dev/null || break; sleep 0.05; done
}

squat nobody "sharnessd:range:0:4294967295:1"
check_eq "a lookalike claim of the whole range, made by uid 65534 (nobody)" "$(stat -c %u "/proc/$SQUAT_PID")" 65534
doc=$("$SHARNESSD" --doctor --config "$T/fifth.json" 2>&1)
check_match "--doctor: it is no other daemon" "$doc" "✔ no other sharnessd uses an overlapping uid_range"
check_match "--doctor: and says whose it is" "$doc" \
	"✔ a claim of uid_range 0-4294967294 naming pid 1 was made by uid 65534, not root: no sharnessd, and a start ignores it"
"$SHARNESSD" --config "$T/fifth.json" >"$T/fifth.log" 2>&1 &
FIFTH=$!
wait_listening "$T/fifth.log" "$FIFTH"
check_match "a daemon starts beside it" "$(cat "$T/fifth.log")" 'listening on'
check_match "and warns, naming the uid" "$(cat "$T/fifth.log")" \
	"ignored a claim of uid_range 0-4294967294 naming pid 1: uid 65534 made it, not root"
kill -TERM "$FIFTH"; wait "$FIFTH" 2>/dev/null
kill "$SQUAT_PID"; wait "$SQUAT_PID" 2>/dev/null

# The same at the daemon's very name (its pid is easy to guess): it binds the
# name with a random tag after the pid.
mkfifo "$T/gate"
(read -r _ <"$T/gate"; exec "$SHARNESSD" --config "$T/fifth.json") >"$T/sixth.log" 2>&1 &
SIXTH=$!
squat nobody "sharnessd:range:$R5:4096:$SIXTH"
echo go >"$T/gate"
wait_listening "$T/sixth.log" "$SIXTH"
check_match "a lookalike at the daemon's own name: it starts" "$(cat "$T/sixth.log")" 'listening on'
check_eq "... under its name with a tag" "$(grep -c "@sharnessd:range:$R5:4096:$SIXTH:[0-9a-f]\{16\}\$" /proc/net/unix)" 1
kill "$SQUAT_PID"; wait "$SQUAT_PID" 2>/dev/null
# A second daemon of that range still sees the tagged claim.
timeout 30 "$SHARNESSD" --config "$T/fifth.json" >"$T/seventh.log" 2>&1 # a start would serve on: bounded
check_match "... which a second daemon of its range reads" "$(cat "$T/seventh.log")" \
	"another sharnessd \\(pid $SIXTH\\) uses uid_range $R5-$((R5 + 4095))"
kill -TERM "$SIXTH"; wait "$SIXTH" 2>/dev/null

# Negative control: the same lookalike made by root counts.
squat root "sharnessd:range:0:4294967295:1"
timeout 30 "$SHARNESSD" --config "$T/fifth.json" >"$T/eighth.log" 2>&1
check_eq "a claim root made still refuses a start (exit 1)" "$?" 1
check_match "... naming the pid it names" "$(cat "$T/eighth.log")" \
	"another sharnessd \\(pid 1\\) uses uid_range 0-4294967294, which overlaps"
kill "$SQUAT_PID"; wait "$SQUAT_PID" 2>/dev/null
e2e_stop
