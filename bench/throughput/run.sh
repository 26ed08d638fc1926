#!/usr/bin/env bash
# bench/throughput/run.sh - SPEC §15.5's throughput, side by side in one run:
#   sharness  runs/s of 32 concurrent clients on kept-alive mTLS connections,
#             every reply checked: the C clients of
#             bench/throughput/loadclient.c against the daemon as shipped
#             (max_runs 8, queue_max 64: a request past max_runs waits in
#             the queue; the figure), then against max_runs 16 with no
#             queue (every request past it gets 503 and its client retries
#             after 5-30 ms: the set-up of 0.1 and of sessions 7-11), then
#             tests/e2e/load.sh's Python clients in that same set-up, which
#             check every field, leaks and memory too (rates printed beside)
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
c_rate() { # FILE CONFIG: the C clients against the daemon started with CONFIG
	(
		. tests/e2e/lib.sh >/dev/null
		e2e_start "$2" >/dev/null
		"${BUILD:-build}/bench/loadclient" 127.0.0.1 "$PORT" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key" \
			32 "$RUNS" >"$1" 2>"$1.err"
		echo $? >"$1.rc"
		e2e_cleanup
	) >/dev/null 2>&1
	[ "$(cat "$1.rc")" = 0 ] || { cat "$1.err" >&2; return 1; }
	field runs_per_s "$(cat "$1")"
}
sharness_rate() {
	LOAD_CLIENTS=32 LOAD_RUNS=$RUNS LOAD_MAX_RUNS=16 LOAD_PREWARM=2 bash tests/e2e/load.sh 2>&1 | tee "$1.log" |
		sed -n 's/^# load: \([0-9.]*\) runs\/s.*/\1/p' | head -1
}
tmp=$(mktemp -d)
# Interleaved: bwrap, sharness, bwrap; the baseline is the mean of its two.
b1=$(bwrap_rate "$tmp/b1")
# The daemon's defaults but prewarm, which the harness (lib.sh) sets to 1 and
# the daemon defaults to 2, and the connection limit, which 32 clients pass.
c=$(c_rate "$tmp/c" '{"limits": {"connections": 48}, "prewarm": 2}') ||
	{ echo "bench-throughput: the C clients' run failed" >&2; exit 1; }
r=$(c_rate "$tmp/r" '{"max_runs": 16, "queue_max": 0, "limits": {"connections": 48}, "prewarm": 2}') ||
	{ echo "bench-throughput: the C clients' run without a queue failed" >&2; exit 1; }
s=$(sharness_rate "$tmp/s")
b2=$(bwrap_rate "$tmp/b2")
grep -q '^not ok' "$tmp/s.log" && { grep '^not ok' "$tmp/s.log"; echo "bench-throughput: the load run failed" >&2; exit 1; }
[ -n "$s" ] || { echo "bench-throughput: load.sh printed no rate" >&2; exit 1; }
B=$(awk -v a="$b1" -v b="$b2" 'BEGIN {printf "%.1f", (a + b) / 2}')
echo "throughput ($(uname -r), $(nproc) CPUs)"
printf '  %-62s %8s /s\n' "sharness, 32 C clients, $RUNS runs, every reply checked" "$c"
printf '  %-62s %8s /s\n' "... max_runs 16, no queue: 503s retried ($(field busy "$(cat "$tmp/r")") of them)" "$r"
printf '  %-62s %8s /s\n' "... that, 32 Python clients (load.sh: fields, leaks, memory)" "$s"
printf '  %-62s %8s /s\n' "two parallel bwrap loops (before $b1, after $b2)" "$B"
printf '  %-62s %8.2f\n' "ratio sharness/bwrap (aim >= 1.0, SPEC 15.5)" "$(awk -v s="$c" -v b="$B" 'BEGIN {print s / b}')"
printf '  %-62s %8.2f\n' "ratio with no queue, 503s retried" "$(awk -v s="$r" -v b="$B" 'BEGIN {print s / b}')"
printf '  %-62s %8.2f\n' "ratio with the Python clients" "$(awk -v s="$s" -v b="$B" 'BEGIN {print s / b}')"
rm -rf "$tmp"
