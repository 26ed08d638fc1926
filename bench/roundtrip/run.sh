#!/usr/bin/env bash
# bench/roundtrip/run.sh - SPEC §13's round trip, measured side by side in one run:
#   sharness  median of POST /v0/run {"cmd":"/usr/bin/true"} on ONE kept-alive
#             mTLS connection to a real daemon (every lock on), after a
#             warm-up: the program bwrap runs below, exec'd without bash
#             (a command of plain words, asrun/directexec.h)
#   bwrap     fork+exec of bwrap --unshare-all --die-with-parent --ro-bind / / true
#   bash      fork+exec of bash -c true
#   client    fork+exec of `sharness-client run -- /usr/bin/true`, a new
#             process each time as an agent's hook starts it, with
#             SHARNESS_RELAY unset: through the relay started beforehand as
#             the user unit sharness-relay.service runs it (client/relay.h,
#             SHARNESS_RELAY_IDLE=0), its socket and the tickets in a directory on
#             tmpfs, where the client keeps them by default
#             ($XDG_RUNTIME_DIR, else /dev/shm)
#   client-norelay  the same with SHARNESS_RELAY=off: its TLS set up from
#             nothing, the session resumed from the ticket the one before
#             left (client/ticket.h)
#   client-full  SHARNESS_TICKETS=off: no relay and a full mTLS handshake
#             each time, as before tickets
#   through bash: {"cmd":"true"} kept-alive and `sharness-client run -- true`
#             (true is bash's builtin: bash starts, as for any command that
#             needs the shell), against bwrap ... bash -c true
# and the ratios sharness/bwrap and client/bwrap (aim: <= 1.0), and SPEC §15.5's
# figure as it is written: `run -- true` (bash starts) against bwrap's program.
# Uses the e2e harness to start the daemon on a free port with throwaway
# certificates.
#   ROUNDTRIP_N (300)  ROUNDTRIP_WARMUP (30)  ROUNDTRIP_CONFIG (extra config JSON; default
#   {"prewarm": 2}, the daemon's own default: the tests' harness builds 1)
#   ROUNDTRIP_GAPS ("0 10": back to back, then a 10 ms pause before each sample)
#   ROUNDTRIP_CLIENT_N (100): fresh client processes per round
set -u
cd "$(dirname "$0")/../.."
. bench/median.sh
N=${ROUNDTRIP_N:-300}
CN=${ROUNDTRIP_CLIENT_N:-100} # fresh clients per round: each is a whole TLS set-up
WARM=${ROUNDTRIP_WARMUP:-30}
RT=$(realpath -m "${BUILD:-build}/bench/roundtrip")
. tests/e2e/lib.sh >/dev/null
e2e_start "${ROUNDTRIP_CONFIG:-{\"prewarm\": 2\}}" >/dev/null
SHARNESS_TICKETS=$(mktemp -d "${XDG_RUNTIME_DIR:-/dev/shm}/sharness-bench.XXXXXX") || exit 1
export SHARNESS_TICKETS
# The relay as the user unit runs it (systemd/sharness-relay.service), and
# the clients with SHARNESS_RELAY unset, as a hook's are (lib.sh sets off).
unset SHARNESS_RELAY
stop_relay() { pkill -TERM -f -- "--ca $T/certs/ca.pem relay\$"; }
trap 'stop_relay; rm -rf "$SHARNESS_TICKETS"; e2e_cleanup' EXIT
SHARNESS_RELAY_IDLE=0 "$CLIENT" --url "$SHARNESS_URL" --cert "$SHARNESS_CERT" --key "$SHARNESS_KEY" --ca "$SHARNESS_CA" \
	relay </dev/null >/dev/null 2>&1 &
for _ in $(seq 1 100); do compgen -G "$SHARNESS_TICKETS/*.relay" >/dev/null && break; sleep 0.05; done
command -v bwrap >/dev/null || { echo "bench-roundtrip: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
ms() { printf '  %-62s %8.3f ms\n' "$1" "$2"; }                                      # LABEL MS
ratio() { printf '  %-62s %8.2f\n' "$1" "$(awk -v a="$2" -v b="$3" 'BEGIN {print a / b}')"; } # LABEL A B
# Two paces: back to back (the SPEC's figure: the next request arrives while
# the daemon still prepares the sandbox for the one after), and with a pause
# before each sample as an agent thinks between commands (every kind alike).
for gap in ${ROUNDTRIP_GAPS:-0 10}; do
	export ROUNDTRIP_GAP_MS=$gap
	# Interleave three rounds of each so that drift on the machine hits all
	# alike; the reported median is over the rounds' medians.
	s_all=() b_all=() h_all=() c_all=() n_all=() f_all=() sb_all=() cb_all=() bb_all=()
	for round in 1 2 3; do
		s=$("$RT" run 127.0.0.1 "$PORT" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key" "$N" "$WARM") || exit 1
		b=$("$RT" exec "$N" "$WARM" bwrap --unshare-all --die-with-parent --ro-bind / / true) || exit 1
		h=$("$RT" exec "$N" "$WARM" bash -c true) || exit 1
		c=$(cd "$WS" && "$RT" exec "$CN" "$WARM" "$CLIENT" run -- /usr/bin/true) || exit 1 # its cwd is the workspace
		n=$(cd "$WS" && SHARNESS_RELAY=off "$RT" exec "$CN" "$WARM" "$CLIENT" run -- /usr/bin/true) || exit 1
		f=$(cd "$WS" && SHARNESS_TICKETS=off "$RT" exec "$CN" "$WARM" "$CLIENT" run -- /usr/bin/true) || exit 1
		sb=$(ROUNDTRIP_CMD=true "$RT" run 127.0.0.1 "$PORT" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key" "$N" "$WARM") ||
			exit 1
		cb=$(cd "$WS" && "$RT" exec "$CN" "$WARM" "$CLIENT" run -- true) || exit 1
		bb=$("$RT" exec "$N" "$WARM" bwrap --unshare-all --die-with-parent --ro-bind / / bash -c true) || exit 1
		s_all+=("$(field median_ms "$s")") b_all+=("$(field median_ms "$b")") h_all+=("$(field median_ms "$h")")
		c_all+=("$(field median_ms "$c")") n_all+=("$(field median_ms "$n")") f_all+=("$(field median_ms "$f")")
		sb_all+=("$(field median_ms "$sb")") cb_all+=("$(field median_ms "$cb")") bb_all+=("$(field median_ms "$bb")")
		printf '# gap %s ms, round %d: sharness %s | bwrap %s | bash %s | client %s | client-norelay %s | client-full %s' \
			"$gap" "$round" "$s" "$b" "$h" "$c" "$n" "$f"
		printf ' | sharness-bash %s | client-bash %s | bwrap-bash %s\n' "$sb" "$cb" "$bb"
	done
	S=$(median "${s_all[@]}") B=$(median "${b_all[@]}") H=$(median "${h_all[@]}") C=$(median "${c_all[@]}") NR=$(median "${n_all[@]}")
	F=$(median "${f_all[@]}") SB=$(median "${sb_all[@]}") CB=$(median "${cb_all[@]}") BB=$(median "${bb_all[@]}")
	if [ "$gap" = 0 ]; then pace="back to back"; else pace="$gap ms pause before each"; fi
	echo "roundtrip, $pace (median of 3 rounds of $N after $WARM warm-up each; kernel $(uname -r), $(nproc) CPUs)"
	ms "sharness POST /v0/run {\"cmd\":\"/usr/bin/true\"}, kept-alive mTLS" "$S"
	ms "bwrap --unshare-all --die-with-parent --ro-bind / / true" "$B"
	ms "bash -c true" "$H"
	ratio "ratio sharness/bwrap (aim <= 1.0)" "$S" "$B"
	ratio "ratio sharness/bash" "$S" "$H"
	ms "sharness-client run -- /usr/bin/true, fresh each ($CN), relay" "$C"
	ratio "ratio client/bwrap, the same program (aim <= 1.0)" "$C" "$B"
	ms "... with SHARNESS_RELAY=off: its own TLS, resumed" "$NR"
	ratio "ratio client-norelay/bwrap" "$NR" "$B"
	ms "... with SHARNESS_TICKETS=off: a full mTLS handshake each" "$F"
	ratio "ratio client-full/bwrap" "$F" "$B"
	echo "  through bash (true is its builtin; a command that needs the shell pays the same):"
	ms "sharness {\"cmd\":\"true\"}, kept-alive" "$SB"
	ms "sharness-client run -- true, relay" "$CB"
	ms "bwrap --unshare-all ... --ro-bind / / bash -c true" "$BB"
	ratio "ratio sharness/bwrap, both through bash" "$SB" "$BB"
	ratio "ratio client/bwrap, both through bash" "$CB" "$BB"
	ratio "ratio client run -- true/bwrap ... true (SPEC 15.5 as written)" "$CB" "$B"
done
