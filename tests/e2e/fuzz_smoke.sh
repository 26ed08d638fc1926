#!/usr/bin/env bash
# tests/e2e/fuzz_smoke.sh - the CI run of the libFuzzer targets: build them
# (clang, ASan+UBSan, coverage) and run each for FUZZ_SMOKE_SECONDS (5) over
# its committed corpus, which also replays every committed regression input.
# A fixed seed (FUZZ_SEED, 1) makes the smoke run repeatable: a red CI is
# never a dice roll.  `make fuzz` explores with fresh seeds; what it finds
# goes into the corpus as a regression input.
# One "ok"/"not ok" line per target (tests/fuzz/run.sh); `make fuzz` is the long run.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if ! command -v clang >/dev/null; then
	echo "not ok - fuzz targets: clang is not installed (scripts/deps.sh installs it)"
	exit 1
fi
if ! make -s fuzz-build >build/fuzz-build.log 2>&1; then
	echo "not ok - fuzz targets build"
	tail -20 build/fuzz-build.log | sed 's/^/#   /'
	exit 1
fi
echo "ok - fuzz targets build"
before=$(ls -d /tmp/sharness-fuzz-ws.* 2>/dev/null | wc -l)
FUZZ_SEED=${FUZZ_SEED:-1} tests/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-5}" request profile config scrub check proxy
rc=$?
# fuzz_request makes two workspaces in /tmp for its requests to name.
after=$(ls -d /tmp/sharness-fuzz-ws.* 2>/dev/null | wc -l)
if [ "$after" -le "$before" ]; then
	echo "ok - the fuzz targets leave no workspace in /tmp"
else
	echo "not ok - the fuzz targets leave no workspace in /tmp ($before before, $after after)"
	rc=1
fi
exit $rc
