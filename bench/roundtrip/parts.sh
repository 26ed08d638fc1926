#!/usr/bin/env bash
# bench/roundtrip/parts.sh - where a kept-alive run's CPU goes, part by part.
#
#   bench/roundtrip/parts.sh [RUNS]      (make bench-parts, PARTS_N=RUNS)
#
# Starts a daemon (the e2e harness, {"prewarm": 2}), warms it up, then
# records the scheduler's events (`perf sched record`) while RUNS
# POST /v0/run {"cmd":"/usr/bin/true"} go back to back on one kept-alive
# connection (default 200; ROUNDTRIP_GAP_MS=10 pauses before each;
# ROUNDTRIP_CMD=true to start bash), and prints the CPU time per run of each
# part: the command, the supervisor, the init, the launcher,
# the waiting threads, the front, kernel workers (parts.py says how tasks
# are told apart).  The window holds the builds of the sandboxes for the runs
# after it instead of those before it: about the same work.  Needs perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
N=${1:-200}
command -v perf >/dev/null || { echo "bench-parts: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
RT=$(realpath -m "${BUILD:-build}/bench/roundtrip")
OUT=$(mktemp -d) || exit 1
. tests/e2e/lib.sh >/dev/null
e2e_start '{"prewarm": 2}' >/dev/null
trap 'rm -rf "$OUT"; e2e_cleanup' EXIT
daemon=(127.0.0.1 "$PORT" "$T/certs/ca.pem" "$T/certs/app.pem" "$T/certs/app.key")
"$RT" run "${daemon[@]}" 30 0 >/dev/null || exit 1
perf sched record -q -o "$OUT/sched.data" -- "$RT" run "${daemon[@]}" "$N" 0 >"$OUT/rt" 2>"$OUT/err" ||
	{ cat "$OUT/err" >&2; exit 1; }
echo "a kept-alive run's CPU by part ($N runs of {\"cmd\":\"${ROUNDTRIP_CMD:-/usr/bin/true}\"}, pause ${ROUNDTRIP_GAP_MS:-0} ms; $(uname -r), $(nproc) CPUs; round trip $(sed -n 's/.*\(median_ms=[0-9.]*\).*/\1/p' "$OUT/rt"))"
perf script -i "$OUT/sched.data" -F comm,pid,tid,event,trace 2>/dev/null | python3 bench/roundtrip/parts.py "$N"
