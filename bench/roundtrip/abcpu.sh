#!/usr/bin/env bash
# bench/roundtrip/abcpu.sh - what a run costs the machine, two builds of the daemon compared.
#
#   bench/roundtrip/abcpu.sh DIR_A DIR_B [ROUNDS] [N]
#   make bench-ab-cpu AB_A=DIR_A AB_B=DIR_B
#
# Each DIR holds a sharnessd and its sharnessd-front, as for ab.sh.  Both
# daemons run side by side, idle but for their prepared sandboxes; ROUNDS
# times (default 4), in turn, N kept-alive runs of {"cmd":"/usr/bin/true"} back
# to back (default 200; ROUNDTRIP_CMD for another) go to each.  Per round and
# build it prints the whole machine's busy CPU time per run (/proc/stat, every
# process and kernel worker of the run included, the building of the next
# sandbox too) and its page faults per run (/proc/vmstat pgfault), and the
# round trip's median.
# Both figures count the other daemon's idle time as well, so only a
# quiet machine gives them; compare A and B within a round.
set -u
cd "$(dirname "$0")/../.." || exit 1
[ $# -ge 2 ] && [ -x "$1/sharnessd" ] && [ -x "$2/sharnessd" ] || {
	echo "usage: $0 DIR_A DIR_B [ROUNDS] [N]   (each DIR: a sharnessd and its sharnessd-front)" >&2
	exit 2
}
A=$1 B=$2 ROUNDS=${3:-4} N=${4:-200}
RT=$(realpath "${BUILD:-build}/bench/roundtrip")
. bench/roundtrip/pair.sh
pair_start "$A" "$B"
busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; } # user nice system irq softirq
faults() { awk '/^pgfault /{print $2}' /proc/vmstat; }
tick_ms=$((1000 / $(getconf CLK_TCK)))
echo "CPU per run, A = $A, B = $B: $ROUNDS rounds of $N kept-alive runs each, alternating ($(uname -r), $(nproc) CPUs)"
for r in $(seq "$ROUNDS"); do
	for x in A B; do
		T=${TMP[$x]} P=${PORTS[$x]}
		"$RT" run 127.0.0.1 "$P" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key" 20 2 >/dev/null
		b0=$(busy) f0=$(faults)
		m=$("$RT" run 127.0.0.1 "$P" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key" "$N" 0 |
			sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
		sleep 0.3 # the last run's teardown and the next sandbox's build
		b1=$(busy) f1=$(faults)
		[ -n "$m" ] || { echo "abcpu: a round against ${!x} failed" >&2; exit 1; }
		printf '  round %d  %s  CPU %6.2f ms/run  %4d page faults/run  round trip median %s ms\n' "$r" "$x" \
			"$(echo "($b1 - $b0) * $tick_ms / $N" | bc -l)" $(((f1 - f0) / N)) "$m"
	done
done
