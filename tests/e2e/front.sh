#!/usr/bin/env bash
# The boundary in the process table: root's launcher maps none of the
# network's libraries; the front is its own executable (sharnessd-front),
# started by fork + exec, never root, with no capability, no_new_privs,
# a seccomp filter and Landlock, and holding none of root's files.
. "$(dirname "$0")/lib.sh"
BUILD_DIR=$(dirname "$SHARNESSD")
printf 'sk-front-%s\n' "$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$T/secrets"
chmod 600 "$T/secrets"
e2e_start "{\"secrets_file\": \"$T/secrets\"}"

FRONT=$(front_pid)
check "the front is running" test -n "$FRONT"
check_eq "the front's executable is sharnessd-front" "$(readlink "/proc/$FRONT/exe")" "$(readlink -f "$BUILD_DIR/sharnessd-front")"
check_eq "the launcher's executable is sharnessd" "$(readlink "/proc/$DAEMON_PID/exe")" "$(readlink -f "$SHARNESSD")"
maps_of() { awk '{print $6}' "/proc/$1/maps" | grep -E 'libmicrohttpd|libgnutls|libhs' | xargs -rn1 basename | sort -u | tr '\n' ' '; }
check_eq "root's launcher maps no libmicrohttpd, GnuTLS or Vectorscan" "$(maps_of "$DAEMON_PID")" ""
check "the front maps them (the check can fail)" test -n "$(maps_of "$FRONT")"
# A supervisor (a child of the launcher, root) maps none either.
sup=$(for p in $(pgrep -P "$DAEMON_PID"); do [ "$(stat -c %u "/proc/$p")" = 0 ] && echo "$p" && break; done)
check "a supervisor is waiting" test -n "$sup"
check_eq "a supervisor maps none of them" "$(maps_of "$sup")" ""

status() { awk -v k="$1:" '$1 == k {$1 = ""; sub(/^ /, ""); print}' "/proc/$FRONT/status"; }
uids="$UID_FIRST $UID_FIRST $UID_FIRST $UID_FIRST"
check_eq "the front's uids (real, effective, saved, fs)" "$(status Uid)" "$uids"
check_eq "the front's gids" "$(status Gid)" "$uids"
check_eq "the front has no supplementary group" "$(status Groups)" ""
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	check_eq "the front's $c is empty" "$(status "$c")" 0000000000000000
done
check_eq "the front has no_new_privs" "$(status NoNewPrivs)" 1
check_eq "the front is under a seccomp filter" "$(status Seccomp)" 2
# Every thread is under it too (TSYNC, or created after).
bad=0
for t in /proc/"$FRONT"/task/*; do
	[ "$(awk '$1 == "Seccomp:" {print $2}' "$t/status")" = 2 ] || bad=$((bad + 1))
done
check_eq "every thread of the front is filtered" "$bad" 0

# Its descriptors: sockets, pipes, memfds and the audit log; nothing of the
# configuration, the certificates or the secrets file stays open.
fds=$(for f in /proc/"$FRONT"/fd/*; do readlink "$f"; done | sort -u)
check_eq "the front holds no file of root's (certs, secrets, config, state)" \
	"$(printf '%s\n' "$fds" | grep -E "^$T/(certs|secrets|sharnessd.json|state|profiles)" || true)" ""
check "the front holds the audit log (handed over)" grep -qx "$T/audit.log" <<<"$fds"

# It still serves, with the secret filter built after the exec.
run_cmd "echo $(cat "$T/secrets")"
check_eq "a run answers through the exec'd front" "$STATUS" 200
check "the front's filter knows the vault key" bash -c '! grep -q sk-front- <<<"$1"' _ "$(jf .stdout)"

# One event loop (front/loop.c): one thread while no proxy connection is
# served, and asleep while nothing happens - no polling (issue 15.5).
FP=$(front_pid)
check_eq "the front is one thread (one event loop)" "$(awk '/^Threads:/ {print $2}' /proc/$FP/status)" 1
sleep 0.5 # the last request's connection is gone
timeout 3 strace -f -qq -p "$FP" -o "$T/idle.strace" 2>/dev/null
# The attach itself wakes the loop once (one turn: at most two calls); a
# front that polled even once a second would make at least six.  Then only
# the wait it sleeps in shows, unfinished ("<detached ...>").
n=$(grep -c ' = ' "$T/idle.strace")
check "an idle front makes no system call in 3 s but the attach's turn (no polling: $n)" test "$n" -le 2

# What the front's locks let it reach, probed with the same code on this
# kernel (sharnessd-front --probe-lockdown), as root: Landlock says no even
# to root outside /etc and the libraries, and to every write.
probe=$("$BUILD_DIR/sharnessd-front" --probe-lockdown /etc/hostname "$T/certs/server.key" "$T/secrets" 2>&1)
check_eq "lockdown: /etc stays readable (the resolver's files)" "$(grep '^read /etc/hostname' <<<"$probe")" "read /etc/hostname: ok"
check_eq "lockdown: no write to /etc" "$(grep '^write /etc/hostname' <<<"$probe")" "write /etc/hostname: Permission denied"
check_eq "lockdown: the TLS key's file is out of reach (even for root)" "$(grep "^read $T/certs/server.key" <<<"$probe")" "read $T/certs/server.key: Permission denied"
check_eq "lockdown: the secrets file is out of reach" "$(grep "^read $T/secrets" <<<"$probe")" "read $T/secrets: Permission denied"
probe=$("$BUILD_DIR/sharnessd-front" --probe-lockdown --syscall 2>&1); rc=$?
check_eq "lockdown: a call off the allowlist ends the process (exit 70)" "$rc" 70
check_match "lockdown: and says which call it was" "$probe" "made syscall [0-9]+, which its seccomp allowlist does not allow"
e2e_stop

# Fail closed on the front's executable: missing, or writable by others.
D=$T/bin
mkdir -p "$D"
cp "$SHARNESSD" "$D/sharnessd"
out=$("$D/sharnessd" --config "$T/sharnessd.json" 2>&1); rc=$?
check_eq "no sharnessd-front beside it or in ../libexec/sharness: exit 1" "$rc" 1
check_match "and the refusal says where it looked" "$out" "sharnessd-front is neither beside $D/sharnessd nor in $D/../libexec/sharness"
cp "$BUILD_DIR/sharnessd-front" "$D/sharnessd-front"
chmod 0777 "$D/sharnessd-front"
out=$("$D/sharnessd" --config "$T/sharnessd.json" 2>&1); rc=$?
check_eq "a sharnessd-front others may write: exit 1" "$rc" 1
check_match "and the refusal names it" "$out" "$D/sharnessd-front must be a regular file owned by root"
chmod 0755 "$D/sharnessd-front"
check "sharnessd --filter runs the front's filter" bash -c "echo hello | '$D/sharnessd' --filter 2>/dev/null | grep -qx hello"
# Those two refusals came after the daemon had made its cgroups (SPEC: a
# refused start changes nothing): each exit of the launcher removes them.
check_eq "the refused starts left no cgroup of theirs behind" "$(parent_cgroups)" ""
