#!/usr/bin/env bash
# scripts/deps.sh - install the Debian packages sharness needs, only those missing.
#
# The same list on Debian 12 and 13: no name carries a compiler version.
# libclang-rt-dev (the sanitizer and libFuzzer runtimes) is the unversioned
# package that follows the default clang (-> libclang-rt-14-dev on 12,
# libclang-rt-19-dev on 13).  libzstd-dev and zlib1g-dev: Debian 13's
# libcrypto.a calls into zstd and zlib, so the static client links their .a
# (client/client.mk takes the list from pkg-config --static).
set -eu
pkgs=(build-essential pkg-config libmicrohttpd-dev libgnutls28-dev libssl-dev libseccomp-dev
      libcjson-dev libcgroup-dev libjansson-dev libvectorscan-dev libzstd-dev zlib1g-dev
      curl jq openssl python3 bubblewrap strace file clang clang-tidy libclang-rt-dev
      iproute2 systemd man-db mandoc groff-base util-linux)
# With --test (make test, make asan-test): the toolchains the test profile's
# end-to-end test builds and tests with (tests/e2e/toolchains.sh), Debian's,
# in /usr, which a sandbox sees (one in a home directory, like rustup's, it
# does not).  Not for `make run` or the VM images (tests/vm/vmlab reads the
# pkgs list above).  zsh and fish: the shells an agent may run a hook's
# rewritten command in (tests/e2e/hook.sh reads it back in each).
toolchains=(golang-go cargo rustc python3-pytest zsh fish)
if [ "${1:-}" = --test ]; then
	for p in "${toolchains[@]}"; do pkgs[${#pkgs[@]}]=$p; done
fi
# Node.js (for the MCP SDK test) may come from elsewhere than Debian, with
# its own npm: take Debian's only when there is none at all.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# A release without the unversioned runtime package: take the one of
	# the clang version its clang package depends on (clang -> clang-NN).
	for i in "${!missing[@]}"; do
		[ "${missing[$i]}" = libclang-rt-dev ] || continue
		apt-cache show libclang-rt-dev >/dev/null 2>&1 && continue
		v=$(apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n 1)
		[ -n "$v" ] || { echo "deps: no libclang-rt-dev and no clang-NN to derive it from" >&2; exit 1; }
		missing[$i]=libclang-rt-$v-dev
	done
	echo "deps: installing ${missing[*]}" >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
