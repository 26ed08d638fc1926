#!/usr/bin/env bash
# tests/e2e/disk.sh - a writable run's disk is bounded (SPEC §15.2, issue 12):
# the supervisor watches the workspace's file system and kills a run that
# consumed more than limits.disk_max_bytes / limits.disk_max_inodes, or whose
# writes took the free space below limits.disk_reserve_bytes, and the reply
# says so ("disk_limited": true and a message naming the limit).  fallocate,
# which reserves gigabytes in one call, is EOPNOTSUPP.  As in sandbox.sh the
# attacks run only once the sandbox is proven from inside.
. "$(dirname "$0")/lib.sh"

jq '.name = "diskw" | .description = "writable workspace, no network" | .workspace = "read-write" |
	.network = {"mode": "none"} | .approval = "never"' "$ROOT/profiles/analyse.json" >"$T/diskw.json"
# A read-only workspace with a writable host path: that path's file system is watched.
mkdir -p "$T/wp" && chmod 1777 "$T/wp" # the run's uid is not the owner: no idmap there
jq --arg wp "$T/wp" '.name = "diskwp" | .description = "read-only workspace, one write path" |
	.write_paths = [$wp]' "$ROOT/profiles/analyse.json" >"$T/diskwp.json"
E2E_PROFILES="$T/diskw.json $T/diskwp.json"
e2e_start '{"limits": {"disk_max_bytes": 134217728, "disk_max_inodes": 3000}}'

# --- Proof: are commands really sandboxed? -------------------------------
run_cmd 'grep -E "^(Uid|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " "; ls /proc | grep -c "^[0-9]"' diskw
proof=1
prove() { # DESC GOT EXPECTED-REGEX
	if [[ "$2" =~ $3 ]]; then ok "proof: $1"; else not_ok "proof: $1" "got: $2"; proof=0; fi
}
id=$(jf .stdout)
prove "the command ran" "$STATUS/$(jf .exit)" '^200/0$'
prove "non-root uid" "$(grep '^Uid' <<<"$id")" '^Uid: ([1-9][0-9]{6,}) \1 \1 \1$'
prove "no_new_privs and seccomp" "$(grep -E '^(NoNewPrivs|Seccomp)' <<<"$id" | tr '\n' ' ')" '^NoNewPrivs: 1 Seccomp: 2 $'
prove "own pid namespace" "$(tail -1 <<<"$id")" '^[1-5]$'
attack() { # DESC CMD [EXTRA] -- runs only when the proof held
	if [ "$proof" != 1 ]; then
		not_ok "$1" "not run: the sandbox was not proven"
		return 1
	fi
	run_cmd "$2" diskw "${3:-{\}}"
	return 0
}
alloc_mib() { local k; k=$(du -sk "$1" 2>/dev/null | cut -f1); echo $((${k:-0} / 1024)); }

# A small write is not disturbed.
attack "a small write runs to its end" 'head -c 1048576 /dev/zero > small; echo done' &&
	check_eq "a small write runs to its end" "$(jf .stdout)/$(jf .disk_limited)" "done/null"
rm -f "$WS/small"

# fallocate -l 6G (issue 12): one call, no bytes written.
attack "fallocate is refused (EOPNOTSUPP)" 'fallocate -l 6G big 2>&1; echo "rc=$?"' &&
	check_match "fallocate is refused (EOPNOTSUPP)" "$(jf .stdout)" 'Operation not supported.*rc=1'
check_eq "fallocate: nothing allocated on the host" "$(alloc_mib "$WS/big")" 0
rm -f "$WS/big"

# Bytes: 1 GiB written as fast as the page cache takes it, limit 128 MiB.
attack "a run writing past disk_max_bytes is stopped" 'dd if=/dev/zero of=big bs=1M count=1024 2>&1; echo "rc=$?"' '{"timeout_s": 60}' && {
	check_eq "disk_max_bytes: disk_limited, killed" "$(jf .disk_limited)/$(jf .signal)/$(jf .timed_out)" "true/KILL/false"
	check_match "disk_max_bytes: the message names the limit and what to do" "$(jf .message)" \
		'consumed [0-9]+ bytes .*limits\.disk_max_bytes \(134217728\).*remove it, or raise the limit'
}
echo "# dd was stopped at $(alloc_mib "$WS/big") MiB (limit 128 MiB)"
check "disk_max_bytes: the file stopped well short of 1 GiB" test "$(alloc_mib "$WS/big")" -lt 900
check "disk_max_bytes: the audit line says disk_limited" grep -q '"disk_limited":true' "$T/audit.log"
rm -f "$WS/big"
if [ "$proof" = 1 ]; then
	run_cmd "dd if=/dev/zero of=$T/wp/big bs=1M count=1024 2>&1; echo rc=\$?" diskwp '{"timeout_s": 60}'
	check_match "a profile's write_paths are bounded too" "$(jf .disk_limited)/$(jf .message)" \
		"^true/The run was stopped: it consumed [0-9]+ bytes of the file system of /.*limits\\.disk_max_bytes"
else
	not_ok "a profile's write_paths are bounded too" "not run: the sandbox was not proven"
fi
check "write_paths: the file stopped well short of 1 GiB" test "$(alloc_mib "$T/wp/big")" -lt 900
rm -f "$T/wp/big"

# Direct I/O and Linux AIO (review s37 lifecycle H1, H2, M1): an O_DIRECT
# write of up to 2 GiB a call, or an io_submit of many, goes on after the
# watch's SIGKILL (a run left 4 GiB against this 128 MiB limit), a reader in
# one held the reply past the timeout, and io_setup takes from the host's one
# fs.aio-nr.  Opens with O_DIRECT, for reading or writing, and F_SETFL with
# it are EINVAL (what a file system without direct I/O answers); io_* ENOSYS.
attack "direct I/O and Linux AIO are refused" 'python3 -c "
import ctypes, errno, fcntl, os
def tried(f):
    try:
        f()
        return \"allowed\"
    except OSError as e:
        return errno.errorcode[e.errno]
print(\"write\", tried(lambda: os.open(\"dio\", os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)))
print(\"read\", tried(lambda: os.open(\"/usr/bin/env\", os.O_RDONLY | os.O_DIRECT)))
fd = os.open(\"/usr/bin/env\", os.O_RDONLY)
print(\"setfl\", tried(lambda: fcntl.fcntl(fd, fcntl.F_SETFL, os.O_DIRECT)))
libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
r = libc.syscall(206, 64, ctypes.byref(ctx))
print(\"io_setup\", errno.errorcode.get(ctypes.get_errno(), \"allowed\") if r < 0 else \"allowed\")
"' &&
	check_eq "direct I/O and Linux AIO are refused" "$(jf .stdout)" \
		$'write EINVAL\nread EINVAL\nsetfl EINVAL\nio_setup ENOSYS'
check "direct I/O: no file was made" test ! -e "$WS/dio"

# glibc's posix_fallocate falls back to writing a byte per block: still bounded.
attack "posix_fallocate's fallback is bounded too" 'python3 -c "
import os
fd = os.open(\"pf\", os.O_CREAT | os.O_WRONLY, 0o644)
os.posix_fallocate(fd, 0, 6 << 30)
print(\"allocated\")
"' '{"timeout_s": 60}' &&
	check_eq "posix_fallocate's fallback is bounded too" "$(jf .disk_limited)/$(jf .stdout)" "true/"
check "posix_fallocate: far less than 6 GiB on the host" test "$(alloc_mib "$WS/pf")" -lt 1024
rm -f "$WS/pf"

# Inodes: 100,000 files with a builtin (issue 12), limit 3000.
attack "a run creating files past disk_max_inodes is stopped" 'mkdir many; for i in $(seq 100000); do : > many/f$i; done; echo "made all"' '{"timeout_s": 60}' && {
	check_eq "disk_max_inodes: disk_limited, killed" "$(jf .disk_limited)/$(jf .signal)/$(jf .stdout)" "true/KILL/"
	check_match "disk_max_inodes: the message names the limit" "$(jf .message)" 'consumed [0-9]+ inodes .*limits\.disk_max_inodes \(3000\)'
}
echo "# the loop was stopped at $(find "$WS/many" -type f | wc -l) files (limit 3000 inodes)"
check "disk_max_inodes: far fewer than 100,000 files on the host" test "$(find "$WS/many" -type f | wc -l)" -lt 50000
rm -rf "$WS/many"
sleep 0.3
check_settled "disk: nothing of the runs left"

# The reserve: a run whose writes take the free space below it is stopped
# (the audit log and the next run need room): a reserve 128 MiB below what
# is free now (room for what else writes there meanwhile), and a run that
# writes 512 MiB.
e2e_stop
avail=$(stat -f -c '%a * %S' "$WS")
e2e_start "{\"limits\": {\"disk_reserve_bytes\": $(($avail - (128 << 20)))}}"
attack "a run whose writes cross disk_reserve_bytes is stopped" 'head -c 536870912 /dev/zero > r; sleep 5; echo survived' &&
	check_match "disk_reserve_bytes: named" "$(jf .disk_limited)/$(jf .message)" \
		'^true/The run was stopped: its writes left only [0-9]+ bytes free .*limits\.disk_reserve_bytes'
rm -f "$WS/r"
# Below the reserve already, a writable run does not start: it would write
# megabytes before the first look, and a loop of runs on and on (review s37
# lifecycle L1).  A read-only profile is not watched.
e2e_stop
e2e_start '{"limits": {"disk_reserve_bytes": 1125899906842624}}'
before=$(sha256sum <"$WS/hello.txt")
attack "reserve: below it already, a writable run is not started" 'head -c 4194304 /dev/zero >> hello.txt; echo ran' &&
	check_eq "reserve: below it already, a writable run is not started" "$STATUS $(jf .error.code)" "507 disk_reserve"
check_match "... saying where and what to do" "$(jf .error.message)" \
	"^The run was not started: only [0-9]+ bytes are free on the workspace's file system, below limits\.disk_reserve_bytes \(1125899906842624\); free space there, or use a profile that does not write there\.$"
check_eq "... and nothing was written" "$(sha256sum <"$WS/hello.txt")" "$before"
run_cmd 'cat hello.txt' analyse
check_eq "reserve: a read-only profile is not watched" "$(jf .stdout)/$(jf .disk_limited)" "hello from the workspace/null"
