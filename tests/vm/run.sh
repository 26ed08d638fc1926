#!/usr/bin/env bash
# tests/vm/run.sh [NAME...] - boot each real system and run tests/vm/guest.sh
# there (make vm-test).  NAME: bookworm (Debian 12, stock 6.1), bookworm-bpo
# (Debian 12 + the backports kernel), trixie (Debian 13); default: all three
# (VMS="..." overrides).  Prints the guest's ok/not ok lines prefixed with the
# system's name and ends with one "N passed, N failed" line.
#
# The images are made once with debootstrap by tests/vm/vmlab (cached in
# /var/cache/vmlab; a few minutes each).  Where this machine's KVM cannot boot
# the distribution kernels, qemu runs under TCG (about 10x slower), so the
# binaries are built here and copied in for bookworm (the same distribution
# as this machine is the one that builds them); a system of another
# distribution builds them itself, which is its "build" check.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
names=("$@")
[ ${#names[@]} -eq 0 ] && read -r -a names <<<"${VMS:-bookworm bookworm-bpo trixie}"
VMLAB=$ROOT/tests/vm/vmlab
LOGS=${VMLAB_LOGS:-$ROOT/build/vm-logs}
mkdir -p "$LOGS"
export VMLAB_LOGS=$LOGS
# Nested KVM here stops in the distribution kernels' decompressor without
# always saying so on qemu's stderr: TCG unless told otherwise.
export VMLAB_ACCEL=${VMLAB_ACCEL:-tcg}
host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")

pass=0 fail=0
for name in "${names[@]}"; do
	if ! "$VMLAB" build "$name" >"$LOGS/build-$name.out" 2>&1; then
		echo "not ok - $name: the image builds (see $LOGS/build-$name.out)"
		tail -5 "$LOGS/build-$name.out" | sed 's/^/#   /'
		fail=$((fail + 1))
		continue
	fi
	stage=$(mktemp -d /var/tmp/sharness-vm.XXXXXX)
	git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$stage"
	vm_build=1
	case "$name" in bookworm | bookworm-bpo) [ "$host_suite" = bookworm ] && vm_build=0 ;; esac
	if [ "$vm_build" = 0 ]; then
		mkdir -p "$stage/build"
		cp -a build/sharnessd build/sharnessd-front build/sharness-actor build/sharness-client build/probes "$stage/build/"
		# The package built here (make deb) is checked on the same distribution.
		if compgen -G 'build/deb/sharness_*_amd64.deb' >/dev/null; then
			mkdir -p "$stage/build/deb" && cp -a build/deb/sharness_*_amd64.deb "$stage/build/deb/"
		fi
	fi
	start=$(date +%s)
	if [ "$name" = bookworm ] && [ "${VM_FAULTS:-1}" = 1 ] && [ "$vm_build" = 0 ]; then
		# The same system booted without Landlock and without the pids
		# controller: the refusals must say what is true there.
		(cd "$stage" && VMLAB_APPEND="lsm=lockdown,capability,yama,apparmor,tomoyo,bpf cgroup_disable=pids" \
			"$VMLAB" run "$name" --mem 2048 --timeout 900 -- bash tests/vm/guest_faults.sh) \
			>"$LOGS/run-$name-faults.out" 2>&1
		frc=$?
		fp=$(grep -c '^ok ' "$LOGS/run-$name-faults.out") ff=$(grep -c '^not ok ' "$LOGS/run-$name-faults.out")
		[ "$frc" -ne 0 ] && [ "$ff" -eq 0 ] && { ff=1; echo "not ok - $name (faults): the VM run exited $frc"; }
		grep -E '^(ok|not ok|#)' "$LOGS/run-$name-faults.out" | sed "s/^\(ok - \|not ok - \)/\1$name (no Landlock, no pids): /"
		pass=$((pass + fp)) fail=$((fail + ff))
	fi
	(cd "$stage" && "$VMLAB" run "$name" --mem 4096 --timeout "${VM_TIMEOUT:-2400}" -- \
		env VM_BUILD=$vm_build VM_DEB=${VM_DEB:-$vm_build} bash tests/vm/guest.sh) >"$LOGS/run-$name.out" 2>&1
	rc=$?
	rm -rf "$stage"
	p=$(grep -c '^ok ' "$LOGS/run-$name.out") f=$(grep -c '^not ok ' "$LOGS/run-$name.out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name: the VM run exited $rc (see $LOGS/run-$name.out)"
		tail -5 "$LOGS/run-$name.out" | sed 's/^/#   /'
	fi
	grep -E '^(ok|not ok|#)' "$LOGS/run-$name.out" | sed "s/^\(ok - \|not ok - \)/\1$name: /"
	echo "# $name: $p passed, $f failed in $(($(date +%s) - start)) s"
	pass=$((pass + p)) fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
