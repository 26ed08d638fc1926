#!/usr/bin/env bash
# Sandboxes built ahead of their request (config `prewarm`): each is used
# once and never reused, and one built before the workspace changed is never
# weaker than a fresh one (it is rebuilt).
. "$(dirname "$0")/lib.sh"
jq '.name = "writable" | .description = "read-write, no network" | .workspace = "read-write"' \
	"$ROOT/profiles/analyse.json" >"$T/writable.json"
E2E_PROFILES="$T/writable.json"
# The shipped profiles and writable.json, one waiting sandbox each.
N=$(( $(ls "$ROOT"/profiles/*.json | wc -l) + 1 ))
e2e_start '{"prewarm": 1}'

check_eq "idle: one waiting sandbox (init and actor, one cgroup) per profile" "$(settled)" "$((2 * N)) $N"
# Built ahead at the lowest priority (launcher.h), so that building never
# slows a run going on; the run itself has the daemon's.
range_nice() { ps -eo ni=,uid= | awk -v f="$UID_FIRST" '$2>f && $2<f+4096 {print $1}' | sort -u | tr '\n' ' '; }
check_eq "idle: the waiting sandboxes' processes are at niceness 19" "$(range_nice)" "19 "
run_cmd 'ps -o ni= -p 1,$$ | tr -d " " | tr "\n" " "; cut -d" " -f19 /proc/self/stat' writable
check_eq "a run in a sandbox built ahead has the daemon's niceness (init, shell, command)" "$(jf .stdout)" "0 0 0"
run_cmd 'echo one > /tmp/marker; id -u' writable
uid1=$(jf .stdout)
run_cmd 'cat /tmp/marker 2>&1; id -u' writable
check_match "a sandbox is never reused: the next run has a fresh /tmp" "$(jf .stdout)" 'No such file'
uid2=$(jf .stdout | tail -1)
check "a sandbox is never reused: a fresh uid" test "$uid1" != "$uid2"
check_settled "after runs: again one waiting sandbox per profile, nothing else"
# A sandbox prepared while a run was handed over must not inherit that run's
# channel or payload (the front would wait on a channel nobody answers).
# Every process below the launcher but the front (the supervisors: their
# command line is blank once their init hid its own, the memory being one).
descendants() { for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
leaks=0 seen=0
for p in $(descendants "$DAEMON_PID"); do
	[ "$p" = "$(front_pid)" ] && continue
	seen=$((seen + 1))
	ls -l /proc/$p/fd 2>/dev/null | grep -q 'memfd:sharness-run' && leaks=$((leaks + 1))
done
check_eq "no other process holds a run's payload ($seen looked at)" "$leaks" 0

# The waiting sandbox for `writable` was built before .git existed; a run in
# it must still find .git/hooks and .git/config read-only.
sleep 0.3
mkdir -p "$WS/.git/hooks"
touch "$WS/.git/config"
run_cmd 'echo "#!/bin/sh" > .git/hooks/pre-commit 2>&1; echo "[core]" >> .git/config 2>&1; echo done' writable
check_match "a sandbox prepared before .git existed is rebuilt: hooks read-only" "$(jf .stdout)$(jf .stderr)" '(Read-only file system|Permission denied).*(Read-only file system|Permission denied)'
check "no hook was planted" test ! -s "$WS/.git/hooks/pre-commit"
check_eq "no config was changed" "$(cat "$WS/.git/config")" ""

# The workspace owner changed after the sandbox was prepared: the idmap follows.
chown 23456:23456 "$WS"
sleep 0.3
run_cmd 'echo x > owned.txt && echo written' writable
check_eq "owner change: the run still writes" "$(jf .stdout)" "written"
check_eq "owner change: files belong to the new owner" "$(stat -c %u "$WS/owned.txt")" 23456
# An exec subpath removed while the next sandbox is being built: its view
# saw build/ (device and inode numbers), its init then found none to grant,
# and the build/ the request makes again gets the freed inode number back
# (ext4 hands it out again), so the numbers matched and the sandbox was
# used without the grant: 7 of 20 runs here ran into "Permission denied"
# (toolchains.sh once did).  The supervisor now holds what its view saw
# and rebuilds when that was removed.
bad=0
for i in $(seq 1 20); do
	run_cmd 'true' test # makes build/ (workspace_exec_create); the next sandbox is built at once
	rm -rf "$WS/build"
	run_cmd 'cp /usr/bin/true build/t && ./build/t && echo exec-ok' test
	[ "$(jf .stdout)" = exec-ok ] || { bad=$((bad + 1)); echo "# $STATUS $(jf .stdout) $(jf .stderr) $(jf .error.message)"; }
done
check_eq "build/ removed while the next sandbox is built: what the run builds there runs (20 times)" "$bad" 0
rm -rf "$WS/build" "$WS/target" "$WS/node_modules"
check_settled "nothing left but the waiting sandboxes"

e2e_stop
check_eq "SIGTERM removes the waiting sandboxes too" "$(range_procs) $(run_cgroups)" "0 0"

# prewarm 0: nothing waits, runs are built on arrival.
rm -rf "$T/state"
e2e_start '{"prewarm": 0}'
check_eq "prewarm 0: nothing waits" "$(settled)" "0 0"
run_cmd 'echo cold'
check_eq "prewarm 0: runs still work" "$(jf .stdout)" "cold"
check_settled "prewarm 0: nothing left"

# A crash with sandboxes waiting: SIGKILL of the launcher.  The waiting
# sandboxes' supervisors get their parent-death signal and clean up; what
# is left is removed by the next start.
e2e_stop
rm -rf "$T/state"
e2e_start '{"prewarm": 2}'
check_eq "prewarm 2: two waiting sandboxes per profile" "$(settled)" "$((4 * N)) $((2 * N))"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
for _ in $(seq 1 60); do [ "$(range_procs)" = 0 ] && break; sleep 0.05; done
check_eq "after SIGKILL of the launcher: no waiting sandbox survives" "$(range_procs)" 0
"$SHARNESSD" --config "$T/sharnessd.json" >"$T/daemon2.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 400); do grep -q 'listening on' "$T/daemon2.log" && break; sleep 0.05; done
check_eq "after the restart: only the new waiting sandboxes" "$(settled)" "$((4 * N)) $((2 * N))"
run_cmd 'echo after the crash'
check_eq "after the restart: runs work" "$(jf .stdout)" "after the crash"
