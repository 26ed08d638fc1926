#!/usr/bin/env bash
# The daemon with exactly the capabilities its unit leaves it
# (systemd/sharnessd.service, CapabilityBoundingSet=): every run must still
# be built.  Under real systemd the sandbox once failed for want of
# CAP_SYS_PTRACE (pidfd_getfd of an undumpable init); this test shows such a
# dependency on this machine, without systemd.
. "$(dirname "$0")/lib.sh"
# The whole unit set cannot be had here (this machine's v1 cgroups belong
# to another manager and need CAP_DAC_OVERRIDE).  The unit grants
# CAP_SYS_PTRACE for one job: starting a run's file actor in the run's root
# (root/actor.c opens /proc/INIT/root of an init that is the run's uid by
# then), which makes the run's writes and unix connects.  Without it every
# run must still be built, and a write or connect must fail closed, with
# the reason in the log.
check "the unit grants CAP_SYS_PTRACE (a run's file actor)" grep -q '^CapabilityBoundingSet=.*CAP_SYS_PTRACE' "$ROOT/systemd/sharnessd.service"

# First the unit's own set (read from the unit, plus DAC_OVERRIDE for this
# machine's v1 cgroups): every kind of call the supervisor and the actor
# make for a run must work with it.  (CAP_SYS_CHROOT was missing once: every
# write of a run failed under the unit.)
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$ROOT/systemd/sharnessd.service" | tail -1 |
	tr ' ' '\n' | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
E2E_WRAP="setpriv --bounding-set=-all,$caps,+dac_override --" e2e_start
run_cmd 'echo made > unitset.txt && cat unitset.txt; mkdir -p s && mkdir s/.git 2>&1; rm -rf s; python3 -c "
import socket
s = socket.socket(socket.AF_UNIX); s.bind(\"/tmp/own.sock\"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(\"/tmp/own.sock\"); print(\"own-ok\")
"' build
check_match "the unit's set: a write, a refused .git and a run's own socket all work" \
	"$STATUS $(jf .stdout) $(jf '[.denials[].lock] | join(",")')" "^200 made
.*Operation not permitted
own-ok git$"
rm -f "$WS/unitset.txt"
e2e_stop

# Then without CAP_SYS_PTRACE: runs are built, connects and writes fail
# closed with the reason.
E2E_WRAP="setpriv --bounding-set=-sys_ptrace --" e2e_start
eff=$(awk '/^CapEff/ {print $2}' /proc/$DAEMON_PID/status)
check_eq "CAP_SYS_PTRACE (bit 19) is not in its effective set" "$(( (0x$eff >> 19) & 1 ))" 0
run_cmd 'echo hello; umask' analyse
check_eq "an analyse run works" "$STATUS $(jf .stdout)" "200 hello
0022"
run_cmd 'umask 000; umask' build
check_eq "a build run works" "$STATUS $(jf .exit)" "200 0"
check_match "umask 000 is answered without clearing S_IWOTH (umask listener)" "$(jf .stdout)" '^00[0-7]2$'
run_cmd 'echo made > unitcaps.txt' build
check_eq "without it a write fails closed (no actor)" "$STATUS $(jf .exit) $(test -e "$WS/unitcaps.txt" && echo made || echo none)" "200 1 none"
check_eq "and the reply names the daemon as the cause" "$(jf '.denials[0].lock')" daemon
# A socket file is made by the actor too (bind), so without it neither the
# run's own listener nor a connect to one can be made.
run_cmd 'python3 -c "
import socket
srv = socket.socket(socket.AF_UNIX)
try:
    srv.bind(\"/tmp/own.sock\"); print(\"bound\")
except OSError as e:
    print(e.strerror)
c = socket.socket(socket.AF_UNIX)
try:
    c.connect(\"/tmp/own.sock\"); print(\"connected\")
except OSError as e:
    print(e.strerror)
"' analyse
check_eq "without it a unix bind and connect fail closed, even to the run's own socket" "$STATUS $(jf .stdout)" "200 Permission denied
Permission denied"
check_match "and the log says what to grant" "$(cat "$T/daemon.log")" 'the file actor did not start with the sandbox \(Permission denied\); give the daemon CAP_SYS_PTRACE'
e2e_stop
