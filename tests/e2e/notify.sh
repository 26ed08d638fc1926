#!/usr/bin/env bash
# tests/e2e/notify.sh - calls of a run that the supervisor answers or hands to
# the run's file actor (asrun/notify.c), against a daemon that has a
# controlling terminal, as `make run` from a root shell does: a pty whose
# other end this test holds, as a person's terminal would.
#
#   - /dev/tty, by any flags and any name (O_RDWR|O_DSYNC, a symlink, a reopen
#     of an O_PATH descriptor through /proc/self/fd): ENXIO; nothing the run
#     writes reaches the terminal and nothing typed there reaches the run.
#     The actor that opens for the run has no controlling terminal and
#     /dev/null as fds 0-2.
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

# The terminal: sharnessd starts as the leader of a session whose controlling
# terminal is a new pty (its stdio stays the log); a grandchild holds both
# ends, has a line typed on it and logs whatever is written to it.
cat >"$T/ctty.py" <<'EOF'
import fcntl, os, sys, termios
log, exe = sys.argv[1], sys.argv[2:]
m, s = os.openpty()
attr = termios.tcgetattr(s)
attr[3] &= ~termios.ECHO  # the typed line is not echoed into the log
termios.tcsetattr(s, termios.TCSANOW, attr)
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        with open(log + ".pid", "w") as f:
            f.write(str(os.getpid()))
        os.write(m, b"operator-typed-secret\n")
        with open(log, "ab", buffering=0) as out:
            while True:
                try:
                    d = os.read(m, 4096)
                except OSError:
                    break
                if not d:
                    break
                out.write(d)
        os._exit(0)
    os._exit(0)
os.wait()
os.close(m)
os.setsid()
fcntl.ioctl(s, termios.TIOCSCTTY, 0)
os.close(s)
os.execv(exe[0], exe)
EOF
: >"$T/tty.log"
E2E_WRAP="python3 $T/ctty.py $T/tty.log" e2e_start
trap 'kill "$(cat "$T/tty.log.pid" 2>/dev/null)" 2>/dev/null; e2e_cleanup' EXIT
check_match "the daemon has a controlling terminal (as under make run)" \
	"$(awk '{print $7}' "/proc/$DAEMON_PID/stat")" '^[1-9][0-9]*$'

# --- Proof: are commands really sandboxed? -------------------------------
prove_sandboxed probe

verdict() { # DESC CMD EXPECTED-STDOUT-REGEX -- runs only when the proof held
	if [ "$proof" != 1 ]; then
		not_ok "$1" "not run: the sandbox was not proven"
		return
	fi
	run_cmd "$2" probe
	check_match "$1" "$(jf .stdout)$(jf .stderr)" "$3"
}

# --- /dev/tty ---------------------------------------------------------------
# Each way opens, writes a marker and reads what was typed; the kernel's
# answer is ENXIO (the run has no controlling terminal).
tty_py='import errno, os, select, sys
for way in sys.argv[1:]:
    try:
        if way == "dsync":
            fd = os.open("/dev/tty", os.O_RDWR | os.O_DSYNC)
        elif way == "symlink":
            os.symlink("/dev/tty", "/tmp/t")
            fd = os.open("/tmp/t", os.O_RDWR)
        elif way == "opath":
            p = os.open("/dev/tty", os.O_PATH)
            fd = os.open("/proc/self/fd/%d" % p, os.O_RDWR)
        else:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_CREAT)
    except OSError as e:
        print(way, errno.errorcode[e.errno])
        continue
    os.write(fd, b"RUN-WROTE-TO-THE-TERMINAL\n")
    got = os.read(fd, 100) if select.select([fd], [], [], 2)[0] else b""
    print(way, "OPENED", got)'
verdict "/dev/tty: ENXIO by plain flags, O_RDWR|O_DSYNC, a symlink and an O_PATH reopen" \
	"python3 -c '$tty_py' plain dsync symlink opath" \
	'^plain ENXIO
dsync ENXIO
symlink ENXIO
opath ENXIO$'
sleep 0.2
check_eq "/dev/tty: nothing the run wrote reached the operator's terminal" "$(cat "$T/tty.log")" ""
check "the daemon still has its controlling terminal" \
	test "$(awk '{print $7}' "/proc/$DAEMON_PID/stat")" != 0

# The actor that made a run's write (exec'd: /proc/PID/exe is sharness-actor):
# a session of its own, no terminal, /dev/null on 0-2.
run_cmd 'echo x >/tmp/f && sleep 3' probe >/dev/null &
RUN=$!
actor=
for _ in $(seq 1 60); do
	for p in $(pgrep -x sharness-actor); do
		[[ "$(readlink "/proc/$p/exe")" == */sharness-actor ]] || continue
		[ "$(stat -c %u "/proc/$p")" -gt "$UID_FIRST" ] 2>/dev/null && actor=$p
	done
	[ -n "$actor" ] && break
	sleep 0.05
done
if [ -n "$actor" ]; then
	# stat fields 6 and 7: session and tty_nr (after the "(comm)" field).
	sess_tty=$(sed 's/.*) //' "/proc/$actor/stat" | awk '{print ($4 == '"$actor"') " " $5}')
	check_eq "the run's actor leads a session of its own and has no controlling terminal" "$sess_tty" "1 0"
	check_eq "the run's actor has /dev/null as fds 0-2" \
		"$(for f in 0 1 2; do readlink "/proc/$actor/fd/$f"; done | sort -u)" "/dev/null"
else
	not_ok "the run's actor was found" "$(ps -eo pid,uid,comm | grep sharness)"
fi
wait "$RUN"

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
