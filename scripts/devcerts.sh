#!/usr/bin/env bash
# Make the development certificates once (used by `make run`).  They live
# outside the checkout, which is the daemon's default workspace (SPEC §15.2:
# no run may read the CA or server key): /var/lib/sharness-dev/<first 12 hex
# digits of the SHA-256 of the checkout's real path>/certs, the directory the
# daemon's embedded defaults use (daemon/common/config.c dev_path).
#   scripts/devcerts.sh --dir   print that directory and make nothing
set -eu
base=/var/lib/sharness-dev/$(printf '%s' "$(realpath .)" | sha256sum | cut -c1-12)
dir=$base/certs
if [ "${1:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi
if [ ! -f "$dir/ca.pem" ]; then
	mkdir -p -m 0700 "$base"
	certs/mkcerts "$dir" >/dev/null
	echo "made development certificates in $dir" >&2
fi
if [ -f .sharness/certs/ca.key ]; then
	echo "note: .sharness/certs (inside the checkout) is no longer used; remove it: rm -rf .sharness" >&2
fi
