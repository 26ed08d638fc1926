#!/usr/bin/env bash
# tests/vm/guest.sh - runs as root inside a booted Debian system (tests/vm/run.sh
# puts the tree at /src; systemd is PID 1, pure cgroup v2, the distribution's
# own kernel).  The checks of a real system, each an "ok"/"not ok" line:
#   build      the host's binaries (same distribution) or `make all` here
#   install    make install, sharness-mkcerts, the unit under systemd
#   verdicts   the verdict table through the unit (tests/vm/verdicts.sh)
#   make run   from this shell's cgroup, which systemd has not delegated and
#              which holds other processes (a root login shell's situation)
#   doctor     sharnessd --doctor and sharness-client doctor
# VM_BUILD=1 builds here instead of using build/ from the host.
set -u
cd /src
. tests/e2e/lib_checks.sh
say() { echo "# $*"; }

say "kernel $(uname -r); $(systemctl --version | head -1); cgroup: $(stat -fc %T /sys/fs/cgroup); lsm: $(cat /sys/kernel/security/lsm 2>/dev/null)"
say "this shell's cgroup: $(cat /proc/self/cgroup)"
check_eq "pure cgroup v2" "$(stat -fc %T /sys/fs/cgroup)" cgroup2fs
check_eq "systemd is PID 1" "$(cat /proc/1/comm)" systemd

# ---- build -----------------------------------------------------------------
if [ "${VM_BUILD:-0}" = 1 ]; then
	rm -rf build
	check "scripts/deps.sh installs what the build needs" scripts/deps.sh
	start=$(date +%s)
	if make -j"$(nproc)" all probes >/tmp/build.log 2>&1; then ok "make all builds here ($(($(date +%s) - start)) s)"
	else not_ok "make all builds here" "$(tail -20 /tmp/build.log)"; fi
fi
check "sharnessd runs" build/sharnessd --version
check_match "the client is static" "$(file build/sharness-client)" 'statically linked'
if [ "${VM_BUILD:-0}" = 1 ]; then
	# With this system's gcc and libgcc (Debian 13: gcc 14, which sorts the
	# tables at registration): the client's start registers none, and a
	# program linked as it is still unwinds (client/frames.c).
	check "the client's unwind tables have a program header" bash -c "readelf -lW build/sharness-client | grep -q GNU_EH_FRAME"
	if make build/tests/client_unwind >/tmp/unwind.log 2>&1; then
		check_eq "a program linked as the client is unwinds a cancelled thread" \
			"$(build/tests/client_unwind 2>&1; echo "exit $?")" "cancelled thread unwound: yes
exit 0"
	else not_ok "make build/tests/client_unwind" "$(tail -5 /tmp/unwind.log)"; fi
fi

# ---- install and the unit ----------------------------------------------------
# -o: install the binaries as they are (no rebuild without the objects).
if make -o build/sharnessd -o build/sharnessd-front -o build/sharness-actor -o build/sharness-client install >/tmp/install.log 2>&1; then ok "make install"
else not_ok "make install" "$(tail -20 /tmp/install.log)"; fi
check "sharness-mkcerts makes the certificates" sharness-mkcerts /etc/sharness/certs
systemctl daemon-reload
systemctl start sharnessd
check_eq "sharnessd.service is active" "$(systemctl is-active sharnessd)" active
if [ "$(systemctl is-active sharnessd)" != active ]; then
	journalctl -u sharnessd --no-pager | tail -20 | sed 's/^/#   /'
fi
mainpid=$(systemctl show -p MainPID --value sharnessd)
say "unit cgroup: $(systemctl show -p ControlGroup --value sharnessd)"
bash tests/vm/verdicts.sh https://127.0.0.1:7443 /etc/sharness/certs /srv/sharness "$mainpid" "unit: "
journalctl -u sharnessd --no-pager | grep -iE 'fail|error|refus' | tail -5 | sed 's/^/# journal: /'

# A linked worktree as a workspace, under the unit (its ReadWritePaths= as
# the docs say): start-up binds the main checkout's .git read-only into the
# runs' view, so git works there and the worktree is written.
gw() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main "$@"; }
gw init -q /srv/vm-main && gw -C /srv/vm-main commit -q --allow-empty -m first &&
	gw -C /srv/vm-main worktree add -q -b wt /srv/vm-wt
cp /etc/sharness/sharnessd.json /tmp/sharnessd.json.saved
jq '.workspaces += ["/srv/vm-wt"]' /tmp/sharnessd.json.saved >/etc/sharness/sharnessd.json
mkdir -p /etc/systemd/system/sharnessd.service.d
printf '[Service]\nReadWritePaths=/srv/vm-wt\n' >/etc/systemd/system/sharnessd.service.d/vm-wt.conf
systemctl daemon-reload
systemctl restart sharnessd
out=$(curl -s --max-time 120 --cacert /etc/sharness/certs/ca.pem --cert /etc/sharness/certs/app.pem \
	--key /etc/sharness/certs/app.key -H 'Content-Type: application/json' https://127.0.0.1:7443/v0/run \
	-d '{"cmd": "git status --short --branch; echo ok > vm-f && cat vm-f", "profile": "build", "cwd": "/srv/vm-wt"}')
check_match "unit: a linked worktree: git works in the sandbox and its tree is written" \
	"$(jq -r '.stdout + .stderr' <<<"$out" 2>&1)" '^## wt
(\?\? .*
)*ok$'
check_match "unit: the journal names the shared git directory runs see" \
	"$(journalctl -u sharnessd --no-pager | grep 'vm-wt:')" 'runs see its shared git directory /srv/vm-main/.git, read-only'
check_eq "unit: ... the file is on the host, the worktree's owner's" "$(stat -c %U /srv/vm-wt/vm-f 2>&1)" root
cp /tmp/sharnessd.json.saved /etc/sharness/sharnessd.json
rm -rf /etc/systemd/system/sharnessd.service.d/vm-wt.conf /srv/vm-main /srv/vm-wt
systemctl daemon-reload
systemctl restart sharnessd

# A crash in a run hands nothing to a core_pattern pipe helper (here one
# that leaves a mark; systemd-coredump and apport run as root too), even
# after `ulimit -c 0`: the same crash outside the sandbox does.
pattern=$(cat /proc/sys/kernel/core_pattern)
printf '#!/bin/sh\ntouch /run/vm-core-called\ncat >/dev/null\n' >/usr/local/bin/vm-core-helper
chmod 755 /usr/local/bin/vm-core-helper
echo '|/usr/local/bin/vm-core-helper' >/proc/sys/kernel/core_pattern
rm -f /run/vm-core-called
sh -c 'ulimit -c unlimited; kill -SEGV $$' 2>/dev/null
sleep 1
check "a crash outside the sandbox reaches the pipe helper (so the next check can fail)" test -e /run/vm-core-called
rm -f /run/vm-core-called
out=$(curl -s --max-time 120 --cacert /etc/sharness/certs/ca.pem --cert /etc/sharness/certs/app.pem \
	--key /etc/sharness/certs/app.key -H 'Content-Type: application/json' https://127.0.0.1:7443/v0/run \
	-d "$(jq -nc '{cmd: "sh -c '"'"'kill -SEGV $$'"'"'; ulimit -c 0; sh -c '"'"'kill -SEGV $$'"'"'; echo crashed twice", profile: "analyse"}')")
sleep 1
check_match "unit: a run crashed twice (once after ulimit -c 0)" "$(jq -r '.stdout + .stderr' <<<"$out" 2>&1)" 'crashed twice'
check "unit: ... and no pipe helper ran" test ! -e /run/vm-core-called
echo "$pattern" >/proc/sys/kernel/core_pattern
rm -f /usr/local/bin/vm-core-helper /run/vm-core-called

# A second daemon on the same range or state_dir refuses, naming the first.
out=$(timeout 20 /usr/local/sbin/sharnessd --config /etc/sharness/sharnessd.json 2>&1)
check_match "a second daemon on the unit's range refuses, naming its pid" "$out" "another sharnessd \\(pid [0-9]+\\)"
check_eq "the unit survived the second daemon" "$(systemctl is-active sharnessd)" active
systemctl stop sharnessd

# ---- make run from a shell whose cgroup is not delegated -----------------------
# This script runs in vmlab-run.service: a cgroup systemd did not delegate
# and that holds this shell, like a root login shell's session scope.
sleep 600 &
companion=$!
rm -rf /root/.sharness-dev
make -o all run >/tmp/makerun.log 2>&1 &
runpid=$!
# Under TCG the certificates alone take a while: up to 3 minutes.
for _ in $(seq 1 900); do
	grep -q 'listening on' /tmp/makerun.log && break
	kill -0 "$runpid" 2>/dev/null || break
	sleep 0.2
done
if grep -q 'listening on' /tmp/makerun.log; then ok "make run starts from a non-delegated shell cgroup"
else not_ok "make run starts from a non-delegated shell cgroup" "$(tail -20 /tmp/makerun.log)"; fi
dpid=$(pgrep -o -x sharnessd || echo 0)
say "make run's daemon: pid $dpid, cgroup $(cat /proc/"$dpid"/cgroup 2>/dev/null)"
certs=$(sed -n 's/.*--cacert \([^ ]*\)\/ca.pem.*/\1/p' /tmp/makerun.log | head -1)
bash tests/vm/verdicts.sh https://127.0.0.1:7443 "${certs:-/nonexistent}" "$PWD" "$dpid" "make run: "
kill -TERM "$dpid" 2>/dev/null
wait "$runpid" 2>/dev/null
kill "$companion" 2>/dev/null

# ---- doctor --------------------------------------------------------------------
if build/sharnessd --help 2>&1 | grep -q -- --doctor; then
	systemctl start sharnessd
	out=$(sharnessd --doctor --config /etc/sharness/sharnessd.json 2>&1); rc=$?
	printf '%s\n' "$out" | sed 's/^/# doctor: /'
	check_eq "sharnessd --doctor: no ✘ on this system (exit 0)" "$rc" 0
	systemctl stop sharnessd
else
	not_ok "sharnessd --doctor exists"
fi
# ---- Yama: a run's supervisor reads its run as the run's uid -------------------
# Scope 2 forbids that without CAP_SYS_PTRACE, which a dropped supervisor
# has not: start-up must refuse with the sysctl to set, and start again at
# scope 1.  (Scope 3 cannot be lowered again before a reboot: not tried.)
if [ -r /proc/sys/kernel/yama/ptrace_scope ]; then
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope)
	echo "# yama ptrace_scope of this boot: $scope"
	echo 2 >/proc/sys/kernel/yama/ptrace_scope
	check "at Yama scope 2 the unit does not start" bash -c '! systemctl start sharnessd 2>/dev/null && sleep 1 && ! systemctl is-active -q sharnessd'
	check "... and the journal says which sysctl to set" bash -c \
		'journalctl -u sharnessd -n 20 --no-pager | grep -q "kernel.yama.ptrace_scope is 2: .*set it to 1"'
	systemctl reset-failed sharnessd 2>/dev/null
	echo 1 >/proc/sys/kernel/yama/ptrace_scope
	systemctl start sharnessd
	sleep 1
	cmd='cd /tmp && python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"own.sock\"); s.listen(1); c = socket.socket(socket.AF_UNIX); c.connect(\"own.sock\"); print(\"own-ok\")" && echo w > w && cat w'
	body=$(jq -nc --arg c "$cmd" '{profile: "build", cmd: $c}')
	C=/etc/sharness/certs
	out=$(curl -s --max-time 120 --cacert $C/ca.pem --cert $C/app.pem --key $C/app.key -H 'Content-Type: application/json' \
		-d "$body" https://127.0.0.1:7443/v0/run | jq -r .stdout)
	check_eq "at scope 1 a run's own unix socket and a write work" "$out" "own-ok
w"
	systemctl stop sharnessd
	echo "$scope" >/proc/sys/kernel/yama/ptrace_scope
else
	echo "# this kernel has no Yama: the scope checks are skipped"
fi
# ---- the Debian package (tests/vm/guest_deb.sh) ----------------------------------
# With the .deb the host built for this distribution (bookworm); elsewhere
# where the guest builds the tree itself (VM_DEB, default: what VM_BUILD is),
# it builds the package too, so Debian 13 installs its own.
if compgen -G 'build/deb/sharness_*_amd64.deb' >/dev/null || [ "${VM_DEB:-0}" = 1 ]; then
	# make uninstall stops every user's running relay (scripts/user-relays):
	# here the installed user unit, run with a stand-in command (the user's
	# own unit file, which wins over the installed one) in vmlab's user
	# manager, which starts through pam_systemd (libpam-systemd, as
	# guest_deb.sh installs it).
	vuid=$(id -u vmlab) relay_before=
	as_user() { runuser -u vmlab -- env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="/run/user/$vuid" "$@"; }
	stand_in=/home/vmlab/.config/systemd/user/sharness-relay.service
	if dpkg -s libpam-systemd >/dev/null 2>&1 || { apt-get -q -y update &&
		apt-get -q -y install --no-install-recommends libpam-systemd; } </dev/null >/tmp/apt.log 2>&1; then
		runuser -u vmlab -- mkdir -p "${stand_in%/*}"
		printf '[Service]\nExecStart=/bin/sleep 600\n' >"$stand_in"
		loginctl enable-linger vmlab
		for _ in $(seq 1 300); do [ -S "/run/user/$vuid/systemd/private" ] && break; sleep 0.2; done
		as_user systemctl --user daemon-reload
		as_user systemctl --user start sharness-relay
		relay_before=$(as_user systemctl --user is-active sharness-relay 2>&1)
	else
		not_ok "apt-get install libpam-systemd (for systemd --user)" "$(tail -5 /tmp/apt.log)"
	fi
	make -s uninstall >/tmp/uninstall.log 2>&1 || not_ok "make uninstall" "$(tail -5 /tmp/uninstall.log)"
	if [ -n "$relay_before" ]; then
		check_eq "make uninstall stopped the user's running relay (before/after)" \
			"$relay_before/$(as_user systemctl --user is-active sharness-relay 2>&1)" "active/inactive"
		rm -f "$stand_in"
		as_user systemctl --user daemon-reload
		loginctl disable-linger vmlab
	fi
	# What the verdicts wrote in the default workspace: purge removes the
	# workspace only when it is empty (a person's files are never purged).
	find /srv/sharness -mindepth 1 -delete 2>/dev/null
	bash tests/vm/guest_deb.sh || E2E_FAILED=1
fi
[ "$E2E_FAILED" = 0 ]
