#!/usr/bin/env bash
# debian/make-deb.sh OUTDIR - `make deb`: build sharness_<version>_amd64.deb in
# a copy of the tree and leave it in OUTDIR (build/deb), then run lintian.
#
# dpkg-buildpackage builds in the source tree (build/, debian/sharness/, ...),
# so the tree is copied first: the working tree's files (tracked and untracked,
# not ignored; others' build/ dirs never), or with DEB_SRC=REV the commit REV
# (git archive); outside a git work tree, everything but build/.  Installs
# dpkg-dev, debhelper, lintian and fakeroot when missing (the build packages
# come from `make deps`).
set -eu -o pipefail
out=${1:?usage: debian/make-deb.sh OUTDIR}
cd "$(dirname "$0")/.."

missing=()
for p in dpkg-dev debhelper lintian fakeroot; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deb: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

stage=$(mktemp -d /var/tmp/sharness-deb.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/src"
if [ -n "${DEB_SRC:-}" ]; then
	git archive "$DEB_SRC" | tar -xf - -C "$stage/src"
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Files deleted in the working tree are still listed by git ls-files -c.
	git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -xf - -C "$stage/src"
else
	# A copy of the tree without .git (tests/vm/run.sh's stage): all but build/.
	tar --exclude=./build -cf - . | tar -xf - -C "$stage/src"
fi

echo "deb: dpkg-buildpackage -us -uc -b in $stage/src" >&2
if ! (cd "$stage/src" && dpkg-buildpackage -us -uc -b -jauto) >"$stage/build.log" 2>&1; then
	tail -40 "$stage/build.log" >&2
	echo "deb: dpkg-buildpackage failed" >&2
	exit 1
fi
mkdir -p "$out"
rm -f "$out"/sharness_*.deb
cp "$stage"/sharness_*.deb "$out"/
deb=$(ls "$out"/sharness_*.deb)
echo "deb: $deb" >&2
# Errors fail the target; each warning kept is overridden with its reason
# in debian/sharness.lintian-overrides (see debian/README.source).
lintian --fail-on error,warning --info "$deb"
