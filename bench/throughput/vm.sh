#!/usr/bin/env bash
# bench/throughput/vm.sh [LAYOUT...] - bench/throughput/run.sh inside a real
# Debian 12 booted under systemd (tests/vm/vmlab), once per cgroup LAYOUT:
#   v2      what Debian 12 boots with: one unified hierarchy, a run's limits
#           and its kill in one cgroup
#   hybrid  the same system booted with systemd.unified_cgroup_hierarchy=0:
#           pids and memory on v1, the unified hierarchy beside them (the
#           development machine's layout: three cgroups a run)
# (default: both).  The question it answers: how much of the throughput
# ratio is the layout of the host it is measured on.  Both boots are the same
# emulated machine (TCG where this machine's KVM cannot boot Debian's
# kernel: 25-30 times slower than the host, and page-table work costs more
# there than other work), so compare the two layouts with each other, not
# with the host's figures.  The host's binaries are copied in: the host must
# run Debian 12 too.  Smaller counts than on the host (emulated runs are
# slow): THROUGHPUT_RUNS (600), THROUGHPUT_BWRAP_N (200), THROUGHPUT_PAIRS (2),
# VMBENCH_ROUNDS (2: run.sh this many times per boot).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
layouts=("$@")
[ ${#layouts[@]} -eq 0 ] && layouts=(v2 hybrid)
append_for() { # LAYOUT: its kernel parameters
	case $1 in
	v2) echo ;;
	hybrid) echo systemd.unified_cgroup_hierarchy=0 ;;
	*) return 1 ;;
	esac
}
for layout in "${layouts[@]}"; do # every name checked before the first boot, not after it
	append_for "$layout" >/dev/null || { echo "bench-throughput-vm: unknown layout $layout (v2 or hybrid)" >&2; exit 2; }
done
[ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ] ||
	{ echo "bench-throughput-vm: the host's binaries go into Debian 12: run it on Debian 12" >&2; exit 1; }
export VMLAB_ACCEL=${VMLAB_ACCEL:-tcg} VMLAB_LOGS=${VMLAB_LOGS:-$BUILD/vm-logs}
mkdir -p "$VMLAB_LOGS"
tests/vm/vmlab build bookworm >"$VMLAB_LOGS/build-bookworm.out" 2>&1 ||
	{ echo "bench-throughput-vm: the image does not build (see $VMLAB_LOGS/build-bookworm.out)" >&2; exit 1; }
rc=0
for layout in "${layouts[@]}"; do
	append=$(append_for "$layout")
	stage=$(mktemp -d /var/tmp/sharness-vmbench.XXXXXX)
	git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$stage"
	mkdir -p "$stage/build/bench"
	cp -a "$BUILD"/sharnessd "$BUILD"/sharnessd-front "$BUILD"/sharness-actor "$BUILD"/sharness-client "$stage/build/"
	cp -a "$BUILD"/bench/roundtrip "$BUILD"/bench/loadclient "$stage/build/bench/"
	guest="echo \"# $layout: kernel \$(uname -r), /sys/fs/cgroup is \$(stat -fc %T /sys/fs/cgroup)\";"
	guest+=" for i in \$(seq ${VMBENCH_ROUNDS:-2}); do BUILD=build THROUGHPUT_RUNS=${THROUGHPUT_RUNS:-600}"
	guest+=" THROUGHPUT_BWRAP_N=${THROUGHPUT_BWRAP_N:-200} THROUGHPUT_PAIRS=${THROUGHPUT_PAIRS:-2} bench/throughput/run.sh || exit 1; done"
	(cd "$stage" && VMLAB_APPEND=$append tests/vm/vmlab run bookworm --mem 4096 --timeout 3000 -- bash -c "$guest") \
		>"$VMLAB_LOGS/bench-$layout.out" 2>&1 || rc=1
	rm -rf "$stage"
	grep -E '^(#|throughput|  )' "$VMLAB_LOGS/bench-$layout.out" | sed "s/^/$layout: /"
done
exit $rc
