#!/usr/bin/env bash
# bench/filter/classes.sh - the secret filter per content class (issue 16.3):
# source code, build logs, JSON, minified JavaScript, base64 blobs and prose
# (bench/filter/classes.py, BENCH_CLASS_MB each, default 40), with every rule
# and 1,000 vault keys (mklog.py's).  One line per class: the filter's own
# rate (its summary line: start-up, reading and writing excluded; best of
# 3, output to /dev/null), the goal (2,000 MB/s per core), and how many lines
# it changed (none holds a credential: each changed line is a false positive).
set -eu
cd "$(dirname "$0")/../.."
B=${BUILD:-build}/bench
MB=${BENCH_CLASS_MB:-40}
FILTER=$B/filter_bench
# FILTER_PRELOAD: a library for the filter's runs only (make bench-filter-avx2).
# FILTER_LIBS: a directory of other shared libraries, its loader among them,
# that the filter runs with instead of the system's (make bench-filter-debian13).
filter() {
	if [ -n "${FILTER_LIBS:-}" ]; then
		LD_PRELOAD=${FILTER_PRELOAD:-} "$FILTER_LIBS/ld-linux-x86-64.so.2" --library-path "$FILTER_LIBS" "$FILTER" "$@"
	else
		LD_PRELOAD=${FILTER_PRELOAD:-} "$FILTER" "$@"
	fi
}
mkdir -p "$B/classes"
[ -f "$B/secrets.txt" ] || python3 bench/filter/mklog.py "$B/in.log" "$B/creds.txt" "$B/secrets.txt" 8
echo "building ${MB} MB per class in $B/classes ..."
python3 bench/filter/classes.py "$B/classes" "$MB"
printf '%-10s %10s %12s %6s %14s\n' class MB "filter MB/s" goal "lines changed"
for c in source buildlog json minjs base64 prose; do
	in=$B/classes/$c.txt
	best=$(for _ in $(seq "${BENCH_CLASS_TRIES:-9}"); do filter --secrets "$B/secrets.txt" <"$in" 2>&1 >/dev/null |
		sed -n 's/.* \([0-9.]*\) MB\/s (.*/\1/p'; done | sort -n | tail -1)
	changed=$(filter --secrets "$B/secrets.txt" <"$in" 2>/dev/null | diff "$in" - | grep -c '^<' || true)
	verdict=$(echo "$best >= 2000" | bc -l | sed 's/1/met/;s/0/below/')
	printf '%-10s %10d %12s %6s %14s\n' "$c" "$(($(stat -c %s "$in") >> 20))" "$best" "$verdict" "$changed"
done
