# tests/e2e/lib_checks.sh - the TAP-like assertions tests/run.sh counts, sourced
# by lib.sh and by the scripts that start no daemon (check_config, install,
# systemd).  Any failure sets E2E_FAILED.
E2E_FAILED=0

ok() { echo "ok - $*"; }
not_ok() {
	local d=$1; shift
	echo "not ok - $d"
	# Every line of a detail is marked, so tests/run.sh's summary shows it whole.
	[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/#   /'
	E2E_FAILED=1
	return 0
}
check() { # DESC CMD... : ok when CMD exits 0
	local d=$1; shift
	if "$@" >/dev/null 2>&1; then ok "$d"; else not_ok "$d" "command failed: $*" "body: ${BODY:-}"; fi
}
check_eq() { # DESC GOT EXPECTED
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:      $2" "expected: $3"; fi
}
check_match() { # DESC GOT REGEX
	if [[ "$2" =~ $3 ]]; then ok "$1"; else not_ok "$1" "got:      $2" "expected to match: $3"; fi
}
