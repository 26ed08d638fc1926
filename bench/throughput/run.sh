#!/usr/bin/env bash
# bench/throughput/run.sh - SPEC §15.5's throughput, side by side in one run:
#   sharness  runs/s of 32 concurrent clients on kept-alive mTLS connections,
#             every reply checked (tests/e2e/load.sh, max_runs 16)
#   bwrap     launches/s of two parallel loops of fork+exec of
#             bwrap --unshare-all --die-with-parent --ro-bind / / true
#             (bench/roundtrip's exec mode: the sum of 1000/mean_ms of each)
# and the ratio sharness/bwrap (aim: >= 1.0).
#   THROUGHPUT_RUNS (3000)  THROUGHPUT_BWRAP_N (1000 per loop)
set -u
cd "$(dirname "$0")/../.."
RT=${BUILD:-build}/bench/roundtrip
RUNS=${THROUGHPUT_RUNS:-3000}
BN=${THROUGHPUT_BWRAP_N:-1000}
command -v bwrap >/dev/null || { echo "bench-throughput: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

bwrap_rate() { # two loops at once; launches per second in all
	local a b
	"$RT" exec "$BN" 20 bwrap --unshare-all --die-with-parent --ro-bind / / true >"$1.a" &
	"$RT" exec "$BN" 20 bwrap --unshare-all --die-with-parent --ro-bind / / true >"$1.b" &
	wait
	a=$(field mean_ms "$(cat "$1.a")") b=$(field mean_ms "$(cat "$1.b")")
	awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", 1000 / a + 1000 / b}'
}
sharness_rate() {
	LOAD_CLIENTS=32 LOAD_RUNS=$RUNS LOAD_MAX_RUNS=16 bash tests/e2e/load.sh 2>&1 | tee "$1.log" |
		sed -n 's/^# load: \([0-9.]*\) runs\/s.*/\1/p' | head -1
}
tmp=$(mktemp -d)
# Interleaved: bwrap, sharness, bwrap; the baseline is the mean of its two.
b1=$(bwrap_rate "$tmp/b1")
s=$(sharness_rate "$tmp/s")
b2=$(bwrap_rate "$tmp/b2")
grep -q '^not ok' "$tmp/s.log" && { grep '^not ok' "$tmp/s.log"; echo "bench-throughput: the load run failed" >&2; exit 1; }
[ -n "$s" ] || { echo "bench-throughput: load.sh printed no rate" >&2; exit 1; }
B=$(awk -v a="$b1" -v b="$b2" 'BEGIN {printf "%.1f", (a + b) / 2}')
echo "throughput ($(uname -r), $(nproc) CPUs)"
printf '  %-62s %8s /s\n' "sharness, 32 clients, $RUNS runs, every reply checked" "$s"
printf '  %-62s %8s /s\n' "two parallel bwrap loops (before $b1, after $b2)" "$B"
printf '  %-62s %8.2f\n' "ratio sharness/bwrap (aim >= 1.0, SPEC 15.5)" "$(awk -v s="$s" -v b="$B" 'BEGIN {print s / b}')"
rm -rf "$tmp"
