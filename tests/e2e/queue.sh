#!/usr/bin/env bash
# tests/e2e/queue.sh - the FIFO queue past max_runs (SPEC §15.3 "No surprise
# 503", runq.h): 32 concurrent requests against max_runs 2 all run; strict
# arrival order; a full queue and a wait that runs out answer 503 with
# Retry-After; a client that hangs up leaves the queue at once; the client
# retries a 503 within its window; max_jobs is answered before any wait.
. "$(dirname "$0")/lib.sh"

# run_bg NAME CMD: POST /v0/run in the background; $T/q/NAME.{status,body,hdr}
mkdir -p "$T/q"
run_bg() {
	local body
	body=$(jq -nc --arg cmd "$2" '{cmd: $cmd, profile: "analyse"}')
	curl -s -o "$T/q/$1.body" -D "$T/q/$1.hdr" -w '%{http_code}' --cacert "$T/certs/ca.pem" \
		--cert "$T/certs/app.pem" --key "$T/certs/app.key" -H 'Content-Type: application/json' \
		--data-binary "$body" ${3:+--max-time "$3"} "https://127.0.0.1:$PORT/v0/run" >"$T/q/$1.status"
}
PIDS=()
bg() { "$@" & PIDS+=($!); }
wait_bg() { [ ${#PIDS[@]} -gt 0 ] && wait "${PIDS[@]}"; PIDS=(); } # never the daemon
started() { grep -c '"event":"run_started"' "$T/audit.log"; }
mark() { BASE=$(started); }
busy_until_running() { # N: wait (3 s at most) until N runs since `mark` hold a slot
	for _ in $(seq 1 60); do
		[ "$(started)" -ge $((BASE + $1)) ] && return
		sleep 0.05
	done
}

# 1. 32 at once against max_runs 2: nobody gets a 503.
e2e_start '{"max_runs": 2, "queue_max": 64, "queue_timeout_s": 60, "limits": {"connections": 80}}'
api GET /v0/policy
check_eq "policy lists queue_max" "$(jf .limits.queue_max)" 64
check_eq "policy lists queue_timeout_s" "$(jf .limits.queue_timeout_s)" 60
for i in $(seq 1 32); do bg run_bg "c$i" "sleep 0.2; echo r$i"; done
wait_bg
n200=0 n503=0 good=0
for i in $(seq 1 32); do
	s=$(cat "$T/q/c$i.status")
	[ "$s" = 200 ] && n200=$((n200 + 1))
	[ "$s" = 503 ] && n503=$((n503 + 1))
	[ "$(jq -r .stdout "$T/q/c$i.body" 2>/dev/null)" = "r$i" ] && good=$((good + 1))
done
check_eq "32 concurrent runs against max_runs 2: all 200" "$n200" 32
check_eq "... none 503" "$n503" 0
check_eq "... every reply its own output" "$good" 32

# 2. Strict FIFO: with one slot, requests that arrive 300 ms apart run in
# their order of arrival (each prints when it ran).
e2e_stop
e2e_start '{"max_runs": 1, "queue_max": 16, "queue_timeout_s": 30}'
mark
bg run_bg hold "sleep 2.5"
busy_until_running 1
for i in 1 2 3 4 5 6; do bg run_bg "f$i" 'date +%s%N'; sleep 0.3; done
wait_bg
order=$(for i in 1 2 3 4 5 6; do echo "$(jq -r .stdout "$T/q/f$i.body") $i"; done | sort -n | awk '{printf "%s", $2}')
check_eq "queued runs start in arrival order" "$order" 123456
check_eq "... and all ran" "$(for i in 1 2 3 4 5 6; do cat "$T/q/f$i.status"; echo; done | sort -u | tr -d '\n')" 200

# 3. A client that hangs up while queued leaves the queue (its 499 is on
# record while the slot is still held) and the next in line still runs.
mark
bg run_bg hold2 "sleep 2"
busy_until_running 1
bg run_bg gone "echo never" 0.5
sleep 0.1
bg run_bg after "echo after"
sleep 0.8
check_match "a client gone from the queue is on record at once" \
	"$(grep '"client_gone"' "$T/audit.log" | tail -1)" '"status":499'
wait_bg
check_eq "the next in line ran after it" "$(jq -r .stdout "$T/q/after.body")" after
check_eq "the gone client's command never ran" "$(grep '"run_started"' "$T/audit.log" | grep -c 'echo never')" 0

# 4. queue_max 1: the overflow gets 503 with Retry-After at once.
e2e_stop
e2e_start '{"max_runs": 1, "queue_max": 1, "queue_timeout_s": 30}'
mark
bg run_bg long "sleep 2"
busy_until_running 1
bg run_bg queued "echo queued"
sleep 0.2
t0=$(date +%s%N)
run_bg over "echo over"
t1=$(date +%s%N)
check_eq "a full queue answers 503" "$(cat "$T/q/over.status")" 503
check_match "... with Retry-After" "$(cat "$T/q/over.hdr")" 'Retry-After: [0-9]+'
check_match "... at once" "$(( (t1 - t0) / 1000000 ))" '^[0-9]{1,3}$'
check_match "... saying why" "$(jq -r .error.message "$T/q/over.body")" 'queue_max'
wait_bg
check_eq "the queued one ran" "$(jq -r .stdout "$T/q/queued.body")" queued

# 5. The wait runs out: 503 with Retry-After after queue_timeout_s.
e2e_stop
e2e_start '{"max_runs": 1, "queue_max": 4, "queue_timeout_s": 1}'
mark
bg run_bg long "sleep 3"
busy_until_running 1
t0=$(date +%s%N)
run_bg late "echo late"
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
check_eq "a queue wait that runs out answers 503" "$(cat "$T/q/late.status")" 503
check_match "... with Retry-After" "$(cat "$T/q/late.hdr")" 'Retry-After: [0-9]+'
check "... after about queue_timeout_s (${ms} ms)" test "$ms" -ge 900 -a "$ms" -lt 2500
check_match "... saying it waited" "$(jq -r .error.message "$T/q/late.body")" 'waited in the queue'
check_match "the daemon logs the queue timeout" "$(cat "$T/daemon.log")" 'no run slot came free within 1 s'

# 6. The client retries a 503 (honouring Retry-After) within its window.
client_run run --profile analyse --cwd "$WS" -- echo retried
check_eq "client: a 503 is retried until the slot frees" "$OUT" $'retried\n'
check_eq "client: exit 0 after the retry" "$RC" 0
check_match "client: the daemon did answer 503 first" "$(grep -c '"status":503' "$T/audit.log")" '^[2-9]|^[1-9][0-9]'
wait_bg
mark
bg run_bg long2 "sleep 3"
busy_until_running 1
SHARNESS_RETRY_S=0 client_run run --profile analyse --cwd "$WS" -- echo once
check_eq "client: SHARNESS_RETRY_S=0 does not retry" "$RC" 125
check_match "... and says the daemon was busy" "$ERR" '503'
wait_bg

# 7. max_jobs is answered before any wait: jobs that wait for a slot count,
# so a job past it gets its 429 at once and leaves no run_started line
# (it used to wait in the queue first, then meet max_jobs).
e2e_stop
e2e_start '{"max_runs": 1, "max_jobs": 2, "queue_timeout_s": 30}'
job_bg() { # NAME CMD: POST /v0/jobs; $T/q/NAME.{status,body}
	curl -s -o "$T/q/$1.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
		--key "$T/certs/app.key" -H 'Content-Type: application/json' \
		--data-binary "$(jq -nc --arg cmd "$2" '{cmd: $cmd, profile: "analyse"}')" \
		"https://127.0.0.1:$PORT/v0/jobs" >"$T/q/$1.status"
}
mark
bg run_bg hold "sleep 2"
busy_until_running 1
bg job_bg j1 "sleep 0.1"
bg job_bg j2 "sleep 0.1"
sleep 0.5 # both wait for the slot
t0=$(date +%s%N)
job_bg j3 "echo three"
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "max_jobs counts jobs waiting for a slot: the third is refused" \
	"$(cat "$T/q/j3.status") $(jq -r .error.code "$T/q/j3.body")" "429 too_many_jobs"
check "... at once, not after the queue's wait (${ms} ms)" test "$ms" -lt 1000
check_match "... saying what waits" "$(jq -r .error.message "$T/q/j3.body")" '2 waiting to start'
wait_bg
check_eq "the two waiting jobs started" "$(cat "$T/q/j1.status") $(cat "$T/q/j2.status")" "202 202"
check_eq "... and the refused one left no run_started line" "$(started)" $((BASE + 3))

# 7b. One certificate's jobs leave a run slot free (review s37 front 4:
# at max_jobs = max_runs, its sleeping jobs held every slot and another
# identity's run got 503 after the queue's 30 s).
e2e_stop
e2e_start '{"max_runs": 2, "max_jobs": 8, "queue_timeout_s": 30}'
job_bg s1 "sleep 20"
job_bg s2 "sleep 20"
check_eq "jobs past max_runs - 1 of one certificate: the second is refused" \
	"$(cat "$T/q/s1.status") $(cat "$T/q/s2.status") $(jq -r .error.code "$T/q/s2.body")" "202 429 too_many_jobs"
check_match "... saying why" "$(jq -r .error.message "$T/q/s2.body")" 'one fewer than max_runs'
t0=$(date +%s%N)
api POST /v0/run '{"cmd": "echo served", "profile": "analyse"}' orchestrator
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "... and another identity's run is served at once (${ms} ms)" "$STATUS $(jf .stdout)" "200 served"
api DELETE "/v0/jobs/$(jq -r .job_id "$T/q/s1.body")"

# 8. Hang-ups do not turn into 503s: four clients start runs that fill
# 200 MB and hang up while they run, over and over, beside a client whose
# runs queue.  A run's slot comes back only once its supervisor has torn it
# down (execute.c); it used to come back at the hang-up, so teardowns piled
# up past the launcher's own bound (2 x max_runs) and queued runs got its
# 503 (1 and 6 of 60 in two tries, session 30).
e2e_stop
e2e_start '{"max_runs": 2, "queue_max": 64, "queue_timeout_s": 60, "limits": {"connections": 80}}'
audit_before=$(wc -l <"$T/audit.log")
hog=$(jq -nc '{cmd: "python3 -c \"b = bytearray(200 << 20); import time; time.sleep(30)\"", profile: "analyse"}')
for c in 1 2 3 4; do
	bg bash -c "for i in \$(seq 1 10); do curl -s -o /dev/null --max-time 0.7 --cacert '$T/certs/ca.pem' \
		--cert '$T/certs/app.pem' --key '$T/certs/app.key' -H 'Content-Type: application/json' \
		--data-binary '$hog' 'https://127.0.0.1:$PORT/v0/run'; done"
done
n503=0
for i in $(seq 1 40); do
	run_bg "w$i" "echo w$i"
	[ "$(cat "$T/q/w$i.status")" = 503 ] && n503=$((n503 + 1))
done
wait_bg
check_eq "40 queued runs beside 40 hang-ups of 200 MB runs: no 503" "$n503" 0
check_eq "... none in the audit log either (the hang-ups are 499)" "$(tail -n +$((audit_before + 1)) "$T/audit.log" | grep -c '"status":503')" 0
check_settled "... and nothing of the runs is left"

# 9. A stream whose reader is far behind when its run ends (the front
# stopped reading the pipes past 1 MiB unread) gives its slot back at the
# run's end, not at the reader's pace: the next run gets it in seconds, the
# stream goes on at the reader's pace.
e2e_stop
e2e_start '{"max_runs": 1, "queue_max": 4, "queue_timeout_s": 10}'
cat >"$T/slow.py" <<'PY'
import socket, ssl, sys, time
port, certs = int(sys.argv[1]), sys.argv[2]
body = '{"cmd": "yes", "profile": "analyse", "stream": true, "timeout_s": 1}'
ctx = ssl.create_default_context(cafile=certs + "/ca.pem")
ctx.load_cert_chain(certs + "/app.pem", certs + "/app.key")
raw = socket.socket()
raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
raw.connect(("127.0.0.1", port))
s = ctx.wrap_socket(raw, server_hostname="localhost")
s.sendall(("POST /v0/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
           "Content-Length: %d\r\n\r\n%s" % (len(body), body)).encode())
while s.recv(1024):  # 1 KiB every 0.5 s: megabytes behind, for ever
    time.sleep(0.5)
PY
python3 "$T/slow.py" "$PORT" "$T/certs" &
slow=$!
mark
busy_until_running 1
sleep 2.5 # its run ended at 1 s
run_bg next "echo next" # waits at most queue_timeout_s (10 s), then 503
check_eq "a run queued behind a stream's slow reader, after that run's end: 200" \
	"$(cat "$T/q/next.status") $(jq -r .stdout "$T/q/next.body")" "200 next"
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
check_settled "... and nothing of the runs is left"
e2e_stop
