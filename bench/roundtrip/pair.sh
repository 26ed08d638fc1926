# bench/roundtrip/pair.sh - two builds' daemons side by side, for ab.sh and abcpu.sh (sourced).
#
#   pair_start DIR_A DIR_B   a daemon of each DIR's sharnessd (lib.sh's throwaway CA, workspace
#                            and config, prewarm 2), in TMP[A|B], PORTS[A|B] and PIDS[A|B]; both,
#                            and any relay a client started against them, stop when the
#                            script exits.
. tests/e2e/lib.sh >/dev/null
declare -A TMP PORTS PIDS
pair_stop() {
	for x in A B; do
		[ -n "${TMP[$x]:-}" ] || continue
		T=${TMP[$x]} DAEMON_PID=${PIDS[$x]}
		pkill -TERM -f -- "--ca $T/certs/ca.pem relay\$"
		e2e_cleanup >/dev/null 2>&1
	done
}
pair_start() {
	local -A dirs=([A]=$1 [B]=$2)
	trap pair_stop EXIT
	for x in A B; do
		[ "$x" = B ] && T=$(mktemp -d /tmp/sharness-e2e.XXXXXX)
		SHARNESSD=${dirs[$x]}/sharnessd
		e2e_start '{"prewarm": 2}' >/dev/null
		TMP[$x]=$T PORTS[$x]=$PORT PIDS[$x]=$DAEMON_PID
	done
}
