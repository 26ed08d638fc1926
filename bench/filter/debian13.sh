#!/usr/bin/env bash
# bench/filter/debian13.sh - the secret filter per content class (classes.sh)
# as Debian 13 runs it (issue 16.3): the same filter_bench, loaded with the
# Vectorscan of Debian 13's libvectorscan5 and the libraries it needs (its
# C library, libstdc++, libgcc), taken from Debian 13's packages into
# $B/debian13 and loaded by that C library's own loader.  Twice: as this CPU
# runs it, and as a CPU without AVX-512 runs it (avx2_shim.c, as make
# bench-filter-avx2).  Vectorscan is most of the filter's time, and Debian
# 12 ships an older release of it (5.4.9): this shows what a user of the
# current Debian gets, side by side with make bench-filter-classes.
#
# DEBIAN13_MIRROR: a Debian mirror that serves trixie (default
# http://deb.debian.org/debian).  apt-get runs with a state directory of its
# own: nothing is installed and the system's apt lists are not touched.
set -eu
cd "$(dirname "$0")/../.."
B=${BUILD:-build}/bench
mkdir -p "$B"
D=$(cd "$B" && pwd)/debian13 # absolute: apt-get is given paths in it
MIRROR=${DEBIAN13_MIRROR:-http://deb.debian.org/debian}
PACKAGES="libvectorscan5 libc6 libstdc++6 libgcc-s1"
if [ "$(dpkg --print-architecture 2>/dev/null)" != amd64 ]; then
	echo "debian13.sh: this benchmark is for amd64 (Vectorscan's AVX2 and AVX-512 builds); this is $(uname -m)" >&2
	exit 1
fi
LIB=$D/root/usr/lib/x86_64-linux-gnu
if [ ! -x "$LIB/ld-linux-x86-64.so.2" ] || [ ! -e "$LIB/libhs.so.5" ] ||
	! compgen -G "$D/debs/libvectorscan5_*.deb" >/dev/null || ! compgen -G "$D/debs/libc6_*.deb" >/dev/null; then
	echo "fetching Debian 13's $PACKAGES from $MIRROR into $D ..."
	rm -rf "$D"
	mkdir -p "$D/apt/sources.list.d" "$D/apt/lists/partial" "$D/apt/cache/archives/partial" "$D/debs" "$D/root"
	printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$MIRROR" >"$D/apt/sources.list.d/trixie.sources"
	apt_opts=(-q -o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$D/apt/sources.list.d"
		-o "Dir::State::Lists=$D/apt/lists" -o "Dir::Cache=$D/apt/cache" -o "APT::Sandbox::User=$(id -un)")
	# shellcheck disable=SC2086 # PACKAGES is a list of words
	if ! apt-get "${apt_opts[@]}" update >"$D/apt.log" 2>&1 ||
		! (cd "$D/debs" && apt-get "${apt_opts[@]}" download $PACKAGES >>"$D/apt.log" 2>&1); then
		echo "debian13.sh: cannot fetch Debian 13's packages from $MIRROR (see $D/apt.log): set DEBIAN13_MIRROR to a mirror that serves trixie" >&2
		exit 1
	fi
	for deb in "$D"/debs/*.deb; do dpkg-deb -x "$deb" "$D/root"; done
fi
echo "Debian 13's Vectorscan: libvectorscan5 $(dpkg-deb -f "$D"/debs/libvectorscan5_*.deb Version), C library $(dpkg-deb -f "$D"/debs/libc6_*.deb Version)"
echo "as this CPU runs it:"
BUILD=${BUILD:-build} FILTER_LIBS=$LIB bench/filter/classes.sh
echo "as a CPU without AVX-512 runs it: Vectorscan's AVX2 build (bench/filter/avx2_shim.c), SHARNESS_FILTER_AVX512=off"
BUILD=${BUILD:-build} FILTER_LIBS=$LIB FILTER_PRELOAD=$(realpath "$B/avx2_shim.so") SHARNESS_FILTER_AVX512=off \
	bench/filter/classes.sh
