#!/usr/bin/env bash
# tests/vm/guest_faults.sh - a Debian system booted without Landlock in lsm=
# and with the pids controller disabled (tests/vm/run.sh adds the kernel
# parameters).  The daemon must refuse with the sentence that is true here,
# and --doctor must name both faults with their fixes.
set -u
cd /src
. tests/e2e/lib_checks.sh
echo "# kernel $(uname -r); cmdline: $(cat /proc/cmdline); lsm: $(cat /sys/kernel/security/lsm 2>/dev/null)"
check "Landlock is off in this boot" bash -c '! grep -qw landlock /sys/kernel/security/lsm'
make -o build/sharnessd -o build/sharnessd-front -o build/sharness-actor -o build/sharness-client install >/tmp/install.log 2>&1
sharness-mkcerts /etc/sharness/certs >/dev/null 2>&1
out=$(timeout 60 /usr/local/sbin/sharnessd --config /etc/sharness/sharnessd.json 2>&1); rc=$?
echo "# start-up: $out"
check_eq "no Landlock: the daemon refuses to start (exit 1)" "$rc" 1
lsm=$(cat /sys/kernel/security/lsm)
check_match "the refusal says to add landlock to lsm=, quoting this boot's list" "$out" "lsm=$lsm,landlock"
out=$(timeout 60 /usr/local/sbin/sharnessd --doctor --config /etc/sharness/sharnessd.json 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# doctor: /'
check_eq "doctor exits 1" "$rc" 1
check_match "doctor: ✘ Landlock with the lsm= fix" "$out" "✘ Landlock[^
]*lsm="
check_match "doctor: ✘ cgroups without the pids controller, naming cgroup_disable=pids" "$out" "✘ cgroup[^
]*pids[^
]*cgroup_disable=pids: remove"
[ "$E2E_FAILED" = 0 ]
