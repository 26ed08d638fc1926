#!/usr/bin/env bash
# scripts/deps.sh - install the Debian packages sharness needs, only those missing.
set -eu
pkgs=(build-essential pkg-config libmicrohttpd-dev libgnutls28-dev libssl-dev libseccomp-dev
      libcjson-dev libcgroup-dev libjansson-dev libvectorscan-dev curl jq openssl python3
      bubblewrap strace file clang clang-tidy libclang-rt-14-dev iproute2 systemd man-db util-linux)
# Node.js (for the MCP SDK test) may come from elsewhere than Debian, with
# its own npm: take Debian's only when there is none at all.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
