#!/usr/bin/env bash
# The daemon with exactly the capabilities its unit leaves it
# (systemd/sharnessd.service, CapabilityBoundingSet=): every run must still
# be built.  Under real systemd the sandbox once failed for want of
# CAP_SYS_PTRACE (pidfd_getfd of an undumpable init); this test shows such a
# dependency on this machine, without systemd.
. "$(dirname "$0")/lib.sh"
# The whole unit set cannot be had here (this machine's v1 cgroups belong
# to another manager and need CAP_DAC_OVERRIDE); what the unit lacks and a
# root shell has is dropped: CAP_SYS_PTRACE.
check "the unit does not grant CAP_SYS_PTRACE" bash -c "! grep -q '^CapabilityBoundingSet=.*SYS_PTRACE' '$ROOT/systemd/sharnessd.service'"
E2E_WRAP="setpriv --bounding-set=-sys_ptrace --" e2e_start
eff=$(awk '/^CapEff/ {print $2}' /proc/$DAEMON_PID/status)
check_eq "CAP_SYS_PTRACE (bit 19) is not in its effective set" "$(( (0x$eff >> 19) & 1 ))" 0
run_cmd 'echo hello; umask' analyse
check_eq "an analyse run works" "$STATUS $(jf .stdout)" "200 hello
0022"
run_cmd 'umask 000; umask; echo made > unitcaps.txt; stat -c %a unitcaps.txt' build
check_eq "a build run works and keeps others from writing (umask listener)" "$STATUS $(jf .exit)" "200 0"
check_match "umask 000 is answered without clearing S_IWOTH" "$(jf .stdout)" '^00[0-7]2
6[0-4]4$'
e2e_stop
