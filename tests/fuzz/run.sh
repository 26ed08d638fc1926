#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS TARGET... - run each built libFuzzer target for
# SECONDS over its committed corpus (tests/fuzz/corpus/T, read-only) plus a
# working corpus (build/fuzz/corpus/T, where new inputs go), and print one
# TAP-like line per target with its executions, and a summary table.
# A crash, leak, sanitizer report or broken property leaves the input in
# build/fuzz/artifacts/ and prints "not ok" with the fuzzer's report.
set -u
cd "$(dirname "$0")/../.."
secs=${1:?usage: run.sh SECONDS TARGET...}; shift
B=${BUILD:-build}/fuzz
mkdir -p "$B/artifacts" "$B/logs"
rc=0
summary=()
for t in "$@"; do
	bin=$B/fuzz_$t
	mkdir -p "$B/corpus/$t" "tests/fuzz/corpus/$t"
	dict=() seed=()
	[ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
	# FUZZ_SEED: the same mutations every run (CI); unset, libFuzzer picks one.
	[ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")
	log=$B/logs/$t.log
	"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$B/artifacts/$t-" "${dict[@]}" "${seed[@]}" \
		"$B/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1
	r=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -aoE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	seeds=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
	if [ "$r" -eq 0 ] && [ -n "$execs" ]; then
		echo "ok - fuzz_$t: ${execs} executions in ${secs} s (${seeds} committed seeds, coverage ${cov:-?}), no finding"
	else
		echo "not ok - fuzz_$t: exit $r after ${execs:-?} executions"
		grep -aE 'ERROR|fuzz property|SUMMARY|Test unit written|^#[0-9]+ +(INITED|DONE)' "$log" | head -20 | sed 's/^/#   /'
		rc=1
	fi
	summary+=("$(printf '%-16s %12s executions %6s s  coverage %s' "fuzz_$t" "${execs:-?}" "$secs" "${cov:-?}")")
done
printf '# %s\n' "${summary[@]}"
exit $rc
