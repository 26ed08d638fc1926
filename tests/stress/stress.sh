#!/usr/bin/env bash
# tests/stress/stress.sh - the long load test of SPEC §13: 32 concurrent
# clients on kept-alive mTLS connections for 10,000 runs, every reply checked
# byte for byte, nothing leaked afterwards (tests/e2e/load.sh with the long
# settings).  STRESS_CLIENTS / STRESS_RUNS / STRESS_MAX_RUNS override.
# Ends with "N passed, N failed" like make test.
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp)
LOAD_CLIENTS=${STRESS_CLIENTS:-32} LOAD_RUNS=${STRESS_RUNS:-10000} LOAD_MAX_RUNS=${STRESS_MAX_RUNS:-16} \
	bash tests/e2e/load.sh 2>&1 | tee "$out"
p=$(grep -c '^ok ' "$out"); f=$(grep -c '^not ok ' "$out")
rm -f "$out"
echo "$p passed, $f failed"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
