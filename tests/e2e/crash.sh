#!/usr/bin/env bash
# Crash recovery (SPEC §11, issue 7): SIGKILL the daemon in the middle of a
# run, start it again with the same configuration, and check that nothing of
# the old daemon is left and that a new run works.
#
#   1. SIGKILL the launcher alone (the root sharnessd process).  The front has
#      PDEATHSIG=SIGKILL and must die with it; the supervisors have
#      PDEATHSIG=SIGTERM and may clean up their runs themselves.  What is left
#      is printed; after the restart nothing of the old daemon may be left,
#      whichever of the two did the cleanup.
#   2. SIGKILL the launcher and every supervisor at once (what the OOM killer
#      or `kill -9` of the whole process tree does): run cgroups are then
#      certainly left, and the restart must log "recovered from a previous
#      run: removed N run cgroup(s) and killed what they held".  A process of
#      the uid range planted outside every cgroup of ours must be left alone:
#      recovery kills only what this daemon's record and cgroups name, never
#      "every process of a uid" (it could be another daemon's run).
. "$(dirname "$0")/lib.sh"

# ctl_path CONTROLLER: this shell's cgroup in a v1 controller ("" for the v2 hierarchy).
ctl_path() {
	if [ -z "$1" ]; then
		sed -n 's/^0:://p' /proc/self/cgroup
	else
		awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup
	fi
}
# The daemon inherits our cgroups and makes sharness-$UID_FIRST below each of them.
CG_DIRS=()
for spec in pids:pids memory:memory unified:; do
	mnt=${spec%%:*} ctl=${spec#*:}
	[ -d "/sys/fs/cgroup/$mnt" ] || continue
	p=$(ctl_path "$ctl")
	CG_DIRS+=("/sys/fs/cgroup/$mnt${p%/}")
done

procs_in_range() { # live (not zombie) pids whose real uid is in the daemon's range, sorted
	local f
	for f in /proc/[0-9]*/status; do
		awk -v lo="$UID_FIRST" -v hi=$((UID_FIRST + 4096)) -v f="$f" '
			$1 == "State:" && $2 == "Z" { exit }
			$1 == "Uid:" && $2 >= lo && $2 < hi { split(f, a, "/"); print a[3]; exit }' "$f" 2>/dev/null
	done | sort -n
}
only_new_front() { # true once the new daemon's front is the only process of the range
	local t
	for t in $(seq 1 40); do
		[ "$(procs_in_range | wc -l)" -eq 1 ] && return 0
		sleep 0.05
	done
	echo "# still in the range: $(for p in $(procs_in_range); do printf '%s(%s) ' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done)"
	return 1
}
run_cgroups() { # run cgroups below sharness-$UID_FIRST in every hierarchy
	local d
	for d in "${CG_DIRS[@]}"; do
		find "$d/sharness-$UID_FIRST" -mindepth 1 -type d 2>/dev/null
	done
}
children_of() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' '; }
alive() { # pids from the list that still exist (zombies count as gone)
	local p s
	for p in "$@"; do
		s=$(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$s" ] && [ "$s" != Z ] && echo "$p"
	done
}
wait_gone() { # SECONDS PID...: wait until none of the pids is alive
	local t=$1
	shift
	for _ in $(seq 1 $((t * 20))); do
		[ -z "$(alive "$@")" ] && return 0
		sleep 0.05
	done
	return 1
}
long_run() { # start a run that would take 1000 s, in the background
	local body='{"cmd": "sleep 1000 & setsid sleep 1000 & sleep 1000", "timeout_s": 600}'
	curl -s -o /dev/null --cacert "$T/certs/ca.pem" --cert "$T/certs/app.pem" --key "$T/certs/app.key" \
		-H 'Content-Type: application/json' -d "$body" "$SHARNESS_URL/v0/run" &
	CURL_PIDS+=($!)
	for _ in $(seq 1 100); do
		[ "$(procs_in_range | wc -l)" -ge 4 ] && return 0 # the front and 3 sleeps
		sleep 0.05
	done
	return 1
}
restart() { # LOGFILE: start the daemon again with the same configuration
	"$SHARNESSD" --config "$T/sharnessd.json" >"$1" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 200); do
		grep -q 'listening on' "$1" 2>/dev/null && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	return 1
}
report_left() { # WHEN: print what is left of the old daemon
	echo "# left $1: processes of the uid range: $(procs_in_range | tr '\n' ' ')"
	echo "#   supervisors alive: $(alive $SUPERVISORS | tr '\n' ' ')"
	echo "#   run cgroups: $(run_cgroups | tr '\n' ' ')"
}
CURL_PIDS=()

# One sandbox per run, none prepared ahead (prewarm 0): the counts below are
# about runs; waiting sandboxes after a crash are covered in prewarm.sh.
e2e_start '{"prewarm": 0}'

# ---- 1. the launcher alone ------------------------------------------------
check "1: a long run is under way" long_run
FRONT=$(alive $(children_of "$DAEMON_PID") | while read -r p; do
	[ "$(awk '/^Uid:/ { print $2 }' /proc/$p/status)" = "$UID_FIRST" ] && echo "$p"
done)
SUPERVISORS=$(for p in $(children_of "$DAEMON_PID"); do [ "$p" != "$FRONT" ] && echo "$p"; done)
OLD_RUN=$(procs_in_range | grep -vx "$FRONT")
check "1: the front is a child of the launcher" test -n "$FRONT"
check "1: one supervisor per run" test "$(echo "$SUPERVISORS" | wc -w)" -eq 1
check "1: the run has its cgroups" test -n "$(run_cgroups)"

kill -KILL "$DAEMON_PID"
{ wait "$DAEMON_PID"; } 2>/dev/null
DAEMON_PID=
check "1: the front dies with the launcher (PDEATHSIG)" wait_gone 2 $FRONT
sleep 1
report_left "after SIGKILL of the launcher"

check "1: the daemon starts again with the same config" restart "$T/daemon2.log"
grep 'recovered from a previous run' "$T/daemon2.log" | sed 's/^/# /'
check_eq "1: no process of the old run is left" "$(alive $OLD_RUN $SUPERVISORS | tr '\n' ' ')" ""
check "1: no process of the range but the new front" only_new_front
check_eq "1: no run cgroup is left" "$(run_cgroups)" ""
run_cmd 'echo after the crash'
check_eq "1: a new run works" "$STATUS $(jf .stdout)" "200 after the crash"

# ---- 2. the launcher and the supervisors, with a stray --------------------
check "2: a long run is under way" long_run
SUPERVISORS=$(for p in $(children_of "$DAEMON_PID"); do
	[ "$(awk '/^Uid:/ { print $2 }' /proc/$p/status 2>/dev/null)" = 0 ] && echo "$p"
done)
FRONT=$(children_of "$DAEMON_PID" | grep -vx "$(echo $SUPERVISORS | tr ' ' '\n')")
OLD_RUN=$(procs_in_range | grep -vx "$FRONT")
# A process of the range outside any run and any cgroup of ours: not ours
# to kill.
setpriv --reuid=$((UID_FIRST + 4000)) --regid=$((UID_FIRST + 4000)) --clear-groups sleep 1000 &
STRAY=$!
sleep 0.2
check "2: the stray runs with a uid of the range" test "$(awk '/^Uid:/ { print $2 }' /proc/$STRAY/status)" = $((UID_FIRST + 4000))

# Supervisors first: killed after the launcher, they would get their
# PDEATHSIG (SIGTERM) first and clean up, which is scenario 1.
kill -KILL $SUPERVISORS
kill -KILL "$DAEMON_PID"
{ wait "$DAEMON_PID"; } 2>/dev/null
DAEMON_PID=
# The sandbox's init has PDEATHSIG=SIGKILL: with its supervisor gone the
# run's pid namespace, and every process in it, must go too.
check "2: the run dies with its supervisor (PDEATHSIG)" wait_gone 2 $OLD_RUN
sleep 0.5
report_left "after SIGKILL of the launcher and the supervisors"
check "2: run cgroups are left for the next daemon" test -n "$(run_cgroups)"

check "2: the daemon starts again with the same config" restart "$T/daemon3.log"
line=$(grep -o 'recovered from a previous run: removed [0-9]* run cgroup(s) and killed what they held' "$T/daemon3.log")
echo "# $line"
check_match "2: recovery is logged" "$line" '^recovered from a previous run: removed [1-9][0-9]* run cgroup\(s\) and killed what they held$'
check "2: the process of the range outside our cgroups is left alone" kill -0 "$STRAY"
kill -KILL "$STRAY"
wait "$STRAY" 2>/dev/null
check_eq "2: no process of the old run is left" "$(alive $OLD_RUN $SUPERVISORS $STRAY | tr '\n' ' ')" ""
check "2: no process of the range but the new front" only_new_front
check_eq "2: no run cgroup is left" "$(run_cgroups)" ""
run_cmd 'echo after the second crash'
check_eq "2: a new run works" "$STATUS $(jf .stdout)" "200 after the second crash"
for p in "${CURL_PIDS[@]}"; do wait "$p" 2>/dev/null; done

e2e_stop
check_eq "the last daemon leaves no run cgroup" "$(run_cgroups)" ""
