#!/usr/bin/env bash
# bench/roundtrip/ab.sh - the round trip of two builds of the daemon, interleaved.
#
#   bench/roundtrip/ab.sh DIR_A DIR_B [BLOCKS] [N] [GAPS]
#   make bench-ab AB_A=DIR_A AB_B=DIR_B
#
# Each DIR holds a sharnessd and its sharnessd-front (copies of build/ at two
# commits).  Both daemons run side by side; blocks of N requests alternate
# between them (A, B, A, B, ...), BLOCKS blocks each, so that the machine's
# drift, which on a shared virtual machine is as large as the differences
# worth measuring, hits both alike.  Per pace (GAPS: ms before each
# request, "0 10" by default) it prints the median of the blocks' medians for
# the kept-alive connection and for sharness-client run -- /usr/bin/true started
# fresh through its relay.  Swap A and B for a second run: an order effect
# shows as a change that follows the position.  ROUNDTRIP_CMD names another
# command for both (roundtrip.c).
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/median.sh
[ $# -ge 2 ] && [ -x "$1/sharnessd" ] && [ -x "$2/sharnessd" ] || {
	echo "usage: $0 DIR_A DIR_B [BLOCKS] [N] [GAPS]   (each DIR: a sharnessd and its sharnessd-front)" >&2
	exit 2
}
A=$1 B=$2 BLOCKS=${3:-30} N=${4:-40} GAPS=${5:-0 10}
RT=$(realpath "${BUILD:-build}/bench/roundtrip")
. bench/roundtrip/pair.sh
pair_start "$A" "$B"
client() { # X ARGS...: the client against daemon X, through its relay
	local t=${TMP[$1]} port=${PORTS[$1]}
	shift
	(cd "$t/ws" && SHARNESS_URL=https://127.0.0.1:$port SHARNESS_CA=$t/certs/ca.pem \
		SHARNESS_CERT=$t/certs/app.pem SHARNESS_KEY=$t/certs/app.key SHARNESS_TICKETS=$t/tickets \
		SHARNESS_RELAY=on "$@")
}
for x in A B; do
	mkdir -p -m 700 "${TMP[$x]}/tickets"
	client "$x" "$CLIENT" run -- true >/dev/null || {
		echo "ab: the client's first run against ${!x} failed" >&2
		exit 1
	}
done
field() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'; }
echo "round trip, A = $A, B = $B: $BLOCKS blocks of $N each, alternating ($(uname -r), $(nproc) CPUs)"
for gap in $GAPS; do
	export ROUNDTRIP_GAP_MS=$gap
	declare -A KEPT=([A]= [B]=) FRESH=([A]= [B]=)
	for _ in $(seq "$BLOCKS"); do
		for x in A B; do
			T=${TMP[$x]} P=${PORTS[$x]}
			k=$("$RT" run 127.0.0.1 "$P" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key" "$N" 3 | field)
			c=$(client "$x" "$RT" exec "$N" 3 "$CLIENT" run -- "${ROUNDTRIP_CMD:-/usr/bin/true}" | field)
			[ -n "$k" ] && [ -n "$c" ] || { echo "ab: a block against ${!x} failed" >&2; exit 1; }
			KEPT[$x]+=" $k" FRESH[$x]+=" $c"
		done
	done
	for x in A B; do
		printf '  %s ms pause  %s  kept-alive %8s ms   fresh client %8s ms\n' "$gap" "$x" \
			"$(printf '%s\n' ${KEPT[$x]} | median)" "$(printf '%s\n' ${FRESH[$x]} | median)"
	done
done
