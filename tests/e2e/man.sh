#!/usr/bin/env bash
# tests/e2e/man.sh - every man page is clean under `mandoc -Tlint`: no error,
# no warning and no style message (issue 17); and under groff's warnings, as
# lintian reads it (mandoc accepts some escapes groff misreads: \e\n is a
# backslash then a number register, not "\n").  Checked twice: the pages as
# they are in man/, and as `make install PREFIX=/usr` (the Debian package)
# writes them, since install.mk rewrites paths inside sharnessd.8 and
# sharnessd.json.5 and a longer path could push a line past 80 bytes.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/sharness-man.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/e2e/lib_checks.sh"

if ! command -v mandoc >/dev/null 2>&1; then
	# Not in scripts/deps.sh's list yet: fail where it could run, say so.
	not_ok "mandoc is installed (apt-get install mandoc)"
	exit 1
fi

pages=("$ROOT"/man/*.[1-9])
check "man/ has pages" test ${#pages[@]} -ge 4
for p in "${pages[@]}"; do
	out=$(mandoc -Tlint -W style "$p" 2>&1)
	check_eq "mandoc -Tlint ${p#"$ROOT"/}: no message" "$out" ""
	out=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$p" 2>&1)
	check_eq "groff -ww ${p#"$ROOT"/}: no warning" "$out" ""
done

# Each page's header names the version of daemon/common/version.h.
version=$(sed -n 's/^#define SHARNESS_VERSION "\(.*\)"$/\1/p' "$ROOT/daemon/common/version.h")
for p in "${pages[@]}"; do
	check_eq "${p#"$ROOT"/}: its .TH names sharness $version" "$(awk '$1 == ".TH" {print $5, $6; exit}' "$p")" "\"sharness $version\""
done

# The installed pages, paths rewritten for PREFIX=/usr.
if make -s -C "$ROOT" --no-print-directory INSTALL_STAGE="$T/stage" PREFIX=/usr \
	install-stage >"$T/make.log" 2>&1; then
	for p in "$T"/stage/*.[1-9]; do
		out=$(mandoc -Tlint -W style "$p" 2>&1)
		check_eq "mandoc -Tlint installed ${p##*/} (PREFIX=/usr): no message" "$out" ""
	done
else
	not_ok "make install-stage PREFIX=/usr" "$(cat "$T/make.log")"
fi
[ "$E2E_FAILED" = 0 ]
