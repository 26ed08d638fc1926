#!/usr/bin/env bash
# Make the development certificates once (used by `make run`).
set -eu
dir=.sharness/certs
if [ ! -f "$dir/ca.pem" ]; then
	certs/mkcerts "$dir" >/dev/null
	echo "made development certificates in $dir" >&2
fi
