#!/usr/bin/env bash
# The first thing that must work: one run end to end.
. "$(dirname "$0")/lib.sh"
e2e_start
run_cmd 'echo hi; echo err >&2; exit 3'
check_eq "run returns 200" "$STATUS" 200
check_eq "stdout" "$(jf .stdout)" "hi"
check_eq "stderr" "$(jf .stderr)" "err"
check_eq "exit code" "$(jf .exit)" 3
