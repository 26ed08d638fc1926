#!/usr/bin/env bash
# tests/e2e/notify.sh - calls of a run that the supervisor answers or hands to
# the run's file actor (asrun/notify.c).
#
#   - connect() with a unix address longer than a sockaddr_un: EINVAL, as the
#     kernel answers, and the daemon serves on (an ASan build read past the
#     supervisor's copy of the address: make asan-test).
#
# The attacks run only after the suite proved, from inside, that commands
# are sandboxed (as sandbox.sh does).
. "$(dirname "$0")/lib.sh"

PROBES=$ROOT/build/probes
jq --arg p "$PROBES" '.name = "probe" | .description = "notify probes" | .exec_paths = [$p]' \
	"$ROOT/profiles/analyse.json" >"$T/probe.json"
E2E_PROFILES="$T/probe.json"
e2e_start

# --- Proof: are commands really sandboxed? -------------------------------
run_cmd "$PROBES/probe_identity" probe
id=$(jf .stdout)
proof=1
prove() { # DESC GOT EXPECTED-REGEX
	if [[ "$2" =~ $3 ]]; then ok "proof: $1"; else not_ok "proof: $1" "got: $2"; proof=0; fi
}
prove "the probe ran" "$STATUS/$(jf .exit)" '^200/0$'
prove "non-root uid" "$(grep '^uid ' <<<"$id")" "^uid ([1-9][0-9]{6,}) \\1 \\1$"
prove "own pid namespace" "$(grep -E '^(pid1|procs) ' <<<"$id" | tr '\n' ' ')" '^pid1 sharnessd procs [1-4] $'
prove "no capabilities" "$(grep -E '^Cap(Prm|Eff|Bnd|Amb) ' <<<"$id" | awk '{print $2}' | sort -u)" '^0+$'
prove "no_new_privs" "$(grep '^NoNewPrivs ' <<<"$id")" '^NoNewPrivs 1$'
prove "seccomp filter" "$(grep '^Seccomp ' <<<"$id")" '^Seccomp 2$'
prove "only fds 0, 1, 2" "$(grep '^fds ' <<<"$id")" '^fds 0,1,2$'

verdict() { # DESC CMD EXPECTED-STDOUT-REGEX -- runs only when the proof held
	if [ "$proof" != 1 ]; then
		not_ok "$1" "not run: the sandbox was not proven"
		return
	fi
	run_cmd "$2" probe
	check_match "$1" "$(jf .stdout)$(jf .stderr)" "$3"
}

# --- connect() -------------------------------------------------------------
# Python's connect() sends the address's own length; ctypes sends ours.
conn_py='import ctypes, errno, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
for n in map(int, sys.argv[1:]):
    s = socket.socket(socket.AF_UNIX)
    a = ctypes.create_string_buffer(128)
    a[0:2] = socket.AF_UNIX.to_bytes(2, sys.byteorder)
    a[2:15] = b"/tmp/no-such\0"
    r = libc.connect(s.fileno(), a, n)
    print(n, errno.errorcode.get(ctypes.get_errno()) if r else "OK")'
verdict "connect: a unix address longer than sockaddr_un is EINVAL (110 still resolves: ENOENT)" \
	"python3 -c '$conn_py' 110 111 128" '^110 ENOENT
111 EINVAL
128 EINVAL$'
check "the daemon lives on" kill -0 "$DAEMON_PID"
run_cmd 'echo still here' probe
check_eq "and serves" "$STATUS $(jf .stdout)" "200 still here"
check_eq "no supervisor ended abnormally" "$(grep -c 'quarantined\|AddressSanitizer' "$T/daemon.log")" 0
e2e_stop
