#!/usr/bin/env bash
# tests/run.sh - run every unit test binary and end-to-end script, count the
# "ok"/"not ok" lines they print, and end with one "N passed, N failed" line.
# A program that exits non-zero without printing "not ok" counts as one failure.
set -u
cd "$(dirname "$0")/.."
# BUILD=build/asan runs the sanitizer build (make asan-test).
BUILD=${BUILD:-build}
export SHARNESSD=${SHARNESSD:-$PWD/$BUILD/sharnessd} CLIENT=${CLIENT:-$PWD/$BUILD/sharness-client}
pass=0 fail=0
log=$BUILD/test-logs
mkdir -p "$log"
run_one() { # name, command...
	local name=$1; shift
	local out="$log/$name.out" rc
	mkdir -p "$(dirname "$out")"
	"$@" >"$out" 2>&1; rc=$?
	local p f
	p=$(grep -c '^ok ' "$out"); f=$(grep -c '^not ok ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name exited $rc" >>"$out"; fi
	pass=$((pass + p)); fail=$((fail + f))
	printf '%-40s %4d passed, %d failed\n' "$name" "$p" "$f"
	if [ "$f" -gt 0 ]; then grep -E '^(not ok|#)' "$out" | head -40 | sed 's/^/    /'; fi
}
only=${TESTS:-}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	[ -n "$only" ] && [[ "$n" != *$only* ]] && continue
	run_one "unit/$n" "$t"
done
for t in tests/e2e/*.sh; do
	n=$(basename "$t" .sh)
	[[ "$n" == lib* ]] && continue # the harness, not a test
	[ -n "$only" ] && [[ "$n" != *$only* ]] && continue
	run_one "e2e/$n" bash "$t"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
