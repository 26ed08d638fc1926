#!/usr/bin/env bash
# bench/realbuild/run.sh - a real build inside the sandbox vs outside (issue 16,
# item 4; and what the actor of issue 12 costs: every open for writing and
# every new directory entry of the build goes through it).
#
# The project is this repository (its own `make all`: ~50 C files, the
# static client), copied twice; one copy is built by `sharness-client`-
# equivalent requests in the `test` profile, the other by bash directly,
# A B A B, RUNS times each (default 3), after one warm-up of each.  Prints
# the median wall time of each and their ratio.  Speed goals live here,
# never in tests: the aim is <= 1.05.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${RUNS:-3}
. "$ROOT/tests/e2e/lib.sh"
e2e_start
copy() { (cd "$ROOT" && git ls-files -z | xargs -0 tar -cf -) | tar -xf - -C "$1"; }
copy "$WS"
OUT=$T/outside && mkdir -p "$OUT" && copy "$OUT"
build='make -s -j2 BUILD=build/bench all >/dev/null 2>&1 && echo built'
inside() {
	local t0 t1
	t0=$(date +%s%N)
	run_cmd "rm -rf build/bench; $build" test '{"timeout_s": 1800}'
	t1=$(date +%s%N)
	[ "$(jf .stdout)" = built ] || { echo "inside: the build failed: $(jf .stderr | tail -3)" >&2; exit 1; }
	echo $(((t1 - t0) / 1000000))
}
outside() {
	local t0 t1
	t0=$(date +%s%N)
	(cd "$OUT" && rm -rf build/bench && bash -c "$build" >/dev/null) || { echo "outside: the build failed" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
inside >/dev/null; outside >/dev/null # warm-up: caches, ccache-free
a=() b=()
for _ in $(seq 1 "$RUNS"); do
	a+=("$(inside)")
	b+=("$(outside)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ma=$(median "${a[@]}") mb=$(median "${b[@]}")
echo "build: make -j2 all of this repository, $RUNS runs each, A B A B"
echo "  inside (test profile):  median ${ma} ms  (runs: ${a[*]})"
echo "  outside (bash -c):      median ${mb} ms  (runs: ${b[*]})"
awk -v a="$ma" -v b="$mb" 'BEGIN { printf "  ratio inside/outside: %.3f (aim <= 1.05)\n", a / b }'
e2e_stop
