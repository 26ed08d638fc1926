#!/usr/bin/env bash
# `make run`: the daemon in the foreground on the embedded development defaults
# (certificates and state outside the checkout; scripts/devcerts.sh).
set -eu
dir=$(scripts/devcerts.sh --dir)
cat <<MSG
Starting sharnessd on https://127.0.0.1:7443 (Ctrl-C stops it). In another terminal:

  curl --cacert $dir/ca.pem --cert $dir/app.pem --key $dir/app.key \\
       -H 'Content-Type: application/json' -d '{"cmd":"echo hello from the sandbox; id"}' \\
       https://127.0.0.1:7443/v0/run

MSG
exec build/sharnessd
