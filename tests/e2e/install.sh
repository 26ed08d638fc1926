#!/usr/bin/env bash
# make install / make uninstall into a temporary DESTDIR (issue 7): every file
# where install.mk says, with its mode; the installed programs run from there;
# a changed configuration survives both a second install and uninstall; and
# uninstall removes everything else.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/sharness-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$T/dest
. "$ROOT/tests/e2e/lib_checks.sh"

mode() { stat -c %a "$1" 2>/dev/null || echo missing; }
mk() { make -s -C "$ROOT" --no-print-directory INSTALL_STAGE="$T/stage" "$@" >"$T/make.log" 2>&1 || { cat "$T/make.log" >&2; return 1; }; }

# ---- install ----------------------------------------------------------------
check "make install DESTDIR=... succeeds" mk install DESTDIR="$D"
while read -r m f; do
	check_eq "installed $f mode $m" "$(mode "$D$f")" "$m"
done <<'EOF'
755 /usr/local/sbin/sharnessd
755 /usr/local/libexec/sharness/sharnessd-front
755 /usr/local/libexec/sharness/sharness-actor
755 /usr/local/libexec/sharness/user-relays
755 /usr/local/bin/sharness-client
755 /usr/local/bin/sharness-mkcerts
644 /usr/local/share/man/man1/sharness-client.1
644 /usr/local/share/man/man1/sharness-mkcerts.1
644 /usr/local/share/man/man5/sharnessd.json.5
644 /usr/local/share/man/man8/sharnessd.8
644 /usr/local/lib/systemd/system/sharnessd.service
644 /usr/local/lib/systemd/system/sharnessd.socket
644 /usr/local/lib/systemd/user/sharness-relay.service
644 /etc/sharness/sharnessd.json
644 /etc/sharness/profiles/analyse.json
644 /etc/sharness/profiles/build.json
644 /etc/sharness/profiles/admin.json
700 /etc/sharness/certs
700 /var/lib/sharness
700 /var/log/sharness
755 /srv/sharness
EOF
check_eq "every shipped profile is installed" "$(ls "$D/etc/sharness/profiles")" "$(cd "$ROOT/profiles" && ls ./*.json | sed 's|^\./||')"
check "the installed binaries are the built ones" cmp "$ROOT/${BUILD:-build}/sharnessd" "$D/usr/local/sbin/sharnessd"
check "the installed front is the built one" cmp "$ROOT/${BUILD:-build}/sharnessd-front" "$D/usr/local/libexec/sharness/sharnessd-front"
check "the installed file actor is the built one" cmp "$ROOT/${BUILD:-build}/sharness-actor" "$D/usr/local/libexec/sharness/sharness-actor"
check "the unit names the installed daemon and config" \
	grep -qx 'ExecStart=/usr/local/sbin/sharnessd --config /etc/sharness/sharnessd.json' \
	"$D/usr/local/lib/systemd/system/sharnessd.service"
check "the user unit names the installed client" \
	grep -qx 'ExecStart=/usr/local/bin/sharness-client relay' "$D/usr/local/lib/systemd/user/sharness-relay.service"
check "no file names DESTDIR" bash -c "! grep -rlF '$D' '$D'"
check_eq "installed sharnessd --version" "$("$D/usr/local/sbin/sharnessd" --version)" \
	"$("$ROOT/${BUILD:-build}/sharnessd" --version)"
for page in man1/sharness-client.1 man1/sharness-mkcerts.1 man5/sharnessd.json.5 man8/sharnessd.8; do
	err=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$D/usr/local/share/man/$page" 2>&1 >/dev/null)
	check_eq "man page $page renders without warnings" "$err" ""
done

# sharness-mkcerts works installed, away from the repository.
(cd / && env -i PATH=/usr/bin:/bin "$D/usr/local/bin/sharness-mkcerts" "$T/certs" >/dev/null 2>&1)
check_eq "installed sharness-mkcerts makes a CA and server key" "$(mode "$T/certs/ca.pem") $(mode "$T/certs/server.key")" "644 600"
check "its server certificate chains to its CA" openssl verify -CAfile "$T/certs/ca.pem" "$T/certs/server.pem"

# The installed config passes --check-config once its certificates and
# workspace exist: a relocated install (PREFIX, SYSCONFDIR, LOCALSTATEDIR and
# WORKSPACEDIR under $T/r) makes every absolute path in it real.
R=$T/r
check "make install with PREFIX/SYSCONFDIR/LOCALSTATEDIR/WORKSPACEDIR succeeds" \
	mk install PREFIX="$R/usr" SYSCONFDIR="$R/etc" LOCALSTATEDIR="$R/var" WORKSPACEDIR="$R/srv/ws"
check "binaries go to PREFIX" test -x "$R/usr/sbin/sharnessd" -a -x "$R/usr/bin/sharness-client" \
	-a -x "$R/usr/libexec/sharness/sharnessd-front" -a -x "$R/usr/libexec/sharness/sharness-actor"
check "the relocated sharnessd finds its front in PREFIX/libexec/sharness (--filter runs it)" \
	bash -c "'$R/usr/sbin/sharnessd' --filter </dev/null"
check "the unit follows PREFIX and SYSCONFDIR" \
	grep -qx "ExecStart=$R/usr/sbin/sharnessd --config $R/etc/sharness/sharnessd.json" \
	"$R/usr/lib/systemd/system/sharnessd.service"
check "the user unit follows PREFIX" \
	grep -qx "ExecStart=$R/usr/bin/sharness-client relay" "$R/usr/lib/systemd/user/sharness-relay.service"
check_eq "the config follows LOCALSTATEDIR and WORKSPACEDIR" \
	"$(jq -r '[.state_dir, .audit_log, .workspaces[0]] | join(" ")' "$R/etc/sharness/sharnessd.json")" \
	"$R/var/lib/sharness $R/var/log/sharness/audit.log $R/srv/ws"
"$R/usr/bin/sharness-mkcerts" "$R/etc/sharness/certs" >/dev/null 2>&1
out=$("$R/usr/sbin/sharnessd" --check-config --config "$R/etc/sharness/sharnessd.json" 2>&1)
check_eq "the installed default config passes --check-config" "$(echo "$out" | head -1)" \
	"configuration OK: $R/etc/sharness/sharnessd.json"

# ---- the operator's configuration is never overwritten ----------------------
jq '.max_runs = 4' "$D/etc/sharness/sharnessd.json" >"$T/mine.json"
cp "$T/mine.json" "$D/etc/sharness/sharnessd.json"
echo '{"name": "mine"}' >"$D/etc/sharness/profiles/mine.json"
check "a second install succeeds" mk install DESTDIR="$D"
check "a second install keeps a changed sharnessd.json" cmp "$T/mine.json" "$D/etc/sharness/sharnessd.json"
check "and puts the shipped one next to it as .new" cmp "$ROOT/etc/sharnessd.json" "$D/etc/sharness/sharnessd.json.new"
check "an unchanged profile gets no .new" test ! -e "$D/etc/sharness/profiles/analyse.json.new"

# ---- uninstall ----------------------------------------------------------------
touch "$D/etc/sharness/certs/ca.pem" "$D/var/lib/sharness/leftover"
check "make uninstall DESTDIR=... succeeds" mk uninstall DESTDIR="$D"
check_eq "uninstall keeps the operator's files, certificates and state" \
	"$(cd "$D" && find . -type f | sort | tr '\n' ' ')" \
	"./etc/sharness/certs/ca.pem ./etc/sharness/profiles/mine.json ./etc/sharness/sharnessd.json ./var/lib/sharness/leftover "
rm -f "$D/etc/sharness/certs/ca.pem" "$D/var/lib/sharness/leftover" "$D/etc/sharness/profiles/mine.json" \
	"$D/etc/sharness/sharnessd.json"
check "make uninstall again succeeds" mk uninstall DESTDIR="$D"
check_eq "uninstall removes every file" "$(find "$D" -type f | wc -l)" 0
check_eq "uninstall removes sharness's own directories" \
	"$(find "$D" -depth -type d \( -name 'sharness*' -o -name 'sharness' \) | tr '\n' ' ')" ""
check "uninstall of the relocated install succeeds" \
	mk uninstall PREFIX="$R/usr" SYSCONFDIR="$R/etc" LOCALSTATEDIR="$R/var" WORKSPACEDIR="$R/srv/ws"
check_eq "and leaves only the certificates made after install" \
	"$(cd "$R" && find . -type f | grep -v '^./etc/sharness/certs/' | wc -l)" 0
exit 0
