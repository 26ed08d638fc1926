#!/usr/bin/env bash
# tests/e2e/usage.sh - "usage" in every reply (SPEC §15.3), read from the
# run's cgroup; and a timed-out run keeps what it wrote before the kill.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/extra"
jq '.name = "tight" | .memory_max_mb = 64 | .pids_max = 16' "$ROOT/profiles/analyse.json" >"$T/extra/tight.json"
E2E_PROFILES="$T/extra/tight.json" e2e_start

run_cmd 'true'
check_eq "usage has its five fields" "$(jf '.usage | keys | join(",")')" "cpu_ms,oom_killed,peak_memory_bytes,peak_pids,pids_limited"
check_match "cpu_ms is a number" "$(jf .usage.cpu_ms)" '^[0-9]+$'
check_eq "oom_killed false for true" "$(jf .usage.oom_killed)" false
check_eq "pids_limited false for true" "$(jf .usage.pids_limited)" false

run_cmd 'python3 -c "x=bytearray(50_000_000); print(len(x))"'
check_eq "python allocates 50 MB" "$(jf .stdout)" 50000000
check "peak_memory_bytes >= 50 MB ($(jf .usage.peak_memory_bytes))" test "$(jf .usage.peak_memory_bytes)" -ge 50000000

run_cmd 'python3 -c "import time; t=time.process_time()
while time.process_time()-t < 0.3: pass"'
check "cpu_ms >= 250 for a 0.3 s busy loop ($(jf .usage.cpu_ms))" test "$(jf .usage.cpu_ms)" -ge 250

run_cmd 'for i in $(seq 1 40); do sleep 5 & done; wait' tight '{"timeout_s": 2}'
check_eq "a fork bomb hits pids.max: pids_limited" "$(jf .usage.pids_limited)" true
p=$(jf .usage.peak_pids)
[ "$p" = null ] || check "peak_pids at the limit ($p)" test "$p" -ge 15

run_cmd 'python3 -c "x=bytearray(300_000_000)"' tight
check_eq "a memory hog over the profile's limit: oom_killed" "$(jf .usage.oom_killed)" true

run_cmd 'echo a; sleep 100' analyse '{"timeout_s": 1}'
check_eq "a timed-out run: timed_out" "$(jf .timed_out)" true
check_eq "... keeps what it wrote before the kill" "$(jf .stdout)" "a"
check_match "... and its usage" "$(jf .usage.cpu_ms)" '^[0-9]+$'
grep -q '"usage":{' "$T/audit.log" && ok "the audit line carries usage" || not_ok "the audit line carries usage"
