#!/usr/bin/env bash
# tests/vm/guest_deb.sh - the Debian package on a booted Debian system (issue 17),
# as root, with the tree at /src (tests/vm/run.sh's stage).  Each step is an
# "ok"/"not ok" line:
#   fresh     make install's files gone (make uninstall if they are there), and
#             what uninstall keeps (certificates, state, logs) removed too
#   install   apt-get install ./build/deb/sharness_<v>_amd64.deb: files where the
#             package puts them, certificates made once in /etc/sharness/certs,
#             sharnessd.service enabled and active under systemd
#   run       sharness-client run -- id as root with the app certificate
#   upgrade   to <v>+next (the same package with a higher Version, made here
#             with dpkg-deb): a changed conffile, the certificates and the
#             audit log are kept, the service restarts
#   relay     the user unit sharness-relay.service under vmlab's systemd --user:
#             disabled as shipped; started, it serves a client of the user
#             that has no flags and no SHARNESS_RELAY (strace: no TCP, no
#             process); stopped, its socket is gone; the upgrade restarts
#             it (the new binary) after the daemon; the user's client works
#             and it serves
#   purge     apt-get purge: config, certificates, state, logs and units
#             gone, and the user's running relay stopped
# The .deb comes from the host (make deb, same distribution); with VM_BUILD=1
# or without one, `make deb` builds it here.
set -u
cd /src
. tests/e2e/lib_checks.sh
say() { echo "# $*"; }
export DEBIAN_FRONTEND=noninteractive
T=$(mktemp -d /tmp/sharness-deb.XXXXXX)
trap 'rm -rf "$T"' EXIT
apt_get() { apt-get -q -y "$@" </dev/null >"$T/apt.log" 2>&1; }
systemd=0
[ -d /run/systemd/system ] && systemd=1

# ---- the package --------------------------------------------------------------
if [ "${VM_BUILD:-0}" = 1 ] || ! compgen -G 'build/deb/sharness_*_amd64.deb' >/dev/null; then
	if make deb >"$T/deb.log" 2>&1; then ok "make deb builds the package here"
	else not_ok "make deb builds the package here" "$(tail -20 "$T/deb.log")"; fi
fi
deb=$(ls build/deb/sharness_*_amd64.deb 2>/dev/null | grep -v '+next_' | head -n 1)
if [ -z "$deb" ]; then
	not_ok "build/deb/sharness_*_amd64.deb exists"
	exit 1
fi
deb=$PWD/$deb
v=$(dpkg-deb -f "$deb" Version)
say "package: ${deb##*/} (version $v)"
# The newer build: the same files, Version $v+next.
mkdir "$T/next"
dpkg-deb -R "$deb" "$T/next/pkg"
sed -i "s/^Version: .*/Version: $v+next/" "$T/next/pkg/DEBIAN/control"
next=$T/next/sharness_${v}+next_amd64.deb
check "dpkg-deb builds $v+next" dpkg-deb -b "$T/next/pkg" "$next"

# ---- a fresh system --------------------------------------------------------------
# guest.sh's make install/uninstall: units in /usr/local/lib/systemd/system
# would shadow the package's, and uninstall keeps certificates, state and
# logs, which would make "certificates made once" vacuous.
if [ -e /usr/local/sbin/sharnessd ] || [ -e /usr/local/lib/systemd/system/sharnessd.service ]; then
	say "make install's files are here: make uninstall"
	make -s uninstall >"$T/uninstall.log" 2>&1 || not_ok "make uninstall" "$(tail -5 "$T/uninstall.log")"
fi
rm -rf /etc/sharness /var/lib/sharness /var/log/sharness
rmdir /srv/sharness 2>/dev/null
[ "$systemd" = 1 ] && systemctl daemon-reload
check "no sharnessd from make install is left" test ! -e /usr/local/sbin/sharnessd -a ! -e /usr/local/lib/systemd/system/sharnessd.service

# ---- install ----------------------------------------------------------------------
if apt_get install "$deb"; then ok "apt-get install ./${deb##*/}"
else not_ok "apt-get install ./${deb##*/}" "$(tail -20 "$T/apt.log")"; fi
check_eq "dpkg: sharness $v installed" "$(dpkg-query -W -f '${Status} ${Version}' sharness 2>&1)" "install ok installed $v"
mode() { stat -c %a "$1" 2>/dev/null || echo missing; }
while read -r m f; do
	check_eq "$f mode $m" "$(mode "$f")" "$m"
done <<'EOF'
755 /usr/sbin/sharnessd
755 /usr/libexec/sharness/sharnessd-front
755 /usr/libexec/sharness/sharness-actor
755 /usr/bin/sharness-client
755 /usr/bin/sharness-mkcerts
644 /usr/lib/systemd/system/sharnessd.service
644 /usr/lib/systemd/system/sharnessd.socket
644 /usr/share/man/man8/sharnessd.8.gz
644 /usr/share/man/man5/sharnessd.json.5.gz
644 /usr/share/man/man1/sharness-client.1.gz
644 /usr/share/man/man1/sharness-mkcerts.1.gz
644 /etc/sharness/sharnessd.json
644 /etc/sharness/profiles/analyse.json
644 /etc/sharness/profiles/build.json
644 /etc/sharness/profiles/admin.json
700 /etc/sharness/certs
700 /var/lib/sharness
700 /var/log/sharness
755 /srv/sharness
EOF
check_match "the unit runs /usr/sbin/sharnessd (paths rewritten for PREFIX=/usr)" \
	"$(grep '^ExecStart=' /usr/lib/systemd/system/sharnessd.service)" '^ExecStart=/usr/sbin/sharnessd --config /etc/sharness/sharnessd.json$'
check_eq "the configuration and profiles are conffiles" \
	"$(dpkg-query -W -f '${Conffiles}' sharness | awk '{print $1}' | sort | paste -sd' ')" \
	"/etc/sharness/profiles/admin.json /etc/sharness/profiles/analyse.json /etc/sharness/profiles/build.json /etc/sharness/profiles/test.json /etc/sharness/sharnessd.json"
check "sharnessd --check-config accepts the installed configuration" \
	/usr/sbin/sharnessd --check-config --config /etc/sharness/sharnessd.json
check "man sharnessd finds the installed page" man -w sharnessd

# Certificates: made by the postinst, once.
missing=
for f in ca.pem ca.key server.pem server.key app.pem app.key orchestrator.pem orchestrator.key person.pem person.key; do
	[ -s "/etc/sharness/certs/$f" ] || missing="$missing $f"
done
check_eq "the postinst made the certificates in /etc/sharness/certs" "${missing:-none missing}" "none missing"
check_eq "keys are 0600" "$(stat -c %a /etc/sharness/certs/ca.key /etc/sharness/certs/app.key | sort -u)" 600
check_match "the app certificate's role is app" "$(openssl x509 -in /etc/sharness/certs/app.pem -noout -subject 2>&1)" 'OU ?= ?app'
check "the certificates are not the package's files (never replaced or removed by dpkg)" \
	bash -c '! dpkg -S /etc/sharness/certs/ca.pem >/dev/null 2>&1'
ca_sum=$(sha256sum /etc/sharness/certs/ca.pem /etc/sharness/certs/app.pem)

# The service.
wait_active() {
	for _ in $(seq 1 150); do
		[ "$(systemctl is-active sharnessd)" = active ] && return 0
		sleep 0.2
	done
	return 1
}
client_id() {
	(cd /srv/sharness && SHARNESS_URL=https://127.0.0.1:7443 SHARNESS_CA=/etc/sharness/certs/ca.pem \
		SHARNESS_CERT=/etc/sharness/certs/app.pem SHARNESS_KEY=/etc/sharness/certs/app.key \
		timeout 60 /usr/bin/sharness-client run -- id 2>&1)
}
# The client's relay as a user unit (systemd/sharness-relay.service), run by
# the guest's user vmlab under its own systemd --user (lingering, as a login
# would start it), with its certificate where a client looks by default.
vuid=$(id -u vmlab)
as_vmlab() { (cd /srv/sharness && runuser -u vmlab -- env -i PATH=/usr/bin:/bin HOME=/home/vmlab XDG_RUNTIME_DIR="/run/user/$vuid" "$@"); }
relay_socks() { ls "/run/user/$vuid/sharness/"*.relay 2>/dev/null; }
relay_unit_checks() {
	local hv=/home/vmlab/.config/sharness s mp
	# A user's systemd starts through PAM's pam_systemd, which a desktop has
	# and this minimal image does not (a recommended package).
	if ! dpkg -s libpam-systemd >/dev/null 2>&1 &&
		! { apt_get update && apt_get install --no-install-recommends libpam-systemd; }; then
		not_ok "apt-get install libpam-systemd (for systemd --user)" "$(tail -5 "$T/apt.log")"
		return
	fi
	install -d -o vmlab -g vmlab -m 0700 /home/vmlab/.config "$hv"
	install -o vmlab -g vmlab -m 0600 /etc/sharness/certs/app.pem "$hv/client.pem"
	install -o vmlab -g vmlab -m 0600 /etc/sharness/certs/app.key "$hv/client.key"
	install -o vmlab -g vmlab -m 0644 /etc/sharness/certs/ca.pem "$hv/ca.pem"
	loginctl enable-linger vmlab
	for _ in $(seq 1 300); do [ -S "/run/user/$vuid/systemd/private" ] && break; sleep 0.2; done
	check_eq "sharness-relay.service is shipped as a user unit and enabled for nobody" \
		"$(as_vmlab systemctl --user is-enabled sharness-relay 2>&1)" disabled
	as_vmlab systemctl --user start sharness-relay
	for _ in $(seq 1 150); do [ -n "$(relay_socks)" ] && break; sleep 0.2; done
	check_eq "systemctl --user start sharness-relay: active" "$(as_vmlab systemctl --user is-active sharness-relay)" active
	s=$(relay_socks)
	check_eq "its socket is in \$XDG_RUNTIME_DIR/sharness, 0600, the user's" "$(stat -c '%a %U' "$s" 2>&1)" "600 vmlab"
	as_vmlab strace -f -qq -e trace=connect,execve,clone,clone3,fork,vfork -o /tmp/relay.st \
		/usr/bin/sharness-client run -- id -u >"$T/relay.out" 2>&1
	check_match "a client of the user, no flags, no SHARNESS_RELAY: its run (exit $?)" "$(cat "$T/relay.out")" '^19[0-9]{8}$'
	check "... through the relay's socket, with no TCP connection and no process of its own" \
		bash -c "grep -q 'connect(.*sun_path=\"$s\"' /tmp/relay.st && ! grep -q 'connect(.*AF_INET' /tmp/relay.st &&
		         test \"\$(grep -E 'clone|fork' /tmp/relay.st | grep -vc CLONE_THREAD)\" = 0"
	as_vmlab systemctl --user stop sharness-relay
	check_eq "systemctl --user stop: inactive, its socket removed" \
		"$(as_vmlab systemctl --user is-active sharness-relay)/$(relay_socks)" "inactive/"
	# Settings that can never work end it with status 2, which the unit
	# does not restart (past its RestartSec of 10 s).
	echo SHARNESS_TICKETS=off >"$hv/relay.env"
	as_vmlab systemctl --user start sharness-relay
	sleep 13
	check_eq "relay.env with SHARNESS_TICKETS=off: failed, status 2, not started again 13 s later" \
		"$(as_vmlab systemctl --user is-active sharness-relay)/$(unit_prop ExecMainStatus)/$(unit_prop NRestarts)" "failed/2/0"
	# journald may write it a while later under TCG (seen once on Debian 12).
	local said=
	for _ in $(seq 15); do
		said=$(journalctl -q --no-pager _SYSTEMD_USER_UNIT=sharness-relay.service 2>&1 | tail -3)
		case $said in *SHARNESS_TICKETS=off*) break ;; esac
		sleep 1
	done
	check_match "... and the user's journal says why" "$said" 'SHARNESS_TICKETS=off'
	rm -f "$hv/relay.env"
	# While a relay started by hand (idle after 8 s) serves the identity,
	# the unit's relay waits for it and then serves, without a restart.
	as_vmlab env SHARNESS_RELAY_IDLE=8 /usr/bin/sharness-client relay </dev/null >/dev/null 2>&1 &
	local hand=$!
	for _ in $(seq 1 150); do [ -n "$(relay_socks)" ] && break; sleep 0.2; done
	as_vmlab systemctl --user start sharness-relay
	sleep 1
	check_eq "a relay started by hand serves: the unit's is active and waits (two relays, one socket)" \
		"$(as_vmlab systemctl --user is-active sharness-relay)/$(pgrep -c -u vmlab -f 'sharness-client relay')/$(relay_socks | wc -l)" \
		"active/2/1"
	wait "$hand"
	for _ in $(seq 1 100); do relay_bound_by "$(unit_prop MainPID)" && break; sleep 0.2; done
	mp=$(unit_prop MainPID)
	check_eq "... once that one idled out, the unit's relay (pid $mp) holds the socket, not restarted" \
		"$(relay_bound_by "$mp" && echo bound)/$(unit_prop NRestarts)" "bound/0"
	# However else it ends (here: its socket removed, status 0), systemd
	# starts it again 10 s later.
	rm -f "$(relay_socks)"
	for _ in $(seq 1 150); do [ -n "$(relay_socks)" ] && [ "$(unit_prop NRestarts)" = 1 ] && break; sleep 0.2; done
	check_eq "its socket removed: started again (restarts, sockets)" "$(unit_prop NRestarts)/$(relay_socks | wc -l)" "1/1"
}
unit_prop() { as_vmlab systemctl --user show -p "$1" --value sharness-relay; }
# The relay's socket is one that PID holds.
relay_bound_by() {
	local ino f p
	p=$(relay_socks)
	# The relay binds its socket by name from inside the checked ticket
	# directory (client/relay.c, listen_here): the kernel lists that name.
	# Any of the sockets by that name: a relay that idled out may still be
	# listed while it ends.
	for ino in $(awk -v p="$p" -v b="${p##*/}" '$8 == p || $8 == b { print $7 }' /proc/net/unix); do
		for f in "/proc/$1/fd/"*; do [ "$(readlink "$f")" = "socket:[$ino]" ] && return 0; done
	done
	return 1
}

if [ "$systemd" = 1 ]; then
	check_eq "sharnessd.service is enabled" "$(systemctl is-enabled sharnessd 2>&1)" enabled
	check_eq "sharnessd.socket is not enabled (the service listens itself)" "$(systemctl is-enabled sharnessd.socket 2>&1)" disabled
	wait_active
	check_eq "sharnessd.service is active after apt-get install" "$(systemctl is-active sharnessd)" active
	[ "$(systemctl is-active sharnessd)" = active ] || journalctl -u sharnessd --no-pager | tail -20 | sed 's/^/#   /'
	# /lib/systemd/system on a merged /usr (Debian 12): the same file.
	check_eq "systemd runs the package's unit" "$(readlink -f "$(systemctl show -p FragmentPath --value sharnessd)")" /usr/lib/systemd/system/sharnessd.service
	pid1=$(systemctl show -p MainPID --value sharnessd)
	check_eq "its main process is /usr/sbin/sharnessd" "$(readlink "/proc/$pid1/exe" 2>&1)" /usr/sbin/sharnessd
	out=$(client_id); rc=$?
	check_eq "sharness-client run -- id (root, app certificate): exit 0" "$rc" 0
	check_match "sharness-client run -- id: an ephemeral uid of the range" "$out" 'uid=19[0-9]{8}'
	check "the run has an audit line" test -s /var/log/sharness/audit.log
	relay_unit_checks
else
	not_ok "systemd is running (the service and client checks need it)"
fi
audit_lines=$(wc -l 2>/dev/null </var/log/sharness/audit.log || echo 0)

# ---- upgrade --------------------------------------------------------------------
# The operator's change: one run slot less.  The shipped file is the same in
# both builds, so dpkg keeps the changed one without asking (stdin is
# /dev/null: a conffile question would fail the install).
sed -i 's/"max_runs": 8/"max_runs": 7/' /etc/sharness/sharnessd.json
conf_sum=$(sha256sum /etc/sharness/sharnessd.json)
check_match "the configuration is changed" "$(cat /etc/sharness/sharnessd.json)" '"max_runs": 7'
relay_pid=0
[ "$systemd" = 1 ] && relay_pid=$(unit_prop MainPID)
if apt_get install "$next"; then ok "apt-get install ./${next##*/} (upgrade)"
else not_ok "apt-get install ./${next##*/} (upgrade)" "$(tail -20 "$T/apt.log")"; fi
# The postinst restarts the user's relay after the daemon (try-restart: one
# that runs, or waits 10 s to start again because the daemon's restart cut
# its connection), so it runs the new sharness-client at once.  Without it
# the relay here is found waiting (pid 0), or runs the deleted binary.
if [ "$systemd" = 1 ] && [ "$relay_pid" != 0 ]; then
	mp=$(unit_prop MainPID)
	say "the relay after the upgrade: $(unit_prop ActiveState)/$(unit_prop SubState), started $(unit_prop ExecMainStartTimestamp), $(unit_prop NRestarts) restarts by systemd"
	check_eq "the upgrade restarted the user's relay (pid $relay_pid -> $mp): it runs the new /usr/bin/sharness-client" \
		"$([ "$mp" != "$relay_pid" ] && echo restarted)/$(readlink "/proc/$mp/exe" 2>&1)" "restarted//usr/bin/sharness-client"
fi
check_eq "dpkg: sharness $v+next installed" "$(dpkg-query -W -f '${Status} ${Version}' sharness 2>&1)" "install ok installed $v+next"
check_eq "the changed sharnessd.json survives the upgrade" "$(sha256sum /etc/sharness/sharnessd.json)" "$conf_sum"
check "no .dpkg-dist/.dpkg-new/.dpkg-old left next to it" \
	bash -c '! compgen -G "/etc/sharness/*.dpkg-*" >/dev/null && ! compgen -G "/etc/sharness/profiles/*.dpkg-*" >/dev/null'
check_eq "the certificates survive the upgrade (not made again)" "$(sha256sum /etc/sharness/certs/ca.pem /etc/sharness/certs/app.pem)" "$ca_sum"
if [ "$systemd" = 1 ]; then
	wait_active
	check_eq "sharnessd.service is active after the upgrade" "$(systemctl is-active sharnessd)" active
	pid2=$(systemctl show -p MainPID --value sharnessd)
	check "the upgrade restarted the daemon (pid $pid1 -> $pid2)" test "$pid2" != "$pid1" -a "$pid2" != 0
	out=$(client_id); rc=$?
	check_match "sharness-client run -- id after the upgrade (exit $rc)" "$out" 'uid=19[0-9]{8}'
	check "the audit log is kept across the upgrade ($audit_lines lines before)" \
		test "$(wc -l </var/log/sharness/audit.log)" -gt "$audit_lines"
	# The relay's connections were the old daemon's: a client gets its run
	# (through a relay again, or its own connection), and the unit is active.
	out=$(as_vmlab /usr/bin/sharness-client run -- id -u 2>&1); rc=$?
	check_match "the user's client after the daemon's restart (exit $rc)" "$out" '^19[0-9]{8}$'
	# The postinst restarted the relay; one that lost the daemon since ends
	# with status 1, and systemd starts it again 10 s later.
	for _ in $(seq 1 200); do
		[ -n "$(relay_socks)" ] && [ "$(as_vmlab systemctl --user is-active sharness-relay)" = active ] && break
		sleep 0.2
	done
	check_eq "... and the relay unit is active, serving" \
		"$(as_vmlab systemctl --user is-active sharness-relay)/$(relay_socks | wc -l)" "active/1"
fi

# ---- purge ---------------------------------------------------------------------
if apt_get purge sharness; then ok "apt-get purge sharness"
else not_ok "apt-get purge sharness" "$(tail -20 "$T/apt.log")"; fi
check "dpkg no longer knows sharness" bash -c '! dpkg -s sharness >/dev/null 2>&1'
for p in /etc/sharness /var/lib/sharness /var/log/sharness /srv/sharness /usr/sbin/sharnessd /usr/libexec/sharness \
	/usr/bin/sharness-client /usr/bin/sharness-mkcerts /usr/lib/systemd/system/sharnessd.service \
	/usr/lib/systemd/user/sharness-relay.service \
	/usr/share/man/man8/sharnessd.8.gz; do
	check "purge removed $p" test ! -e "$p"
done
if [ "$systemd" = 1 ]; then
	check_match "sharnessd.service is gone" "$(systemctl is-active sharnessd 2>&1)" '^(inactive|unknown)$'
	check "no sharnessd process is left" bash -c '! pgrep -x sharnessd'
	check "no enablement symlink is left" test ! -e /etc/systemd/system/multi-user.target.wants/sharnessd.service
	# The user's relay ran until the purge: the prerm stopped it in its
	# user manager.  Without that it runs the deleted binary, or, having
	# lost the daemon, systemd tries to start it every 10 s (activating).
	# (Not as_vmlab: the purge removed its directory, /srv/sharness.)
	active=$(runuser -u vmlab -- env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="/run/user/$vuid" \
		systemctl --user is-active sharness-relay 2>&1)
	check_eq "the user's relay is stopped, not left (unit, processes, sockets)" \
		"$active/$(pgrep -c -u vmlab -f 'sharness-client relay')/$(relay_socks | wc -l)" "inactive/0/0"
	loginctl disable-linger vmlab
fi
[ "$E2E_FAILED" = 0 ]
