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
# and the ratio sharness/bwrap (aim: >= 1.0).  The figure's C runs alternate
# with the bwrap loops, THROUGHPUT_PAIRS of them (3): bwrap, sharness, bwrap,
# sharness, ..., bwrap; each sharness run is divided by the mean of the bwrap
# rates on either side of it, and the median of those ratios is the figure,
# so that a machine whose speed drifts within minutes (shared, or
# paravirtualised: docs/bench.md) moves both sides of each ratio alike.
# Each bwrap turn also times the loops with the clients' own program,
# bwrap ... /usr/bin/echo 0-0 (the clients run /usr/bin/echo C-I, which
# costs more than `true`: it sets up its locale), for a second ratio with
# the same program on both sides.
#   THROUGHPUT_RUNS (3000)  THROUGHPUT_BWRAP_N (1000 per loop)  THROUGHPUT_PAIRS (3)
set -u
cd "$(dirname "$0")/../.."
. bench/median.sh
RT=${BUILD:-build}/bench/roundtrip
RUNS=${THROUGHPUT_RUNS:-3000}
BN=${THROUGHPUT_BWRAP_N:-1000}
PAIRS=${THROUGHPUT_PAIRS:-3}
command -v bwrap >/dev/null || { echo "bench-throughput: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
over_mean() { awk -v s="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%.2f", s / ((a + b) / 2)}'; } # S A B

bwrap_rate() { # FILE PROGRAM ARGS...: two loops at once; launches per second in all
	local a b f=$1
	shift
	"$RT" exec "$BN" 20 bwrap --unshare-all --die-with-parent --ro-bind / / "$@" >"$f.a" &
	"$RT" exec "$BN" 20 bwrap --unshare-all --die-with-parent --ro-bind / / "$@" >"$f.b" &
	wait
	a=$(field mean_ms "$(cat "$f.a")") b=$(field mean_ms "$(cat "$f.b")")
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
# The daemon's defaults but prewarm, which the harness (lib.sh) sets to 1 and
# the daemon defaults to 2, and the connection limit, which 32 clients pass.
DEFAULTS='{"limits": {"connections": 48}, "prewarm": 2}'
ECHO=(/usr/bin/echo 0-0)
b_prev=$(bwrap_rate "$tmp/b0" true) e_prev=$(bwrap_rate "$tmp/e0" "${ECHO[@]}")
B_ALL=$b_prev E_ALL=$e_prev C_ALL= RATIOS= E_RATIOS= PAIR_LINES=
for i in $(seq "$PAIRS"); do
	c=$(c_rate "$tmp/c$i" "$DEFAULTS") || { echo "bench-throughput: the C clients' run failed" >&2; exit 1; }
	b_next=$(bwrap_rate "$tmp/b$i" true) e_next=$(bwrap_rate "$tmp/e$i" "${ECHO[@]}")
	ratio=$(over_mean "$c" "$b_prev" "$b_next") e_ratio=$(over_mean "$c" "$e_prev" "$e_next")
	PAIR_LINES+=$(printf '    pair %d: sharness %s /s between bwrap %s and %s /s: %s (echo: %s and %s /s: %s)' \
		"$i" "$c" "$b_prev" "$b_next" "$ratio" "$e_prev" "$e_next" "$e_ratio")$'\n'
	B_ALL+=" $b_next" E_ALL+=" $e_next" C_ALL+=" $c" RATIOS+=" $ratio" E_RATIOS+=" $e_ratio"
	b_prev=$b_next e_prev=$e_next
done
r=$(c_rate "$tmp/r" '{"max_runs": 16, "queue_max": 0, "limits": {"connections": 48}, "prewarm": 2}') ||
	{ echo "bench-throughput: the C clients' run without a queue failed" >&2; exit 1; }
s=$(sharness_rate "$tmp/s")
b_last=$(bwrap_rate "$tmp/blast" true)
grep -q '^not ok' "$tmp/s.log" && { grep '^not ok' "$tmp/s.log"; echo "bench-throughput: the load run failed" >&2; exit 1; }
[ -n "$s" ] || { echo "bench-throughput: load.sh printed no rate" >&2; exit 1; }
B=$(printf '%s\n' $B_ALL | median) C=$(printf '%s\n' $C_ALL | median) RATIO=$(printf '%s\n' $RATIOS | median)
# The other two runs come after the pairs: against the last pair's bwrap and one after them.
B2=$(awk -v a="$b_prev" -v b="$b_last" 'BEGIN {printf "%.1f", (a + b) / 2}')
echo "throughput ($(uname -r), $(nproc) CPUs)"
printf '%s' "$PAIR_LINES"
printf '  %-62s %8s /s\n' "sharness, 32 C clients, $RUNS runs, every reply checked (median)" "$C"
printf '  %-62s %8s /s\n' "two parallel bwrap loops (median of $((PAIRS + 1)))" "$B"
printf '  %-62s %8s\n' "ratio sharness/bwrap (aim >= 1.0, SPEC 15.5; median of pairs)" "$RATIO"
printf '  %-62s %8s /s\n' "two bwrap loops of ${ECHO[*]} (the clients' program)" "$(printf '%s\n' $E_ALL | median)"
printf '  %-62s %8s\n' "ratio with the same program on both sides (median of pairs)" "$(printf '%s\n' $E_RATIOS | median)"
printf '  %-62s %8s /s\n' "... max_runs 16, no queue: 503s retried ($(field busy "$(cat "$tmp/r")") of them)" "$r"
printf '  %-62s %8s /s\n' "... that, 32 Python clients (load.sh: fields, leaks, memory)" "$s"
printf '  %-62s %8s /s\n' "two parallel bwrap loops around those (before $b_prev, after $b_last)" "$B2"
printf '  %-62s %8.2f\n' "ratio with no queue, 503s retried" "$(awk -v s="$r" -v b="$B2" 'BEGIN {print s / b}')"
printf '  %-62s %8.2f\n' "ratio with the Python clients" "$(awk -v s="$s" -v b="$B2" 'BEGIN {print s / b}')"
rm -rf "$tmp"
