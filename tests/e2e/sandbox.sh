#!/usr/bin/env bash
# The verdict table of SPEC §14 and the attack checklist, through the real
# daemon.  The attacks run only after the suite has proven, from inside, that
# commands are sandboxed (own pid namespace, non-root uid, private /proc,
# no_new_privs, seccomp): if that proof fails, every attack is reported as
# failed without being run, so a broken sandbox never turns this test into
# an attack on the machine.
. "$(dirname "$0")/lib.sh"

PROBES=$ROOT/build/probes
# A test profile that may execute the probe binaries (and nothing else new).
jq --arg p "$PROBES" '.name = "probe" | .description = "escape-suite probes" | .exec_paths = [$p]' \
	"$ROOT/profiles/analyse.json" >"$T/probe.json"
jq --arg p "$PROBES" '.name = "probew" | .description = "escape-suite probes, writable workspace" |
	.workspace = "read-write" | .exec_paths = [$p] | .network = {"mode": "none"} | .approval = "never"' \
	"$ROOT/profiles/analyse.json" >"$T/probew.json"
# A long value and a short one (Vectorscan takes needles under 15 bytes as
# literals and keeps copies nobody can wipe: the launcher must never build it).
printf 'sk-vault-secret-value-123456\nShortsec12\n' >"$T/secrets"
jq --arg p "$PROBES" '.name = "probex" | .description = "writable, exec in tools/ and x/src" |
	.workspace = "read-write" | .workspace_exec = ["tools", "x/src"] | .approval = "never"' \
	"$ROOT/profiles/analyse.json" >"$T/probex.json"
E2E_PROFILES="$T/probe.json $T/probew.json $T/probex.json"
export ANTHROPIC_API_KEY=sk-ant-daemon-env-must-not-leak
e2e_start "{\"secrets_file\": \"$T/secrets\"}"
unset ANTHROPIC_API_KEY

# --- Proof: are commands really sandboxed? -------------------------------
prove_sandboxed probe

attack() { # DESC CMD [PROFILE] [EXTRA] -- runs only when the proof held
	if [ "$proof" != 1 ]; then
		not_ok "$1" "not run: the sandbox was not proven"
		return 1
	fi
	run_cmd "$2" "${3:-probe}" "${4:-{\}}"
	return 0
}
verdict() { # DESC CMD EXPECTED-STDOUT-REGEX [PROFILE]
	attack "$1" "$2" "${4:-probe}" || return
	check_match "$1" "$(jf .stdout)$(jf .stderr)" "$3"
}

# --- The verdict table (SPEC §14) ------------------------------------------
verdict "grep -rn TODO src runs" 'grep -rn TODO src' 'src/main.c:1:.*TODO'
verdict "~/.aws/credentials: no such file" 'cat ~/.aws/credentials' 'No such file or directory'
verdict "/home holds only the sandbox's home, /root is not there" 'ls -A /home; ls /root 2>&1' "^sandbox.ls: cannot access '/root': No such file"
verdict "no network: curl fails" 'curl -sS --max-time 5 http://192.0.2.1/ 2>&1; echo "rc=$?"' '(Network is unreachable|Could not connect|Failed to connect).*rc=7'
verdict "no network: no name resolution" 'getent hosts pypi.org; echo "rc=$?"' 'rc=2'
attack "the daemon's environment does not leak" 'echo "[$ANTHROPIC_API_KEY]"' &&
	check_eq "the daemon's environment does not leak" "$(jf .stdout)" "[]"
printf '#!/bin/sh\necho pwned\n' >"$WS/payload"
cp /bin/true "$WS/payload-elf"
chmod 755 "$WS/payload" "$WS/payload-elf"
verdict "./payload: Permission denied" './payload' 'Permission denied'
verdict "./payload-elf: Permission denied" './payload-elf 2>&1; echo "rc=$?"' 'Permission denied.*rc=126'
verdict "ld.so ./payload-elf fails (noexec mount)" '/lib64/ld-linux-x86-64.so.2 ./payload-elf 2>&1; echo "rc=$?"' '(failed to map segment|Permission denied|Operation not permitted).*rc=127'
verdict "memfd exec fails (vm.memfd_noexec=2)" "$PROBES/probe_memfd" 'execve_proc_fd EACCES'
verdict "setuid(0): EPERM" 'python3 -c "import os; os.setuid(0)"' 'PermissionError: \[Errno 1\] Operation not permitted'
verdict "setuid binaries are inert" 'su -c id root </dev/null; echo "rc=$?"' 'rc=1'
verdict "vault key filtered" 'echo "token: sk-vault-secret-value-123456"' '^token: \[filtered: vault key\]$'
check_eq "vault key counted" "$(jf .filtered)" 1
# `base64 .env` wraps at 76 columns, and the key's part crosses the wrap
# (bytes 91-118 of the file: characters 122-159, the wrap after 152).
verdict "vault key in base64 .env, wrapped at 76, filtered" \
	'printf "HOST=https://example.org/x\nHOST=https://example.org/x\nHOST=https://example.org/x\nAPI_TOKEN=sk-vault-secret-value-123456\nLOG=info\n" | base64' \
	'filtered: vault key'
check_eq "no part of the wrapped key survives" "$(jf .stdout | tr -d '\n' | grep -c "$(printf 'HOST=https://example.org/x\nHOST=https://example.org/x\nHOST=https://example.org/x\nAPI_TOKEN=sk-vault-secret-value-123456\n' | base64 -w0 | cut -c131-142)")" 0
verdict "touch /etc/x refused" 'touch /etc/x' '(Read-only file system|Permission denied)'
verdict "echo > ~/.bashrc refused" 'echo x > ~/.bashrc' '(Read-only file system|Permission denied)'
verdict "write to a read-only workspace refused" 'echo x > planted.txt' '(Read-only file system|Permission denied)'
verdict "write outside the workspace refused" "echo x > $WS/../outside.txt" '(Read-only file system|Permission denied|No such file)'
verdict "write to /usr refused" 'touch /usr/x' '(Read-only file system|Permission denied)'
check "the host is unchanged" test ! -e /etc/x -a ! -e "$WS/planted.txt" -a ! -e "$T/outside.txt" -a ! -e /usr/x
verdict "kill -9 1 does nothing" 'kill -9 1; sleep 0.2; echo alive' 'alive'
verdict "the daemon's pid is not visible" "kill -9 $DAEMON_PID 2>&1; echo rc=\$?" 'No such process.*rc=1'
check "the daemon still runs" kill -0 "$DAEMON_PID"
# The bomb keeps the shell alive for 2 s and then counts, with builtins only,
# the processes it could make: never more than the profile's pids_max (64).
attack "fork bomb" ':(){ :|:& };:; sleep 2; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo "procs=$n"' probe '{"timeout_s": 10}' &&
	check_match "fork bomb stopped at the pids limit" "$STATUS $(jf .stdout)" '^200 procs=([1-5][0-9]|6[0-4])$'
check "daemon unaffected by the fork bomb" kill -0 "$DAEMON_PID"
run_cmd 'echo still serving' probe
check_eq "daemon serves after the fork bomb" "$(jf .stdout)" "still serving"
sleep 0.3
check_settled "fork bomb: nothing of it left"
if attack "background children do not outlive the reply" 'sleep 1000 & setsid sleep 1000 & (sleep 1000 &) ; id -u'; then
	# Checked at once, no settling: when the reply exists, none of them may.
	run_uid=$(jf .stdout)
	left=$(ps -u "$run_uid" -o comm= 2>/dev/null | grep -cv '^sharnessd$')
	check_eq "background children: none alive when the reply arrives" "$left" 0
	check_match "background children: prompt reply" "$(jf .ms)" '^[0-9]{1,3}$'
fi
check_settled "background children: none left"

# --- Files, mounts, ownership ------------------------------------------------
verdict "/run and /var/run hidden" 'ls /run /var/run 2>&1' "cannot access '/run'.*cannot access '/var/run'"
verdict "/sys hidden" 'ls /sys 2>&1' "cannot access '/sys'"
verdict "private /tmp" 'echo x > /tmp/sandbox-only; ls /tmp' 'sandbox-only'
check "private /tmp is not the host's" test ! -e /tmp/sandbox-only
verdict "/tmp is noexec" 'cp /bin/true /tmp/t && /tmp/t 2>&1; echo "rc=$?"' 'Permission denied.*rc=126'
verdict "/dev/shm is private and noexec" 'cp /bin/true /dev/shm/t && /dev/shm/t 2>&1; echo "rc=$?"' 'Permission denied.*rc=126'
verdict "ipc namespace" 'cat /proc/sysvipc/shm | wc -l' '^1$'
verdict "landlock: /etc/shadow unreadable" 'cat /etc/shadow' 'Permission denied'
verdict "landlock ABI in force (probe_fs)" "$PROBES/probe_fs r:/etc/hostname w:/etc/hostname x:$WS/payload-elf m:$WS/payload-elf" '^r /etc/hostname OK.w /etc/hostname (EROFS|EACCES).x [^ ]+ EACCES.m [^ ]+ EPERM'
chown 12345:12345 "$WS"
mkdir -p "$WS/.git/hooks"
touch "$WS/.git/config"
attack "workspace writes belong to the workspace owner" 'echo made > made.txt; ls -ln made.txt' probew &&
	check_eq "workspace writes belong to the workspace owner" "$(stat -c %u:%g "$WS/made.txt" 2>&1)" "12345:12345"
# No setuid or setgid file may be left for the person's tools: every way to
# set the bits is refused (python's os calls map one to one to syscalls).
verdict "chmod u+s / g+s refused" 'cp /bin/true ./suid-true; chmod 4755 suid-true 2>&1; chmod 2755 suid-true 2>&1; stat -c %a suid-true' 'Operation not permitted.*Operation not permitted.*755$' probew
verdict "setuid mode at creation refused (open, openat, mknod)" 'python3 -c "
import os
for f in (lambda: os.open(\"s1\", os.O_CREAT|os.O_WRONLY, 0o4755), lambda: os.open(\"s2\", os.O_CREAT|os.O_WRONLY, 0o2755, dir_fd=os.open(\".\", os.O_RDONLY)), lambda: os.mknod(\"s3\", 0o104755)):
    try: f(); print(\"made\")
    except OSError as e: print(e.errno)
"' '^1
1
1$' probew
check "no setuid or setgid file reached the host" test -z "$(find "$WS" -perm /6000 2>/dev/null)"
# No world-writable mode, ACL or xattr, no device node (issue 12): chmod with
# o+w is EPERM, the umask keeps S_IWOTH (umask 0 is refused) so nothing is
# created world-writable, setting any xattr (ACLs, file capabilities) is
# EOPNOTSUPP, and mknod of a device fails for want of CAP_MKNOD.  FIFOs and
# socket files may be made (make's jobserver uses a FIFO), never o+w.
mkdir -p "$WS/mine"
chown 12345:12345 "$WS/mine"
verdict "chmod o+w refused (chmod 777 ., chmod o+w, chmod 666)" 'echo x > ww.txt; chmod 777 . 2>&1; chmod o+w mine 2>&1; chmod 666 ww.txt 2>&1; stat -c %a . mine ww.txt' 'Operation not permitted.*Operation not permitted.*Operation not permitted.*
7[0-7][0-5]
7[0-7][0-5]
6[0-7][0-5]$' probew
verdict "umask 0 changes nothing: files, dirs, FIFOs, sockets are not created o+w" 'umask 0; umask; python3 -c "
import os, socket
print(\"umask\", oct(os.umask(0)), oct(os.umask(0)))
os.close(os.open(\"w-open\", os.O_CREAT|os.O_WRONLY, 0o666)); os.mkdir(\"w-dir\", 0o777); os.mkfifo(\"w-fifo\", 0o666)
socket.socket(socket.AF_UNIX).bind(\"w-sock\")
"; touch w-touch; stat -c "%n %a" w-open w-dir w-fifo w-sock w-touch' '^0022
umask 0o22 0o22
w-open 644
w-dir 755
w-fifo 644
w-sock 755
w-touch 644$' probew
verdict "xattrs and ACLs cannot be set (EOPNOTSUPP)" 'python3 -c "
import os
for n in (\"user.x\", \"system.posix_acl_access\", \"security.capability\", \"trusted.x\"):
    try: os.setxattr(\"ww.txt\", n, b\"\\x02\\x00\\x00\\x00\"); print(\"set\")
    except OSError as e: print(e.errno)
try: os.removexattr(\"ww.txt\", \"user.y\"); print(\"removed\")
except OSError as e: print(e.errno)
"' '^95
95
95
95
95$' probew
# The whiteout (a character device 0:0) needs no CAP_MKNOD since Linux
# 5.8: the actor refuses every device type.
verdict "no device node (mknod: no CAP_MKNOD, and no whiteout)" 'python3 -c "
import os
for n, m, d in ((\"d-null\", 0o20644, os.makedev(1, 3)), (\"d-blk\", 0o60644, os.makedev(1, 3)), (\"d-wh\", 0o20644, 0)):
    try: os.mknod(n, m, d); print(\"made\")
    except OSError as e: print(e.errno)
"' '^1
1
1$' probew
check "no world-writable file, no device node reached the host" \
	test -z "$(find "$WS" ! -type l \( -perm -0002 -o -type b -o -type c \) 2>/dev/null)"
check_eq "the host sees no xattr or ACL on the run's file" "$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' "$WS/ww.txt" 2>&1)" "[]"
rm -rf "$WS/mine" "$WS"/w-* "$WS/ww.txt"

verdict ".git/hooks stays read-only" 'echo "#!/bin/sh" > .git/hooks/pre-commit' '(Read-only file system|Permission denied)' probew
verdict ".git/config stays read-only" 'echo "[core]" >> .git/config' '(Read-only file system|Permission denied)' probew
check "no hook was planted" test ! -e "$WS/.git/hooks/pre-commit"
# git reads more than hooks/ and config: all of .git is read-only, and it
# cannot be swapped for a planted copy.
verdict ".git/commondir cannot be planted" 'echo ../.evil > .git/commondir' '(Read-only file system|Permission denied)' probew
verdict ".git cannot be renamed away" 'mv .git .git.old 2>&1' '(Device or resource busy|Read-only file system|Permission denied|Value too large)' probew
verdict ".git cannot be removed" 'rm -rf .git 2>&1' '(Device or resource busy|Read-only file system|Permission denied)' probew
check "the host's .git is intact" test -d "$WS/.git/hooks" -a ! -e "$WS/.git/commondir" -a ! -e "$WS/.git.old"

# Exec subpaths: granted where the profile says, and a symlink planted by one
# run can never turn them into a writable window on the host (x/src -> the
# host's /usr/local/src).
mkdir -p "$WS/tools"
printf '#!/bin/sh\necho tool ran\n' >"$WS/tools/tool"
chmod 755 "$WS/tools/tool"
chown -R 12345:12345 "$WS/tools"   # the person's own files, as in a real workspace
verdict "exec subpath: a tool there runs" './tools/tool' '^tool ran$' probex
verdict "exec subpath: elsewhere still Permission denied" './payload 2>&1' 'Permission denied' probex
up=$(realpath --relative-to="$WS" /usr/local)
attack "exec subpath: plant a symlink to the host" "ln -s $up x && echo planted" probex
verdict "exec subpath: the symlinked path is not bound (no write to the host)" 'touch x/src/sharness-escape-probe 2>&1; echo rc=$?' 'rc=1' probex
check "exec subpath: nothing reached the host" test ! -e /usr/local/src/sharness-escape-probe
rm -f /usr/local/src/sharness-escape-probe "$WS/x"
verdict "writable workspace is still noexec" 'cp /bin/true ./t2 && ./t2 2>&1; echo "rc=$?"' 'Permission denied.*rc=126' probew

# --- seccomp and network probes ----------------------------------------------
# A kernel without IA32 emulation (no int 0x80 entry: the call is SIGSEGV
# before any filter) has no i386 call to kill: the run must then see the
# same SIGSEGV, and SIGSYS wherever the host has the entry.
i386_want="i386 SIGSYS"
"$PROBES/probe_syscalls" abi | grep -q '^i386 SIGSEGV' && i386_want="i386 SIGSEGV"
attack "seccomp probe" "$PROBES/probe_syscalls" && {
	out=$(jf .stdout)
	for want in "ptrace EPERM" "unshare EPERM" "mount EPERM" "clone3 ENOSYS" "io_uring_setup ENOSYS" \
		"open_tree ENOSYS" "keyctl EPERM" "bpf EPERM" "x32 SIGSYS" "$i386_want"; do
		check "seccomp: $want" grep -q "^$want" <<<"$out"
	done
}
# A crash hands no core to a core_pattern pipe helper (systemd-coredump,
# apport: root, outside the sandbox): RLIMIT_CORE is 1, the value at which
# the kernel runs none (tests/vm/guest.sh proves it with a real helper).
# Setting it answers success and changes nothing (GnuPG dies if it cannot
# "disable core dumps"); a prlimit that also reads the old value is refused.
verdict "no core dump helper: RLIMIT_CORE stays 1 byte, setting it changes nothing, reading works" 'gpg --version >/dev/null 2>&1 && echo gpg ok; ulimit -c 0 && echo ulimit ok; python3 -c "
import resource as r
print(r.getrlimit(r.RLIMIT_CORE), r.prlimit(0, r.RLIMIT_CORE))
r.setrlimit(r.RLIMIT_CORE, (0, 1)); print(\"set\", r.getrlimit(r.RLIMIT_CORE))
try: r.prlimit(0, r.RLIMIT_CORE, (0, 0)); print(\"lowered\")
except OSError as e: print(\"refused\", e)"' '^gpg ok
ulimit ok
\(1, 1\) \(1, 1\)
set \(1, 1\)
refused \[Errno 1\] Operation not permitted$'
attack "network probe" "$PROBES/probe_net" && {
	out=$(jf .stdout)
	for want in "ifaces - lo" "connect_tcp 192.0.2.1:443 E(NETUNREACH|ACCES)" "socket_packet - EAFNOSUPPORT" \
		"socket_alg - EAFNOSUPPORT" "socket_vsock - EAFNOSUPPORT" "bind_tcp 127.0.0.1:0 EACCES"; do
		check "network: $want" grep -Eq "^$want" <<<"$out"
	done
}

# --- the secrets live in the front alone ---------------------------------------
# Every supervisor and sandbox init is forked from the root launcher, so the
# launcher must not keep the vault values or the TLS key once the front has
# them; and the init (pid 1 of the run) is not readable by the command.
verdict "the command cannot read the init's memory or environment" \
	'head -c 8 /proc/1/mem 2>&1; cat /proc/1/environ 2>&1' 'Permission denied.*Permission denied'
if [ -n "${SHARNESS_SANITIZED:-}" ]; then
	# ASan reserves terabytes of shadow and allocator space; reading it back
	# is not feasible.  The release build is searched by `make test`.
	echo "# skipped under the sanitizer build: memory search of launcher, supervisors, inits (2 checks)"
else
	key_line=$(sed -n 3p "$T/certs/server.key")
	front=$(front_pid)
	held=
	for p in $(pgrep -P "$DAEMON_PID"); do
		[ "$p" = "$front" ] && continue
		for q in "$p" $(pgrep -P "$p"); do # a supervisor and its sandbox's init
			n=$(python3 "$ROOT/tests/stress/memgrep.py" "$q" sk-vault-secret-value-123456 Shortsec12 "$key_line" | awk '{s += $1} END {print s}')
			[ "$n" != 0 ] && held="$held $q($(ps -o uid=,args= -p "$q" | tr -s ' '): $n)"
		done
	done
	n=$(python3 "$ROOT/tests/stress/memgrep.py" "$DAEMON_PID" sk-vault-secret-value-123456 Shortsec12 "$key_line" | awk '{s += $1} END {print s}')
	[ "$n" != 0 ] && held="$held launcher($n)"
	check_eq "no vault value (long or short) or TLS key line in the launcher, supervisors or inits" "${held:-none}" none
	check_match "the front does hold them (the search works)" \
		"$(python3 "$ROOT/tests/stress/memgrep.py" "$front" sk-vault-secret-value-123456 Shortsec12 "$key_line" | cut -d' ' -f1 | tr '\n' ' ')" '^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]* $'
fi

# --- the supervisor is the run's uid while the run lives (issue 15) -------------
# Once the sandbox is built, the run's supervisor drops to the run's uid
# (root/supervise.c, become_run): the run's calls it answers and the memory
# it reads for them are handled with no privilege.  Seen from the host, on
# a run that sleeps: the parent of the run's init is the launcher's child,
# of the run's uid (real, effective, saved, fs), with no capability,
# no_new_privs and not dumpable (the files in /proc/PID are root's); the init and
# the file actor are of the same uid.
running_supervisor() { # [NOT-PID] the launcher's child of a run's uid (a sandbox built ahead is root's)
	local p u
	for _ in $(seq 1 60); do
		for p in $(pgrep -P "$DAEMON_PID"); do
			[ "$p" = "$(front_pid)" ] || [ "$p" = "${1:-}" ] && continue
			u=$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
			[ -n "$u" ] && [ "$u" != 0 ] && { echo "$p"; return; }
		done
		sleep 0.05
	done
}
vm_of() { # which of the supervisor $1's children share its memory (kcmp(2), KCMP_VM)
	python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
print(" ".join(c for c in sys.argv[2:] if libc.syscall(312, int(sys.argv[1]), int(c), 1, 0, 0) == 0))' "$1" $(pgrep -P "$1")
}
api POST /v0/jobs '{"cmd": ": > /tmp/w; sleep 3", "profile": "analyse"}'
sup=$(running_supervisor)
check "a running run's supervisor is found" test -n "$sup"
if [ -n "$sup" ]; then
	uid=$(awk '/^Uid:/ {print $2}' "/proc/$sup/status")
	check "... of the pool's uids ($uid)" test "$uid" -gt "$UID_FIRST"
	check_eq "... real, effective, saved and fs uid alike" "$(awk '/^Uid:/ {print $2,$3,$4,$5}' "/proc/$sup/status")" "$uid $uid $uid $uid"
	check_eq "... and gid" "$(awk '/^Gid:/ {print $2,$3,$4,$5}' "/proc/$sup/status")" "$uid $uid $uid $uid"
	check_eq "... no capability at all" "$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ && $1 != "CapBnd:" {print $2}' "/proc/$sup/status" | sort -u)" 0000000000000000
	check_eq "... no_new_privs" "$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$sup/status")" 1
	check_eq "... not dumpable: its /proc files are root's" "$(stat -c %u "/proc/$sup/status")" 0
	kids=$(pgrep -P "$sup" | while read -r k; do awk '/^Uid:/ {print $2}' "/proc/$k/status"; done | sort -u)
	check_eq "... its children (the init, the actor) are of its uid" "$kids" "$uid"
	# Both in the run's cgroup: its limits and its kill cover the actor
	# too, and an empty cgroup means nothing of the run's uid lives on.
	cgs=$(pgrep -P "$sup" | while read -r k; do awk -F: '$2 == "pids" {print $3}' "/proc/$k/cgroup"; done | sort -u)
	check_match "... and both are in the run's cgroup" "$cgs" "^/sharness-$UID_FIRST/run-$uid\$"
	# The init runs in the supervisor's memory, made by a thread of the
	# supervisor that then only waits (root/initclone.c): that thread too
	# holds nothing the supervisor gave up.
	threads=$(for t in /proc/"$sup"/task/*/status; do
		awk '/^Uid:/ {u = $2 $3 $4 $5} /^CapPrm:|^CapEff:/ {c = c $2} /^NoNewPrivs:/ {n = $2} END {print u, c, n}' "$t"
	done | sort -u)
	check_eq "... every thread of it alike: the uid, no capability, no_new_privs" "$threads" \
		"$uid$uid$uid$uid 00000000000000000000000000000000 1"
	# The actor waits in the supervisor's memory too, until the run's
	# first write: then it execs sharness-actor (root/actor.c).
	for _ in $(seq 1 40); do
		shared=$(vm_of "$sup")
		[ "$(wc -w <<<"$shared")" = 1 ] && break
		sleep 0.1
	done
	check_eq "... once the run wrote, the init (pid 1 of the run) shares the supervisor's memory, the actor does not" \
		"$(for c in $shared; do awk '/^NSpid:/ {print $3}' "/proc/$c/status"; done)" 1
fi
JOB=$(jf .job_id)
for _ in $(seq 1 80); do api GET "/v0/jobs/$JOB"; [ "$(jf .state)" = running ] || break; sleep 0.1; done
check_eq "... and the run ends well" "$(jf .state) $(jf .exit)" "exited 0"
# A run that writes nothing never makes its actor exec: the actor is the
# supervisor's clone, named sharness-actor, in the supervisor's memory.
# Its supervisor is the launcher's child of a run's uid that was not one
# before (a sandbox built ahead is root's until it gets the run; an earlier
# run's may still be tearing down), looked for again for up to 3 s: it and
# its children may be caught between a fork and a name, and a VM test
# beside it slows everything (the run sleeps 4 s).
run_uids_before=$(for p in $(pgrep -P "$DAEMON_PID"); do
	[ "$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = 0 ] || echo "$p"
done)
api POST /v0/jobs '{"cmd": "sleep 4", "profile": "analyse"}'
waiting=
for _ in $(seq 1 30); do
	sup=
	for p in $(pgrep -P "$DAEMON_PID"); do
		[ "$p" = "$(front_pid)" ] || grep -qx "$p" <<<"$run_uids_before" && continue
		u=$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
		[ -n "$u" ] && [ "$u" != 0 ] && sup=$p
	done
	for c in $( [ -n "$sup" ] && vm_of "$sup"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = sharness-actor ] && waiting=$c
	done
	[ -n "$waiting" ] && break
	sleep 0.1
done
check "a run that writes nothing: its actor waits unexec'd, in the supervisor's memory" test -n "$waiting"
check_eq "... as the run's uid" "$(awk '/^Uid:/ {print $2,$3,$4,$5}' "/proc/$waiting/status" 2>/dev/null)" \
	"$(awk '/^Uid:/ {print $2,$3,$4,$5}' "/proc/$sup/status" 2>/dev/null)"
JOB=$(jf .job_id)
for _ in $(seq 1 100); do api GET "/v0/jobs/$JOB"; [ "$(jf .state)" = running ] || break; sleep 0.1; done
check_eq "... and the run ends well" "$(jf .state) $(jf .exit)" "exited 0"

# --- a run whose requester left before it started never starts -----------------
# The supervisor looks at its channel once more before it hands the command
# over (asrun/watch.c, front_left): a client that hung up while its sandbox
# was built or rebuilt gets nothing run.  Made certain here by stopping every
# sandbox built ahead (root's, waiting) before the request and going on with
# them once the client has hung up and the front has shut the channel.
settled >/dev/null
ahead=$(for p in $(pgrep -P "$DAEMON_PID"); do
	[ "$p" != "$(front_pid)" ] && [ "$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)" = 0 ] && echo "$p"
done)
check "sandboxes built ahead are waiting ($(wc -w <<<"$ahead"))" test -n "$ahead"
left_before=$(grep -c 'before it started; not starting it' "$T/daemon.log")
kill -STOP $ahead
API_MAX_TIME=1 run_cmd 'touch left-before-start' build
sleep 0.3 # the front sees the hang-up and shuts the channel at once
kill -CONT $ahead
for _ in $(seq 1 40); do
	[ "$(grep -c 'before it started; not starting it' "$T/daemon.log")" != "$left_before" ] && break
	sleep 0.05
done
check_eq "a client that hung up before its run started: no reply" "$STATUS" 000
check_eq "... its supervisor did not start the command (the daemon's log says so)" \
	"$(grep -c 'before it started; not starting it' "$T/daemon.log")" $((left_before + 1))
check "... which left nothing in the workspace" test ! -e "$WS/left-before-start"
check_settled "... nor any process or cgroup of the run"

# --- the reply and the file actor's last write ---------------------------------
# The reply goes once the run's processes are gone; the actor, which made
# their writes, is killed then and waited for only while a write of theirs
# is still in its hands (asrun/notify.c, notify_stop).  A writer killed
# mid-stream: once the reply is here, the file changes no more.
run_cmd '(i=0; while :; do i=$((i + 1)); echo "$i" >> actor-last.txt; done) & sleep 0.3' build
check_eq "a run whose background writer is killed at its end: 200, exit 0" "$STATUS $(jf .exit)" "200 0"
first=$(wc -l <"$WS/actor-last.txt" 2>/dev/null)
sleep 0.3
check "... the writer wrote through the actor (${first:-no} lines)" test "${first:-0}" -gt 0
check_eq "... and once the reply came the file changed no more" "$(wc -l <"$WS/actor-last.txt" 2>/dev/null)" "$first"
rm -f "$WS/actor-last.txt"
# A write still in the actor's hands at the end: an open of a FIFO that no
# one reads blocks in the actor.  The run still ends at once, and leaves no
# process behind (the actor is killed out of the open and reaped).
API_MAX_TIME=20 run_cmd 'mkfifo actor-fifo && { (exec 3>actor-fifo) & sleep 0.3; }' build
check_eq "a run that leaves a write blocked in the actor: 200, exit 0" "$STATUS $(jf .exit)" "200 0"
check_settled "... and nothing of it is left (no actor, no cgroup)"
rm -f "$WS/actor-fifo"
# The supervisor never waits on what the run controls: an actor stuck in such
# an open with 30 writes queued behind it, and a connect to a listener whose
# backlog is full.  Each once held the supervisor's loop, so the run's
# timeout never fired and no reply came.
if [ "$proof" = 1 ]; then
	API_MAX_TIME=20 run_cmd 'mkfifo actor-fifo2 && (exec 3>actor-fifo2) & sleep 0.3; for i in $(seq 30); do touch actor-t$i 2>/dev/null & done; wait' build '{"timeout_s": 3}'
	check_eq "an actor stuck in one open with 30 writes behind it: the timeout still ends the run" "$STATUS $(jf .timed_out)" "200 true"
	check_match "... and the writes it could not take were answered EAGAIN, named in denials" "$(jf '.denials[].detail')" \
		"file actor has [0-9]+ calls waiting behind one that blocks"
	rm -f "$WS"/actor-t* "$WS/actor-fifo2"
fi
API_MAX_TIME=20 verdict "a connect to a listener whose backlog is full waits 0.5 s at most: EAGAIN, the run goes on" 'python3 -c "
import socket
s = socket.socket(socket.AF_UNIX); s.bind(\"\\0full\"); s.listen(0)
a = socket.socket(socket.AF_UNIX); a.setblocking(False); a.connect(\"\\0full\")
b = socket.socket(socket.AF_UNIX)
try:
    b.connect(\"\\0full\"); print(\"connected\")
except OSError as e:
    print(e.strerror)
"' '^Resource temporarily unavailable$'

# --- small leaks (issue 12) ----------------------------------------------------
# The init is a fork of the launcher: its command line (the daemon's, with
# the config path) is emptied; the host's boot line is an empty read-only file.
verdict "/proc/1/cmdline shows nothing of the daemon" 'printf "[%s]" "$(tr -d "\0" </proc/1/cmdline)"; grep -c sharness /proc/1/cmdline' '^\[\]0$'
verdict "/proc/cmdline is empty and read-only" 'printf "[%s]" "$(cat /proc/cmdline)"; echo x >/proc/cmdline 2>&1' '^\[\].*(Read-only file system|Permission denied)'

# --- no .git made or changed anywhere in the workspace (issue 12) ---------------
# On 0.1 only the top-level .git was protected: a run could plant a nested
# repository whose config runs core.fsmonitor at the person's next `git
# status` there (their IDE's and prompt's too), or change an existing one.
# Every write that could touch a .git is made by the run's actor (actor.c).
mkdir -p "$WS/vendor/dep" "$WS/sub"
git init -q "$WS/vendor/dep"   # the person's own nested clone
test -e "$WS/vendor/dep/.git/hooks/pre-commit.sample" || printf '#!/bin/sh\n' >"$WS/vendor/dep/.git/hooks/pre-commit.sample"
chown -R 12345:12345 "$WS/vendor" "$WS/sub"
dep_sum=$(cd "$WS/vendor/dep" && find .git -type f -exec sha256sum {} + | sort)
git_denied='(Operation not permitted|Read-only file system)'
verdict ".git: git init of a nested repository is refused" 'git init -q vendor/lib 2>&1; ls -a vendor/lib 2>&1' "$git_denied" probew
verdict ".git: mkdir of a nested .git is refused" 'mkdir -p sub/.git 2>&1' "$git_denied" probew
verdict ".git: a gitfile is refused" 'echo "gitdir: ../evil" > sub/.git' "$git_denied" probew
verdict ".git: a .git symlink is refused" 'ln -s ../evil sub/.git 2>&1' "$git_denied" probew
verdict ".git: a hard link named .git is refused" 'echo x > plain; ln plain sub/.git 2>&1; rm -f plain' "$git_denied" probew
verdict ".git: renaming a prepared directory to .git is refused" \
	'mkdir -p evil/hooks && printf "[core]\n\tfsmonitor = touch PWNED\n" > evil/config && mv evil sub/.git 2>&1; rm -rf evil' \
	"$git_denied" probew
verdict ".git: case and 8.3 variants are refused" \
	'for n in .GIT .Git .git. ".git " git~1 GIT~1; do mkdir "sub/$n" 2>&1 || true; done' \
	"^(mkdir: cannot create directory [^:]*: $git_denied
?){6}$" probew
verdict ".git: a nested repository's config cannot be changed" \
	'printf "\tfsmonitor = touch PWNED\n" >> vendor/dep/.git/config' "$git_denied" probew
verdict ".git: nor through git itself" 'git -C vendor/dep config core.fsmonitor "touch PWNED" 2>&1' \
	'(could not lock|Operation not permitted|Read-only file system)' probew
verdict ".git: the person's nested repository still reads" 'git -C vendor/dep rev-parse --git-dir' '^\.git$' probew
verdict ".git: nor through a symlink to it" \
	'ln -s vendor/dep/.git/config c && printf "x\n" >> c; rm -f c' "$git_denied" probew
verdict ".git: nor by a hard link out of it" 'ln vendor/dep/.git/config h 2>&1' "$git_denied" probew
verdict ".git: no hook made executable, renamed or planted" \
	'chmod +x vendor/dep/.git/hooks/pre-commit.sample 2>&1; mv vendor/dep/.git/hooks/pre-commit.sample vendor/dep/.git/hooks/pre-commit 2>&1; echo x > vendor/dep/.git/hooks/post-checkout' \
	"$git_denied.*$git_denied.*$git_denied" probew
verdict ".git: a nested .git cannot be moved away, removed or truncated" \
	'mv vendor/dep/.git vendor/dep/git-old 2>&1; rm -rf vendor/dep/.git 2>&1; truncate -s 0 vendor/dep/.git/config 2>&1' \
	"$git_denied.*$git_denied.*$git_denied" probew
check_eq ".git: the nested repository is unchanged on the host" \
	"$(cd "$WS/vendor/dep" && find .git -type f -exec sha256sum {} + | sort)" "$dep_sum"
check_eq ".git: no .git (any spelling) was planted on the host" \
	"$(cd "$WS" && find . -path ./.git -prune -o -path ./vendor/dep/.git -prune -o \( -iname '.git*' -o -iname 'git~1' \) -print | sort)" ""
verdict ".git: ordinary writes, renames and git in /tmp still work" \
	'mkdir -p w/x && echo a > w/x/f && mv w/x w/y && ln w/y/f w/g && chmod 600 w/g && rm -r w && echo files-ok;
	 cd /tmp && git init -q r && git -C r -c user.name=t -c user.email=t@t commit -q --allow-empty -m m && git -C r log --oneline | wc -l' \
	'^files-ok
1$' probew
# --- no AI agent's configuration made or changed in the workspace (review s36) --
# Claude Code, Cursor, Gemini CLI and Codex read project settings that carry
# hooks, MCP servers and environment: the agent runs them on the host, so one
# run could switch the sharness hook off or plant a host command.
mkdir -p "$WS/cfg/.vscode" "$WS/proj/.claude" "$WS/shared" "$WS/linked"
printf '{"version":"2.0.0","tasks":[]}\n' >"$WS/cfg/.vscode/tasks.json"
printf '{"hooks":{}}\n' >"$WS/proj/.claude/settings.json"
printf '{"hooks":{}}\n' >"$WS/shared/settings.json"
ln -s ../shared "$WS/linked/.claude"   # a project's .claude kept elsewhere (a monorepo, dotfiles)
chown -R 12345:12345 "$WS/cfg" "$WS/proj" "$WS/shared" "$WS/linked"
agent_sum=$(cd "$WS/cfg" && sha256sum .vscode/tasks.json)
shared_sum=$(sha256sum <"$WS/shared/settings.json")
verdict "agent config: .claude/settings.local.json cannot be made" \
	'mkdir .claude 2>&1; mkdir -p sub && echo "{\"disableAllHooks\":true}" > sub/.claude 2>&1' \
	"$git_denied.*$git_denied" probew
verdict "agent config: nor .mcp.json, .cursor, .gemini or .codex, in any case" \
	'{ echo "{}" > .mcp.json; for n in .Cursor .GEMINI .codex; do mkdir "cfg/$n" || true; done; } 2>&1 | grep -cE "Operation not permitted|Read-only file system"' \
	'^4$' probew
verdict "agent config: nor by a name a casefolding directory folds to one (U+017F, U+212A)" \
	'for n in "$(printf ".cur\305\277or")" "$(printf ".\342\204\252iro")"; do mkdir "cfg/$n"; done 2>&1 | grep -cE "Operation not permitted|Read-only file system"' \
	'^2$' probew
verdict "agent config: nor made by a rename" 'mkdir -p evil && echo "{}" > evil/settings.json && mv evil .claude 2>&1; rm -rf evil' \
	"$git_denied" probew
verdict "agent config: the person's .vscode/tasks.json cannot be written, removed or moved" \
	'echo x >> cfg/.vscode/tasks.json 2>&1; rm -f cfg/.vscode/tasks.json 2>&1; mv cfg/.vscode cfg/vs 2>&1' \
	"$git_denied.*$git_denied.*$git_denied" probew
attack "agent config: the denial names the lock" 'echo "{}" > .mcp.json' probew &&
	check_match "agent config: the denial names the lock" \
		"$(jf '.denials[] | "\(.lock): \(.detail) | \(.hint)"')" \
		"^agent-config: refused open .mcp.json: it would change an AI agent.s configuration.* \| runs may not change an AI agent.s own configuration"
# review s36 fixes: a .claude that is a symlink is still the agent's, and a
# project's directory moved away takes its configuration from where the
# agent reads it.
verdict "agent config: nor written through a .claude that is a symlink" \
	'echo "{\"disableAllHooks\":true}" > linked/.claude/settings.json' "$git_denied" probew
verdict "agent config: a directory holding one is not moved away (nor exchanged)" \
	'mv proj proj.old 2>&1; mkdir -p other && python3 -c "import ctypes, os; r = ctypes.CDLL(None, use_errno=True).renameat2(-100, b\"proj\", -100, b\"other\", 2); print(\"exchange\", r, os.strerror(ctypes.get_errno()))"; rmdir other' \
	"$git_denied.*
exchange -1 (Read-only file system|Operation not permitted)" probew
check_eq "agent config: the shared settings and the project are unchanged on the host" \
	"$(sha256sum <"$WS/shared/settings.json") $(ls -A "$WS/proj")" "$shared_sum .claude"
check_eq "agent config: nothing was made or changed on the host" \
	"$(cd "$WS" && find . \( -path ./proj/.claude -o -path ./linked/.claude \) -prune -o \( -iname '.claude' -o -iname '.mcp.json' -o -iname '.cursor' -o -iname '.gemini' -o -iname '.codex' \) -print | sort) $(cd "$WS/cfg" && sha256sum .vscode/tasks.json)" \
	" $agent_sum"
verdict "agent config: the person's .vscode is not chmod-ed (made unreadable or group-writable)" \
	'chmod 700 cfg/.vscode 2>&1; chmod 775 cfg/.vscode 2>&1' "$git_denied.*$git_denied" probew
verdict "agent config: a .vscode with only extensions.json may be made, moved and removed (npm create vite), nothing else in it" \
	'mkdir -p app/.vscode && echo "{\"recommendations\": []}" > app/.vscode/extensions.json && cat app/.vscode/extensions.json && { echo x > app/.vscode/settings.json; ln -s /tmp/x app/.vscode/tasks.json; mv app/.vscode app/.claude; ln -s /tmp app/x && mv app/x app/.vscode2 && mv app/.vscode2 app/.vscode; } 2>&1; mv app app2 && rm -r app2 && echo removed' \
	"^\{\"recommendations\": \[\]\}
.*$git_denied.*$git_denied.*$git_denied.*$git_denied.*
removed\$" probew
verdict "agent config: a project's other dot files still work" \
	'echo x > .editorconfig && mkdir -p .github && echo y > .github/ci.yml && cat .editorconfig .github/ci.yml && rm -r .editorconfig .github' \
	'^x
y$' probew

# git reads a repository by any name, not only .git: the .bare that a
# gitfile or a .git symlink names (the bare repository and worktrees
# layout), a separate git dir, Android repo's projects/x.git.  A directory
# that git's own test takes for one (HEAD, objects/ and refs/, or a
# commondir) is as closed as a .git, and a run cannot make one.
mkdir -p "$WS/vendor/wt" "$WS/vendor/wl"
git init -q --bare "$WS/vendor/wt/.bare"
echo 'gitdir: ./.bare' >"$WS/vendor/wt/.git"
git init -q --bare "$WS/vendor/wl/.bare"
ln -s .bare "$WS/vendor/wl/.git"
chown -R 12345:12345 "$WS/vendor"
bare_sum=$(cd "$WS/vendor" && find wt/.bare wl/.bare -type f -exec sha256sum {} + | sort)
verdict "git dir by any name: the .bare a gitfile names is read-only" \
	'printf "[core]\n\tfsmonitor = touch PWNED\n" >> vendor/wt/.bare/config; echo x > vendor/wt/.bare/hooks/pre-commit' \
	"$git_denied.*$git_denied" probew
verdict "git dir by any name: nor through git itself" 'git -C vendor/wt config core.fsmonitor "touch PWNED" 2>&1' \
	'(could not lock|Operation not permitted|Read-only file system)' probew
verdict "git dir by any name: nor through a .git symlink" 'echo x >> vendor/wl/.git/config' "$git_denied" probew
verdict "git dir by any name: a bare repository cannot be made" 'git init -q --bare bare.git 2>&1' "$git_denied" probew
verdict "git dir by any name: nor by hand, in any order" \
	'mkdir -p f1/objects f1/refs; echo "ref: refs/heads/m" > f1/HEAD; mkdir -p f2/refs; touch f2/HEAD; mkdir f2/objects; mkdir f3; touch f3/HEAD; echo ../x > f3/commondir' \
	"$git_denied.*$git_denied.*$git_denied" probew
verdict "git dir by any name: a file named HEAD alone is just a file" 'mkdir -p h/objects && echo x > h/HEAD && cat h/HEAD' '^x$' probew
check_eq "git dir by any name: the repositories are unchanged on the host" \
	"$(cd "$WS/vendor" && find wt/.bare wl/.bare -type f -exec sha256sum {} + | sort)" "$bare_sum"
made=
for d in bare.git f1 f2 f3; do
	[ -e "$WS/$d/HEAD" ] && { [ -e "$WS/$d/objects" -a -e "$WS/$d/refs" ] || [ -e "$WS/$d/commondir" ]; } && made="$made $d"
done
check_eq "git dir by any name: none was made on the host (HEAD, objects and refs, or commondir)" "${made:-none}" none
rm -rf "$WS/bare.git" "$WS/f1" "$WS/f2" "$WS/f3" "$WS/h"
# A socket file is a directory entry too: bind(2) goes to the actor.
verdict "bind: no socket file named .git, in a .git or in a git directory" 'python3 -c "
import socket
for p in (\"sub/.git\", \"vendor/dep/.git/index.lock\", \"vendor/wt/.bare/x.sock\"):
    try: socket.socket(socket.AF_UNIX).bind(p); print(\"bound\")
    except OSError as e: print(e.strerror)
"' '^Operation not permitted
Read-only file system
Read-only file system$' probew
check "bind: nothing was made on the host" test ! -e "$WS/sub/.git" -a ! -e "$WS/vendor/dep/.git/index.lock" -a ! -e "$WS/vendor/wt/.bare/x.sock"
verdict "bind: a socket file in a subdirectory, UDP on the run's loopback, abstract and autobind work; TCP does not" 'mkdir -p sockdir && python3 -c "
import socket
s = socket.socket(socket.AF_UNIX); s.bind(\"sockdir/srv.sock\"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(\"sockdir/srv.sock\"); print(\"path\", s.getsockname())
t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); t.bind((\"127.0.0.1\", 0)); print(\"udp\", t.getsockname()[1] > 0)
try: socket.socket().bind((\"127.0.0.1\", 0)); print(\"tcp bound\")
except OSError as e: print(\"tcp\", e.strerror)
a = socket.socket(socket.AF_UNIX); a.bind(\"\0sharness-abs\"); print(\"abstract\", a.getsockname()[1:].decode())
u = socket.socket(socket.AF_UNIX); u.bind(\"\"); print(\"autobind\", len(u.getsockname()))
"; ls -l sockdir/srv.sock | cut -c1-10; rm -r sockdir' '^path srv.sock
udp True
tcp Permission denied
abstract sharness-abs
autobind 6
srwxr-xr-x$' probew
# What the workspace's git config names in the working tree is run by the
# person's git, outside the sandbox: hooks under core.hooksPath (husky's
# .husky/_), a config file it includes (which may set core.fsmonitor), a
# command it runs by itself, a hook symlinked out of .git.  A run may
# change none of them, nor plant a link or a directory on the way to one.
cp "$WS/.git/config" "$T/git-config.saved"
printf '[core]\n\thooksPath = .husky/_\n\tfsmonitor = ./tools/fsmon.sh\n[include]\n\tpath = ../.gitconfig\n' >"$WS/.git/config"
mkdir -p "$WS/tools" "$WS/scripts"
printf '#!/bin/sh\n' >"$WS/tools/fsmon.sh"
printf '#!/bin/sh\n' >"$WS/scripts/pre-push"
ln -s ../../scripts/pre-push "$WS/.git/hooks/pre-push"
chown -R 12345:12345 "$WS/tools" "$WS/scripts"
runs_sum=$(cd "$WS" && sha256sum tools/fsmon.sh scripts/pre-push)
runs_denied='Permission denied'
verdict "git runs: core.hooksPath's directory cannot be planted, nor a link or a directory on the way to it" \
	'ln -s /tmp/h .husky 2>&1; mkdir -p q/_ && mv q .husky 2>&1; mkdir -p .husky/_ 2>&1; rm -rf q' \
	"$runs_denied.*$runs_denied.*cannot create directory ..husky/_.: $runs_denied" probew
verdict "git runs: the config it includes cannot be planted" \
	'printf "[core]\n\tfsmonitor = touch PWNED\n" > .gitconfig; ln -s /tmp/c .gitconfig 2>&1' \
	"$runs_denied.*$runs_denied" probew
verdict "git runs: the fsmonitor command cannot be changed, removed or linked out" \
	'echo "touch PWNED" >> tools/fsmon.sh; rm tools/fsmon.sh 2>&1; ln tools/fsmon.sh f 2>&1' \
	"$runs_denied.*$runs_denied.*$runs_denied" probew
check_match "git runs: the denial names the key and the lock" \
	"$(jf '.denials[] | "\(.lock): \(.detail) | \(.hint)"')" \
	'^git: refused open tools/fsmon.sh: the person.s git runs it \(core.fsmonitor\) \| the person.s git would run or read this path'
verdict "git runs: nor the hook a symlink in .git leads to" 'echo "touch PWNED" >> scripts/pre-push' "$runs_denied" probew
verdict "git runs: a directory on the way may be moved away, not back" 'mv tools tools-away && mv tools-away tools 2>&1' \
	"$runs_denied" probew
mv "$WS/tools-away" "$WS/tools" 2>/dev/null || true
verdict "git runs: the rest of the tree is written as ever" \
	'mkdir -p .husky && echo "npm test" > .husky/pre-commit && echo x > tools/other.sh && cat .husky/pre-commit && rm -r .husky tools/other.sh' \
	'^npm test$' probew
check_eq "git runs: nothing of it changed or was planted on the host" \
	"$(cd "$WS" && sha256sum tools/fsmon.sh scripts/pre-push; ls -d .gitconfig .husky 2>/dev/null)" "$runs_sum"
# A nested repository's config is read when a write first reaches its tree
# (a workspace of many clones has no top-level .git at all).
cp "$WS/vendor/dep/.git/config" "$T/dep-config.saved"
git config --file "$WS/vendor/dep/.git/config" core.hooksPath .githooks
verdict "git runs: a nested repository's hooks directory too" \
	'mkdir vendor/dep/.githooks 2>&1; ln -s /tmp/h vendor/dep/.githooks 2>&1; mkdir -p vendor/dep/src && echo ok > vendor/dep/src/a && cat vendor/dep/src/a' \
	"$runs_denied.*$runs_denied.*
ok$" probew
# A directory on the way made unsearchable would hide the repository (and
# a git directory by another name) from the actor's walk: refused.
verdict "git runs: nor with a directory on the way made unsearchable" \
	'(cd vendor/dep && chmod 000 .. && mkdir .githooks 2>&1; chmod 755 ..); (cd vendor/wt/.bare && chmod 000 ../.. && echo x >> config 2>&1; chmod 755 ../..)' \
	"$runs_denied.*$runs_denied" probew
check "git runs: no hooks directory was made in it on the host" test ! -e "$WS/vendor/dep/.githooks" -a ! -L "$WS/vendor/dep/.githooks"
check_eq "git runs: ... the .bare's config is unchanged, and the directory searchable again" \
	"$(cd "$WS/vendor" && find wt/.bare wl/.bare -type f -exec sha256sum {} + | sort) $(stat -c %a "$WS/vendor")" "$bare_sum 755"
cp "$T/dep-config.saved" "$WS/vendor/dep/.git/config"
rm -rf "$WS/vendor/dep/src"
cp "$T/git-config.saved" "$WS/.git/config"
rm -rf "$WS/tools" "$WS/scripts" "$WS/.git/hooks/pre-push" "$WS/.husky" "$WS/q"
# What an AI agent's configuration runs is run by the person's agent on the
# host: a Claude Code hook's script, an MCP server's (agentpaths.c).  Read at
# the top of each repository and workspace, as git's config is.
mkdir -p "$WS/agentproj/.claude" "$WS/agentproj/mcp"
git -C "$WS/agentproj" init -q
printf '{"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "\\"$CLAUDE_PROJECT_DIR\\"/fmt.sh"}]}]}}\n' \
	>"$WS/agentproj/.claude/settings.json"
printf '{"mcpServers": {"local": {"command": "node", "args": ["./mcp/server.js"]}}}\n' >"$WS/agentproj/.mcp.json"
printf '#!/bin/sh\n' >"$WS/agentproj/fmt.sh"
printf 'console.log(1)\n' >"$WS/agentproj/mcp/server.js"
chown -R 12345:12345 "$WS/agentproj"
agent_runs_sum=$(cd "$WS/agentproj" && sha256sum fmt.sh mcp/server.js)
verdict "agent runs: a hook's script and an MCP server's cannot be changed, removed or replaced" \
	'cd agentproj && { echo "touch PWNED" >> fmt.sh; rm -f mcp/server.js; ln -s /tmp/x fmt2.sh && mv fmt2.sh fmt.sh; } 2>&1' \
	"$runs_denied.*$runs_denied.*$runs_denied" probew
check_match "agent runs: the denial names the lock and the file that runs it" \
	"$(jf '.denials[0] | "\(.lock): \(.detail) | \(.hint)"')" \
	'^agent-config: refused open fmt.sh: the person.s AI agent or editor runs it \(.claude/settings.json\) \| runs may not change an AI agent.s own configuration .* nor a file it runs'
verdict "agent runs: the rest of the project is written as ever" \
	'cd agentproj && echo x > other.sh && mkdir -p mcp/lib && echo y > mcp/lib/util.js && cat other.sh mcp/lib/util.js && rm -r other.sh mcp/lib fmt2.sh 2>/dev/null; true' \
	'^x
y$' probew
check_eq "agent runs: nothing of it changed on the host" \
	"$(cd "$WS/agentproj" && sha256sum fmt.sh mcp/server.js; ls -d fmt2.sh PWNED 2>/dev/null)" "$agent_runs_sum"
# Zed runs a context server's `command.path`, and finds a bare name in the
# PATH its `env` sets: the directory is kept whole (review s37 fixes M1).
mkdir -p "$WS/agentproj/.zed" "$WS/agentproj/bin"
printf '{"context_servers": {"s": {"command": {"path": "./srv", "env": {"PATH": "${workspaceFolder}/bin:node_modules/.bin"}}}}}\n' \
	>"$WS/agentproj/.zed/settings.json"
chown -R 12345:12345 "$WS/agentproj"
verdict "agent runs: Zed's command.path and a PATH directory it sets cannot be written" \
	'cd agentproj && { echo x > srv; echo x > bin/mytool; mkdir -p node_modules/.bin && echo x > node_modules/.bin/tsc && echo installed; } 2>&1' \
	"$runs_denied.*$runs_denied.*installed" probew
check "agent runs: ... nothing made on the host but in node_modules" test ! -e "$WS/agentproj/srv" -a ! -e "$WS/agentproj/bin/mytool"
rm -rf "$WS/agentproj"
# A seccomp notification names the calling thread: a write through a dirfd
# and a connect from a thread that does not lead its process are answered
# as the main thread's are (Go, Java and threaded Python connect and remove
# trees from any thread).
verdict "a thread's writes through a dirfd and its connects work" 'python3 -c "
import os, socket, threading
out = []
def work():
    d = os.open(\".\", os.O_RDONLY)
    os.close(os.open(\"thr.txt\", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)); out.append(\"open\")
    os.unlink(\"thr.txt\", dir_fd=d); out.append(\"unlink\")
    srv = socket.socket(socket.AF_UNIX); srv.bind(\"/tmp/thr.sock\"); srv.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(\"/tmp/thr.sock\"); out.append(\"connect\")
t = threading.Thread(target=work); t.start(); t.join(); print(\" \".join(out))
" 2>&1' '^open unlink connect$' probew
# The supervisor answers writes to /dev/null, /dev/zero, /dev/full and
# /dev/tty itself (notify.c, answer_device): what the kernel would say.
verdict "devices: /dev/null, /dev/zero and /dev/full as the kernel has them" \
	'echo x >/dev/null && echo null-ok; head -c 4 /dev/zero | od -An -tx1; (echo x >/dev/full) 2>&1; exec 3>>/dev/null && echo append-ok' \
	'^null-ok
 00 00 00 00
.*No space left on device
append-ok$' probew
verdict "devices: /dev/tty is ENXIO (no controlling terminal)" '(exec 3<>/dev/tty) 2>&1; echo "rc=$?"' \
	'No such device or address.*rc=1' probew
# Against a thread that rewrites the path between the supervisor's look and
# the open: never the nested repository's config, and both paths were seen.
attack ".git: a path flipped between /dev/null and a .git file never opens the file" \
	"$PROBES/probe_devrace vendor/dep/.git/config 4000" probew &&
	check_match ".git: a path flipped between /dev/null and a .git file never opens the file" "$(jf .stdout)" \
		'^null [1-9][0-9]* refused [1-9][0-9]* file 0$'
check_eq ".git: the nested repository is unchanged after the race" \
	"$(cd "$WS/vendor/dep" && find .git -type f -exec sha256sum {} + | sort)" "$dep_sum"
rm -rf "$WS/vendor" "$WS/sub"
# A FIFO in the workspace (the person's, or a build run's): analyse may read
# it but never write into it (Landlock's rule; the actor keeps it).
mkfifo "$WS/person.fifo"; chown 12345:12345 "$WS/person.fifo"
verdict "analyse cannot write into a FIFO in the workspace (no channel to a build run)" \
	'timeout 3 sh -c "echo x > person.fifo" 2>&1; echo "rc=$?"' 'Permission denied.*rc=[1-9]'
verdict "analyse cannot write into it through /proc/self/fd either" 'python3 -c "
import os
r = os.open(\"person.fifo\", os.O_RDONLY | os.O_NONBLOCK)
try: os.open(\"/proc/self/fd/%d\" % r, os.O_WRONLY); print(\"opened\")
except OSError as e: print(e.strerror)
"' '^Permission denied$'
rm -f "$WS/person.fifo"
verdict "> /dev/stdout and > /dev/stderr reach the reply (the pipes are the run's)" \
	'echo to-out > /dev/stdout; echo to-err > /dev/stderr; echo via-fd > /proc/self/fd/1' '^to-out
via-fdto-err$' probew

# --- unix sockets: only a run's own (issue 12) ---------------------------------
# A person's dev server listening on a socket of mode 0700 in the workspace:
# the idmapped mount makes a run look like its owner, so on 0.1 a connect
# from analyse reached it.  Each connect is made by the supervisor, which
# hands over only a socket whose listener has the run's own uid.
cat >"$WS/listen.py" <<'PY'
import os, socket, sys, time
path, hits, stop = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.bind(path); os.chmod(path, 0o700); s.listen(8); s.settimeout(0.1)
open(hits, "w").close()
while not os.path.exists(stop):
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.settimeout(1)
    try:
        data = c.recv(100)
    except OSError:
        data = b""
    open(hits, "a").write("hit %r\n" % data)
    c.close()
PY
# The person (uid 12345 owns the workspace above) runs it.
mkdir -p "$T/person"; chown 12345:12345 "$T/person"; chmod 755 "$T"
setpriv --reuid 12345 --regid 12345 --clear-groups /usr/bin/python3 "$WS/listen.py" "$WS/person.sock" "$T/person/hits" "$T/person/stop" &
person_pid=$!
for _ in $(seq 1 50); do [ -e "$T/person/hits" ] && break; sleep 0.1; done
connect_py='import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); s.send(b"touch PWNED"); print("connected")
except OSError as e:
    print("refused", e.strerror)'
verdict "unix socket: analyse cannot connect to the person's socket in the workspace" \
	"python3 -c '$connect_py' person.sock" '^refused Permission denied'
verdict "unix socket: nor through a symlink in its tmp" \
	"ln -s \"\$PWD/person.sock\" /tmp/p.sock && python3 -c '$connect_py' /tmp/p.sock" '^refused Permission denied'
verdict "unix socket: nor, writable, through a hard link or a rename" \
	"ln person.sock linked.sock && python3 -c '$connect_py' linked.sock; mv person.sock moved.sock && python3 -c '$connect_py' moved.sock; mv moved.sock person.sock; rm -f linked.sock" \
	'^refused Permission denied
refused Permission denied$' probew
sleep 0.3
check_eq "unix socket: the person's server saw no connection" "$(cat "$T/person/hits")" ""

# Another run's socket: a build-like run listens in the workspace while an
# analyse run tries it (on 0.1 a channel between runs, and a way to use
# another run's proxy).
( run_cmd "python3 listen.py runA.sock /tmp/runA-hits '$WS/stopA'; cat /tmp/runA-hits" probew >/dev/null
  printf '%s' "$BODY" >"$T/runA.json" ) &
runA=$!
for _ in $(seq 1 100); do [ -S "$WS/runA.sock" ] && break; sleep 0.1; done
verdict "unix socket: analyse cannot connect to another run's socket" \
	"python3 -c '$connect_py' runA.sock" '^refused Permission denied'
touch "$WS/stopA"
wait "$runA"
check_eq "unix socket: the other run's listener saw no connection" "$(jq -r .stdout "$T/runA.json")" ""
rm -f "$WS/stopA" "$WS/runA.sock"

verdict "unix socket: a run's own stream and seqpacket sockets work (path and abstract)" 'python3 -c "
import os, socket, threading
for kind, addr in ((socket.SOCK_STREAM, \"/tmp/own.sock\"), (socket.SOCK_SEQPACKET, \"own2.sock\"), (socket.SOCK_STREAM, \"\0own-abstract\")):
    srv = socket.socket(socket.AF_UNIX, kind); srv.bind(addr); srv.listen(1)
    t = threading.Thread(target=lambda: srv.accept()[0].sendall(b\"pong\")); t.start()
    c = socket.socket(socket.AF_UNIX, kind); c.connect(addr); print(c.recv(10).decode()); t.join()
os.unlink(\"own2.sock\")
"' '^pong
pong
pong$' probew
verdict "unix socket: a blocking client stays blocking, a non-blocking one non-blocking" 'python3 -c "
import socket
srv = socket.socket(socket.AF_UNIX); srv.bind(\"/tmp/b.sock\"); srv.listen(4)
for block in (True, False):
    c = socket.socket(socket.AF_UNIX); c.setblocking(block); c.connect(\"/tmp/b.sock\"); print(c.getblocking())
"' '^True
False$'
verdict "unix socket: datagram sockets cannot be made" 'python3 -c "
import socket
for make in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)):
    try:
        make(); print(\"made\")
    except OSError as e:
        print(e.strerror)
print(len(socket.socketpair()))
"' '^Permission denied
Permission denied
2$'
verdict "unix socket: TCP still reaches nothing but the proxy (any kernel)" 'python3 -c "
import socket
s = socket.socket()
try:
    s.connect((\"127.0.0.1\", 22)); print(\"connected\")
except OSError as e:
    print(e.strerror)
"' '^Permission denied$'
touch "$T/person/stop"; wait "$person_pid" 2>/dev/null; rm -f "$WS/person.sock" "$WS/listen.py"

# --- nothing left --------------------------------------------------------------
sleep 0.3
check_settled "nothing of the runs left but the waiting sandboxes"
check_eq "no sandbox mount left on the host" "$(grep -c "$T/state/root" /proc/mounts)" 0
# Exactly the sandbox's view: the fixed tree, the host's top-level system
# directories, and the first component of each path a profile binds (the
# workspace under /tmp and the probes under this checkout, wherever CI put it).
expected_root=$({
	printf '%s\n' dev etc home proc tmp usr
	for d in bin sbin lib lib64 lib32 libx32 opt; do [ -e "/$d" ] && echo "$d"; done
	for p in "$WS" "$PROBES"; do p=${p#/}; echo "${p%%/*}"; done
} | LC_ALL=C sort -u)
attack "ls / lists the sandbox's view and nothing else" 'ls -1 /' &&
	check_eq "ls / lists the sandbox's view and nothing else" "$(jf .stdout | sed "/^$/d" | LC_ALL=C sort)" "$expected_root"
verdict "listing does not grant reading" 'cat /etc/shadow; ls /etc >/dev/null && echo listed' 'listed.*Permission denied|Permission denied.*listed'
verdict "build: a host off the allowlist gets the proxy's 403 (http)" 'curl -s -o /dev/null -w "%{http_code}" http://evil.example/' '^403$' build
verdict "build: a host off the allowlist gets the proxy's 403 (https)" 'curl -sS https://evil.example/ 2>&1' 'CONNECT tunnel failed, response 403' build
verdict "analyse has no proxy" 'echo "[${HTTPS_PROXY:-}]"' '^\[\]$'
