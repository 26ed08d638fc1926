#!/usr/bin/env bash
# tests/vm/verdicts.sh URL CERTDIR WORKSPACE DAEMON_PID - the verdict table
# (README, "The verdicts") through a daemon that is already running with the
# shipped profiles: the installed unit, or `make run`.  Prints "ok"/"not ok"
# lines.  The attacks (fork bomb, kill -9 1) run only after the first rows
# have proven that commands are sandboxed (own pid namespace, non-root uid,
# private /proc); if that proof fails they are reported as failed, not run.
set -u
URL=$1 C=$2 WS=$3 DPID=$4 PFX=${5:-}
. "$(dirname "$0")/../e2e/lib_checks.sh"
command -v jq >/dev/null || { not_ok "${PFX}jq is installed"; exit 1; }

req() { # METHOD PATH [BODY] [ROLE]: sets STATUS BODY
	local role=${4:-app} out
	out=$(curl -s --max-time 120 --cacert "$C/ca.pem" --cert "$C/$role.pem" --key "$C/$role.key" \
		-X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} -w '\n%{http_code}' "$URL$2")
	STATUS=${out##*$'\n'} BODY=${out%$'\n'*}
}
run() { # CMD [PROFILE]
	req POST /v0/run "$(jq -nc --arg c "$1" --arg p "${2:-analyse}" --arg w "$WS" '{cmd:$c, profile:$p, cwd:$w}')"
}
jf() { printf '%s' "$BODY" | jq -r "$1" 2>/dev/null; }
out() { printf '%s%s' "$(jf .stdout)" "$(jf .stderr)"; }

run 'echo hello from the sandbox; id -u; readlink /proc/self/ns/pid; cat /proc/1/comm; ls /proc | grep -c "^[0-9]"'
check_eq "${PFX}the README's run answers 200" "$STATUS" 200
mapfile -t L <<<"$(jf .stdout)"
proof=1
[ "${L[0]:-}" = "hello from the sandbox" ] || proof=0
[[ "${L[1]:-0}" =~ ^[1-9][0-9]+$ ]] || proof=0
[ "${L[2]:-}" != "$(readlink /proc/self/ns/pid)" ] || proof=0
[ "${L[4]:-99}" -le 4 ] 2>/dev/null || proof=0
if [ "$proof" = 1 ]; then ok "${PFX}proof: sandboxed (uid ${L[1]}, own pid namespace, private /proc)"
else not_ok "${PFX}proof: sandboxed" "$BODY"; fi

v() { # DESC CMD REGEX [PROFILE]
	run "$2" "${4:-analyse}"
	check_match "${PFX}$1" "$STATUS $(out)" "^200 .*$3"
}
# Sandboxes built ahead wait at niceness 19 and a run gets the daemon's
# (launcher.h): under the unit through LimitNICE=, under `make run` through
# root's CAP_SYS_NICE.
dn=$(ps -o ni= -p "$DPID" | tr -d ' ')
v "a run has the daemon's niceness (init, shell, command)" \
	'ps -o ni= -p 1,$$ | tr -d " " | tr "\n" " "; cut -d" " -f19 /proc/self/stat' "$dn $dn $dn\$"
sleep 1
check "${PFX}the sandboxes built ahead wait at niceness 19" bash -c "ps -o ni= --ppid $DPID | grep -q '^ *19\$'"
printf 'int main(void) { return 0; } // TODO: write it\n' >"$WS/vm-todo.c"
v "grep -rn TODO runs" 'grep -rn TODO --include=vm-todo.c .' 'vm-todo.c:1:.*TODO'
v "~/.aws/credentials: no such file" 'cat ~/.aws/credentials' 'No such file or directory'
v "analyse: no network" 'curl -sS --max-time 5 http://192.0.2.1/ 2>&1; echo "rc=$?"' 'rc=7'
run 'curl -sS --max-time 20 -o /dev/null -w "%{http_code}" http://not-on-the-allowlist.example/ 2>&1; echo " rc=$?"' build
check_match "${PFX}build: a host off the allowlist gets the proxy's 403" "$(out)" '403'
v "the daemon's environment does not leak" 'echo "[${ANTHROPIC_API_KEY:-}][${SHARNESS_VM_SECRET:-}]"' '\[\]\[\]'
printf '#!/bin/sh\necho pwned\n' >"$WS/vm-payload"
chmod 755 "$WS/vm-payload"
v "./payload: Permission denied" './vm-payload' 'Permission denied'
v "setuid(0): EPERM" 'python3 -c "import os; os.setuid(0)"' 'Operation not permitted'
v "touch /etc/x refused" 'touch /etc/x' '(Read-only file system|Permission denied)'
v "echo > ~/.bashrc refused" 'echo x > ~/.bashrc' '(Read-only file system|Permission denied)'
v "write outside the workspace refused" 'echo x > /srv/vm-outside.txt' '(Read-only file system|Permission denied|No such file)'
check "${PFX}the host is unchanged" test ! -e /etc/x -a ! -e /srv/vm-outside.txt
# The calls the supervisor and the run's actor make for a run (notify.c,
# actor.c) need what the unit grants: CAP_SYS_PTRACE, CAP_SYS_CHROOT,
# pidfd_getfd, AF_NETLINK.  A write, a .git refused, a run's own socket.
v "build: a write in the workspace works (the actor)" 'echo made > vm-write.txt && cat vm-write.txt && rm vm-write.txt' 'made' build
v "build: a nested .git is refused" 'mkdir -p vm-sub && mkdir vm-sub/.git 2>&1; rm -rf vm-sub' 'Operation not permitted' build
check_eq "${PFX}build: the refusal is named (denials)" "$(jf '[.denials[].lock] | join(",")')" git
v "a run's own unix socket works, another's not" 'python3 -c "
import socket
s = socket.socket(socket.AF_UNIX); s.bind(\"/tmp/own.sock\"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(\"/tmp/own.sock\"); print(\"own-ok\")
"' 'own-ok'
v "> /dev/stderr works" 'echo to-err > /dev/stderr' 'to-err'
# A thread that does not lead its process: on Linux before 6.9 (Debian 12's
# 6.1) the supervisor takes its descriptors through its process's pidfd.
v "build: a thread's dirfd write and connect work" 'python3 -c "
import os, socket, threading
out = []
def work():
    d = os.open(\".\", os.O_RDONLY)
    os.close(os.open(\"vm-thr.txt\", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)); os.unlink(\"vm-thr.txt\", dir_fd=d)
    s = socket.socket(socket.AF_UNIX); s.bind(\"/tmp/thr.sock\"); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(\"/tmp/thr.sock\"); out.append(\"thread-ok\")
t = threading.Thread(target=work); t.start(); t.join(); print(*out)
" 2>&1' 'thread-ok' build
v "build: a git directory by another name is closed" \
	'mkdir -p vm-g/objects vm-g/refs && touch vm-g/HEAD 2>&1; rm -rf vm-g' 'Operation not permitted' build

if [ "$proof" = 1 ]; then
	v "kill -9 1 does nothing" 'kill -9 1; sleep 0.2; echo alive' 'alive'
	v "the daemon's pid is not visible" "kill -9 $DPID 2>&1; echo rc=\$?" 'No such process.*rc=1'
	check "${PFX}the daemon still runs" kill -0 "$DPID"
	# While a run sleeps, its cgroup is on the host with both limits set.
	run 'sleep 4' build >/dev/null &
	sleeper=$!
	found=
	for _ in $(seq 1 40); do
		found=$(find /sys/fs/cgroup -path '*runs/*' -name pids.max 2>/dev/null | head -1)
		[ -n "$found" ] && break
		sleep 0.2
	done
	dir=$(dirname "${found:-/nonexistent/x}")
	check_match "${PFX}the run's cgroup has pids.max" "$(cat "$dir/pids.max" 2>&1)" '^[0-9]+$'
	check_match "${PFX}the run's cgroup has memory.max" "$(cat "$dir/memory.max" 2>&1)" '^[0-9]+$'
	wait "$sleeper"
	v "a fork bomb stops at analyse's pids limit (64)" \
		'exec 2>/dev/null; b() { b | b & }; b; sleep 2; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo "procs=$n"' \
		'procs=([1-9]|[1-5][0-9]|6[0-4])$' analyse
	check "${PFX}the daemon still runs after the bomb" kill -0 "$DPID"
	v "nothing of the run outlives the reply" 'setsid sleep 1000 & sleep 1000 & echo started' 'started'
	sleep 1
	check_eq "${PFX}no sleep 1000 left" "$(pgrep -fc 'sleep 1000')" 0
else
	not_ok "${PFX}attacks not run: the sandbox proof failed"
fi

# admin: waits for a person, then fails anyway (no privileges).
adm=$(mktemp)
(run 'sudo -n rm -rf / 2>&1; echo "rc=$?"' admin; printf '%s' "$BODY" >"$adm") &
waiter=$!
id=
for _ in $(seq 1 50); do
	req GET /v0/approvals
	id=$(jf '.approvals[0].id // empty')
	[ -n "$id" ] && break
	sleep 0.2
done
check_match "${PFX}admin: the run waits for a person's approval" "$id" '.'
req POST "/v0/approvals/$id" '{"decision":"allow"}' person
check_eq "${PFX}admin: the person approves" "$STATUS" 200
wait "$waiter"
BODY=$(cat "$adm")
rm -f "$adm"
check_match "${PFX}admin: sudo fails anyway" "$(out)" 'rc=1'
check "${PFX}admin: / is still there" test -e /etc/passwd
