#!/usr/bin/env bash
# Operations of the daemon itself: SIGHUP reopens the audit log (rotation),
# SIGTERM stops running commands, removes their cgroups and exits cleanly.
. "$(dirname "$0")/lib.sh"
e2e_start

run_cmd 'echo before rotation'
mv "$T/audit.log" "$T/audit.log.1"
kill -HUP "$DAEMON_PID"
sleep 0.3
run_cmd 'echo after rotation'
check_eq "SIGHUP: the run still works" "$(jf .stdout)" "after rotation"
sleep 0.1
check "SIGHUP: a new audit log is written" grep -q 'after rotation' "$T/audit.log"
check "SIGHUP: the old log keeps its lines" grep -q 'before rotation' "$T/audit.log.1"
check "SIGHUP: logged" grep -q 'reopened the audit log' "$T/daemon.log"
# A front that reads nothing must not stall root: each SIGHUP's reopened log
# is handed over without waiting (a blocking send filled the socket after
# about 280 and then held root in sendmsg(2), syscall 46, for good).
front=$(front_pid)
kill -STOP "$front"
for _ in $(seq 1 400); do kill -HUP "$DAEMON_PID"; sleep 0.005; done
sleep 0.5
sc=$(cut -d' ' -f1 "/proc/$DAEMON_PID/syscall")
kill -CONT "$front"
check "SIGHUP while the front reads nothing: root is not held in sendmsg (syscall $sc)" test "$sc" != 46
run_cmd 'echo after the stopped front'
check_eq "... and a run after it works" "$(jf .stdout)" "after the stopped front"

body='{"cmd": "sleep 100 & setsid sleep 100 & sleep 100"}'
curl -s -o "$T/long.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: application/json' -d "$body" "$SHARNESS_URL/v0/run" >"$T/long.status" &
curl_pid=$!
for _ in $(seq 1 50); do
	[ "$(ps -eo uid= | awk -v f=$UID_FIRST '$1>f && $1<f+4096' | wc -l)" -ge $(($(warm_procs) + 3)) ] && break
	sleep 0.1
done
check "a long run is under way" test "$(ps -eo uid= | awk -v f=$UID_FIRST '$1>f && $1<f+4096' | wc -l)" -ge $(($(warm_procs) + 3))
# The sandbox it took is replaced while it runs, LAUNCHER_REFILL_MS (100 ms)
# after it began, not only when it ends (launcher.h).  A waiting sandbox's
# supervisor is a child of the daemon that is still root; the run's own
# has dropped to the run's uid.
waiting() { pgrep -P "$DAEMON_PID" -u 0 | wc -l; }
for _ in $(seq 1 30); do [ "$(waiting)" -eq "$(warm_count)" ] && break; sleep 0.1; done
check_eq "a long run's sandbox is replaced while it runs" "$(waiting)" "$(warm_count)"
start=$(date +%s%N)
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID"
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
DAEMON_PID=
check_eq "SIGTERM: the daemon exits 0" "$rc" 0
check "SIGTERM: within 3 s (took ${elapsed} ms)" test "$elapsed" -lt 3000
wait "$curl_pid"
check_eq "SIGTERM: the running request gets 503" "$(cat "$T/long.status")/$(jq -r .error.code "$T/long.body")" 503/at_capacity
check_eq "SIGTERM: no process of the run left" "$(ps -eo uid= | awk -v f=$UID_FIRST '$1>=f && $1<f+4096' | wc -l)" 0
check_eq "SIGTERM: no run cgroup left" "$(find /sys/fs/cgroup/*/sharness-$UID_FIRST /sys/fs/cgroup/*/*/*/sharness-$UID_FIRST -mindepth 1 -type d 2>/dev/null | wc -l)" 0
check_eq "SIGTERM: the parent cgroups it made are removed" "$(parent_cgroups | wc -l)" 0
check_eq "SIGTERM: no sandbox mount left" "$(grep -c "$T/state/root" /proc/mounts)" 0
check "SIGTERM: logged" grep -q 'shutting down: stopping 1 run(s) and 4 waiting sandbox(es)' "$T/daemon.log"

# A request that reaches the launcher while it is stopping still gets an
# answer (503), and the daemon still exits: no thread waits forever.
e2e_start
kill -STOP "$DAEMON_PID"
curl -s -o "$T/late.body" -w '%{http_code}' --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" \
	--key "$T/certs/app.key" -H 'Content-Type: application/json' -d '{"cmd":"echo late"}' \
	"$SHARNESS_URL/v0/run" >"$T/late.status" &
late=$!
sleep 0.5
kill -TERM "$DAEMON_PID"
kill -CONT "$DAEMON_PID"
start=$(date +%s%N)
wait "$DAEMON_PID"
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
DAEMON_PID=
wait "$late"
check_eq "late request during shutdown: answered" "$(cat "$T/late.status")" 503
check "late request during shutdown: the daemon exits within 6 s (took ${elapsed} ms)" test "$elapsed" -lt 6000
check_eq "late request during shutdown: exit 0" "$rc" 0
