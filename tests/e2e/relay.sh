#!/usr/bin/env bash
# relay.sh - the client's relay (issue 16.1, SPEC §15.5; client/relay.h): a
# client whose own request worked starts it; the next clients go through it
# (no TCP connection, no TLS of their own, one execve, no process) and get
# the same replies, identity and audit lines; its socket is 0600 in the
# 0700 ticket directory and a peer of another uid is refused; a client
# never sends its request to a socket that does not state its identity;
# the relay ends when idle, when its socket is removed, and when the
# daemon goes away (clients then connect themselves); without
# SHARNESS_RELAY=on (the default) the client starts no process; =off
# and SHARNESS_TICKETS=off start none.  A relay the person started (by hand
# or as the user unit does, SHARNESS_RELAY_IDLE=0) serves clients that have
# SHARNESS_RELAY unset, and =off ignores it; its refusals say what to change;
# a second relay ends at once, or waits if it never idles.
# A reply record that arrives in halves is waited for, not spun on.
. "$(dirname "$0")/lib.sh"
e2e_start
cd "$WS" || exit 1
# Unset, the client starts no process (SPEC §10); lib.sh sets "off" for the
# other suites.
unset SHARNESS_RELAY
strace -f -qq -e trace=execve,clone,clone3,fork,vfork -o "$T/st" "$CLIENT" run -- true >/dev/null 2>&1
check_eq "SHARNESS_RELAY unset: the run works, one execve, no process, no relay" \
	"$?/$(grep -c execve "$T/st")/$(grep -E 'clone|fork' "$T/st" | grep -vc CLONE_THREAD)/$(pgrep -fc -- "--ca $T/certs/ca.pem relay\$")" "0/1/0/0"
export SHARNESS_RELAY=on
TK=$SHARNESS_TICKETS

relay_pids() { pgrep -f -- "--ca $T/certs/ca.pem relay\$"; }
stop_relays() {
	pkill -TERM -f -- "--ca $T/certs/ca.pem relay\$"
	for _ in $(seq 1 100); do relay_pids >/dev/null || return 0; sleep 0.05; done
	pkill -KILL -f -- "--ca $T/certs/ca.pem relay\$"
}
trap 'stop_relays; e2e_cleanup' EXIT
wait_for() { # SECONDS CMD...: 0 once CMD succeeds
	local s=$1; shift
	for _ in $(seq 1 $((s * 20))); do "$@" && return 0; sleep 0.05; done
	return 1
}
no_relay() { ! relay_pids >/dev/null; }
sock() { ls "$TK"/*.relay 2>/dev/null | head -1; }
has_sock() { test -S "$(sock)"; } # evaluated at each try of wait_for
# A relay started as the person (or the user unit) starts it: never idle,
# the files by flag (as stop_relays finds it).  OUT: its stdout and stderr.
# Run with &: the subshell becomes the relay, so $! is its pid.
hand_relay() {
	SHARNESS_RELAY_IDLE=0 exec "$CLIENT" --url "$SHARNESS_URL" --cert "$SHARNESS_CERT" --key "$SHARNESS_KEY" \
		--ca "$SHARNESS_CA" relay </dev/null >"$1" 2>&1
}
runs() { grep -c '"event":"run_started"' "$T/audit.log"; }
last_audit() { jq -rs 'map(select(.path != null)) | last | "\(.status) \(.peer_cn) \(.peer_role)"' "$T/audit.log"; }

# --- the first client starts it ------------------------------------------------
check "no relay before the first client" no_relay
AGENT_SECRET=do-not-keep client_run run -- echo first
check_eq "first client: the run works (its own connection)" "$RC/$OUT" $'0/first\n'
check "a relay is running for this identity" wait_for 5 relay_pids
check "its socket is there" wait_for 5 has_sock
# OpenSSL is started only where TLS is used (client/tls.h): a client the
# relay carries starts none of it, so it reads no openssl.cnf either.
printf 'openssl_conf = bad\n' >"$T/openssl.cnf"
OPENSSL_CONF=$T/openssl.cnf strace -f -qq -e trace=open,openat -o "$T/st.cnf" "$CLIENT" run -- true >/dev/null 2>&1
check "a client through the relay reads no openssl.cnf" bash -c "! grep -q 'openssl\.cnf' '$T/st.cnf'"
S=$(sock)
P=$(relay_pids | head -1)
check_match "the socket is named by the identity" "$(basename "$S")" '^[0-9a-f]{32}\.relay$'
check_eq "the socket is 0600 and ours, in a 0700 directory of ours" \
	"$(stat -c '%a %u' "$S") $(stat -c '%a %u' "$TK")" "600 $(id -u) 700 $(id -u)"
check_eq "its lock file is 0600" "$(stat -c '%a' "${S%.relay}.lock")" 600
check_eq "the relay runs from /, with /dev/null for stdin, stdout and stderr" \
	"$(readlink /proc/$P/cwd) $(readlink /proc/$P/fd/0) $(readlink /proc/$P/fd/1) $(readlink /proc/$P/fd/2)" \
	"/ /dev/null /dev/null /dev/null"
check_eq "it has no terminal and is out of the caller's session" \
	"$(ps -o tty= -p "$P") $([ "$(ps -o sid= -p "$P")" != "$(ps -o sid= -p $$)" ] && echo other)" "? other"
check_eq "it is this binary, given the files by absolute path" \
	"$(tr '\0' ' ' </proc/$P/cmdline)" "sharness-client --url $SHARNESS_URL --cert $T/certs/app.pem --key $T/certs/app.key --ca $T/certs/ca.pem relay "
check_eq "its environment: only HOME, XDG_RUNTIME_DIR and SHARNESS_* (not the caller's other variables)" \
	"$(tr '\0' '\n' </proc/$P/environ | cut -d= -f1 | grep -vE '^(HOME|XDG_RUNTIME_DIR|SHARNESS_[A-Z_]+)$' | wc -l) $(tr '\0' '\n' </proc/$P/environ | grep -c '^SHARNESS_TICKETS=')" "0 1"
check_eq "one relay only" "$(relay_pids | wc -l)" 1

# --- the next clients go through it ---------------------------------------------
n0=$(runs)
strace -f -qq -e trace=execve,execveat,clone,clone3,fork,vfork,connect -o "$T/st" "$CLIENT" run -- 'echo through; echo err >&2; exit 3' >"$T/o" 2>"$T/e"
RC=$?
check_eq "through the relay: stdout, stderr and the exit code" "$RC/$(cat "$T/o")/$(cat "$T/e")" "3/through/err"
check "the client connected to the relay's socket" grep -q "connect(.*sun_path=\"$S\"" "$T/st"
check "... and to no TCP address (no TLS of its own)" bash -c "! grep -q 'connect(.*AF_INET' '$T/st'"
check_eq "... with one execve (its own) and no new process (threads only)" \
	"$(grep -c execve "$T/st") $(grep -E 'clone|fork' "$T/st" | grep -vc CLONE_THREAD)" "1 0"
check_eq "one run for one command" "$(($(runs) - n0))" 1
check_eq "the daemon knows the client's certificate (audit)" "$(last_audit)" "200 app app"
check_eq "still one relay" "$(relay_pids | wc -l)" 1
head -c 3000000 /dev/urandom | base64 -w 100 >"$WS/big.txt"
client_run run -- cat big.txt
check_eq "3 MB of output through the relay, byte for byte" "$RC $(printf '%s' "$OUT" | sha256sum)" "0 $(sha256sum <"$WS/big.txt")"
printf 'from stdin\n' >"$T/in"
"$CLIENT" run --stdin -- 'tr a-z A-Z' <"$T/in" >"$T/o" 2>&1
check_eq "stdin through the relay" "$?/$(cat "$T/o")" "0/FROM STDIN"
client_run run --profile nosuch -- true
check_eq "the daemon's refusal through the relay, as without it" "$RC" 125
check_match "... saying why" "$ERR" "no profile named 'nosuch'"
client_run profiles
check_eq "other commands go through it too" "$RC $(last_audit)" "0 200 app app"
pids=()
for i in $(seq 1 8); do "$CLIENT" run -- "echo c$i" >"$T/par.$i" 2>&1 & pids+=($!); done
wait "${pids[@]}" # not a bare wait: the daemon is a child of this shell too
bad=0
for i in $(seq 1 8); do [ "$(cat "$T/par.$i")" = "c$i" ] || bad=$((bad + 1)); done
check_eq "8 clients at once through one relay, each its own reply" "$bad" 0
check_eq "... still one relay" "$(relay_pids | wc -l)" 1

# A connection whose reply was whole serves the next client (replyend.h):
# five clients in a row, one connection to the daemon all along.
conns() { ss -Htn state established "( dport = :$PORT )" | awk '{print $3}' | sort | paste -sd,; }
# And by the threads that served the ones before: a worker waits for the next client.
tids() { ls "/proc/$(relay_pids | head -1)/task" | sort -n | paste -sd,; }
tids_before=$(tids)
seen=""
for i in 1 2 3 4 5; do "$CLIENT" run -- true; sleep 0.05; seen="$seen $(conns)"; done
tids_after=$(tids)
check_eq "5 clients in a row served by the relay's waiting workers: no new thread, and one still waits" \
	"$tids_after $(tr ',' '\n' <<<"$tids_after" | wc -l | awk '{print ($1 > 2) ? "waiting" : "none"}')" "$tids_before waiting"
check_eq "5 clients in a row through one kept-alive connection (the relay's local port each time)" \
	"$(tr ' ' '\n' <<<"$seen" | grep -v '^$' | sort -u | wc -l) $(tr ' ' '\n' <<<"$seen" | grep -c ,)" "1 0"
check_eq "... and each got its own run (5 audit lines, 5 run ids)" \
	"$(jq -rs '[.[] | select(.path == "/v0/run")] | .[-5:] | map(.run_id) | unique | length' "$T/audit.log")" 5
# Past RELAY_SPARE_MS unused it is replaced; the new one resumes the session.
sleep 3.5
"$CLIENT" run -- true
check "a new connection after 3 s unused (another local port)" test "$(conns)" != "$(tr ' ' '\n' <<<"$seen" | tail -1)"
check_eq "the relay's new connection resumes the TLS session (audit)" \
	"$(jq -rs '[.[] | select(.path == "/v0/run")] | last | .tls_resumed' "$T/audit.log")" "true"

# --- whom it serves, and whom a client trusts ------------------------------------
chmod 711 "$TK"
chmod 666 "$S"
got=$(setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
print(repr(s.recv(100)))' "$S" 2>&1)
check_eq "a peer of another uid gets nothing (SO_PEERCRED), even where it can reach the socket" "$got" "b''"
chmod 700 "$TK"
chmod 600 "$S"
stop_relays
check "SIGTERM ends the relay (its workers waiting for clients too)" no_relay
check "... and it removes its socket" test ! -e "$S"
# A socket that does not state this identity after "+" gets no request.
python3 -c '
import socket, sys, os
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.sendall(b"+sharness-relay v1 somebody else\n"); c.settimeout(3)
try: got = len(c.recv(65536))
except OSError: got = 0
open(sys.argv[2], "w").write(str(got))' "$S" "$T/fake" &
FAKE=$!
wait_for 5 test -S "$S"
n0=$(runs)
client_run run -- echo past the fake
wait "$FAKE"
check_eq "a socket that states another identity: the client connects itself" "$RC/$OUT" $'0/past the fake\n'
check_eq "... and sent it nothing" "$(cat "$T/fake")" 0
check_eq "... one run" "$(($(runs) - n0))" 1
rm -f "$S"

# A stopped relay: clients give it up (10 s for "+") and connect themselves.
client_run run -- true
wait_for 5 relay_pids
P=$(relay_pids | head -1)
kill -STOP "$P"
n0=$(runs)
start=$(date +%s)
client_run run -- echo past a stopped relay
check_eq "a stopped relay: the client connects itself after its 10 s" "$RC/$OUT" $'0/past a stopped relay\n'
# At least the 10 s it waits for "+"; the upper bound only catches a hang
# (a loaded CI machine under ASan may take seconds more).
check_eq "... once, after its 10 s and without hanging" "$(($(runs) - n0)) $(( $(date +%s) - start >= 10 && $(date +%s) - start <= 40 ))" "1 1"
kill -CONT "$P"
stop_relays

# --- when it ends ----------------------------------------------------------------
client_run run -- true
wait_for 5 has_sock
S=$(sock)
rm -f "$S"
check "a relay whose socket was removed ends" wait_for 5 no_relay
client_run run -- true
check "the next client starts another" wait_for 5 relay_pids
wait_for 5 has_sock
client_run run -- true
e2e_stop
check "a relay whose daemon is gone ends" wait_for 10 no_relay
E2E_PORT=$PORT e2e_start
export SHARNESS_RELAY=on
client_run run -- echo after restart
check_eq "after a restart the next client works (its own connection)" "$RC/$OUT" $'0/after restart\n'
check "... and starts a relay again" wait_for 5 relay_pids
stop_relays
SHARNESS_RELAY_IDLE=1 client_run run -- true
check "SHARNESS_RELAY_IDLE: a relay starts" wait_for 5 relay_pids
check "... and ends after its idle time" wait_for 10 no_relay
check "... removing its socket" test -z "$(sock)"

# --- off ---------------------------------------------------------------------------
SHARNESS_RELAY=off strace -f -qq -e trace=execve -o "$T/st" "$CLIENT" run -- true >/dev/null 2>&1
check_eq "SHARNESS_RELAY=off: the run works and no relay starts (one execve, no socket)" \
	"$?/$(grep -c execve "$T/st")/$(relay_pids | wc -l)/$(ls "$TK" | grep -c relay)" "0/1/0/0"
SHARNESS_TICKETS=off strace -f -qq -e trace=execve -o "$T/st" "$CLIENT" run -- true >/dev/null 2>&1
check_eq "SHARNESS_TICKETS=off: no relay either, not even one started to give up (one execve)" \
	"$?/$(grep -c execve "$T/st")/$(relay_pids | wc -l)" "0/1/0"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=stranger -days 1 \
	-keyout "$T/stranger.key" -out "$T/stranger.pem" 2>/dev/null
client_run --cert "$T/stranger.pem" --key "$T/stranger.key" run -- true
sleep 0.5
check_eq "a client the daemon refused starts no relay" "$RC $(pgrep -fc -- "--key $T/stranger.key")" "125 0"
client_run doctor
check_eq "doctor starts none (its request is a full handshake)" "$(relay_pids | wc -l)" 0

# --- a relay the person started (systemd/sharness-relay.service's way) ---------
# Unset, SHARNESS_RELAY still starts nothing, but a client uses a relay that
# runs: the person started it, the client forked nothing (SPEC §10).
export -n SHARNESS_RELAY
unset SHARNESS_RELAY
hand_relay "$T/relay.out" &
RP=$!
check "sharness-client relay started by hand, SHARNESS_RELAY unset: it serves" wait_for 5 has_sock
S=$(sock)
n0=$(runs)
strace -f -qq -e trace=execve,execveat,clone,clone3,fork,vfork,connect -o "$T/st" "$CLIENT" run -- echo by hand >"$T/o" 2>&1
check_eq "a client with SHARNESS_RELAY unset goes through it: the reply, one run" "$?/$(cat "$T/o")/$(($(runs) - n0))" "0/by hand/1"
check "... connecting to its socket and to no TCP address" \
	bash -c "grep -q 'connect(.*sun_path=\"$S\"' '$T/st' && ! grep -q 'connect(.*AF_INET' '$T/st'"
check_eq "... with one execve and no new process" \
	"$(grep -c execve "$T/st") $(grep -E 'clone|fork' "$T/st" | grep -vc CLONE_THREAD)" "1 0"
# A network namespace of its own leaves the client no way to the daemon but
# the relay's socket (a path, not an address).
unshare -n "$CLIENT" run -- echo no network >"$T/o" 2>&1
check_eq "a client without a network of its own still gets its run, through the relay" "$?/$(cat "$T/o")" "0/no network"
SHARNESS_RELAY=off unshare -n "$CLIENT" run -- echo no network >"$T/o" 2>&1
check_eq "SHARNESS_RELAY=off: the client ignores the relay (without a network it cannot reach the daemon)" \
	"$?/$(grep -c 'cannot reach sharnessd' "$T/o")" "125/1"
# Two requests at once from a process of the person's, which leaves after the
# first reply (review s36): the second reply stayed on the connection the
# relay kept, and reached the next client as its own.
python3 "$ROOT/tests/e2e/relay_pipeline.py" "$S" '{"cmd":"sleep 1; echo PLANTED; exit 7"}' >"$T/o" 2>&1
SHARNESS_STREAM=0 "$CLIENT" run -- echo mine >"$T/o2" 2>&1
rc=$?
check_eq "two requests sent at once through the relay: the next client gets its own reply" \
	"$(cat "$T/o")/$rc/$(cat "$T/o2")" "first reply whole/0/mine"
sleep 3
check_eq "SHARNESS_RELAY_IDLE=0: still serving after 3 s without clients" "$(relay_pids | wc -l)/$(sock)" "1/$S"
"$CLIENT" relay </dev/null >"$T/o" 2>&1
check_eq "a second relay for the same identity ends at once, status 0" "$?/$(cat "$T/o")" "0/"
# One that never idles (the user unit's) waits for the lock instead, and
# serves once the first ends: a unit's relay that exited would stay dead.
hand_relay "$T/relay2.out" &
RP2=$!
waiting="sharness-client relay: another relay serves this identity; this one takes over when it ends"
check "... one that never idles waits, and says so" wait_for 5 grep -qx "$waiting" "$T/relay2.out"
inode=$(stat -c %i "$S")
sleep 1.5
check_eq "... still waiting 1.5 s later: running, the socket still the first's, said once" \
	"$(kill -0 "$RP2" && echo running)/$(stat -c %i "$(sock)")/$(cat "$T/relay2.out")" "running/$inode/$waiting"
kill -TERM "$RP"
wait "$RP"
check_eq "SIGTERM ends the first: status 0, nothing on stderr" "$?/$(cat "$T/relay.out")" "0/"
check "... its socket removed, the waiting one binds it again" wait_for 5 has_sock
strace -f -qq -e trace=connect -o "$T/st" "$CLIENT" run -- echo taken over >"$T/o" 2>&1
check_eq "... and serves: a client's run through its socket" \
	"$?/$(cat "$T/o")/$(grep -c "connect(.*sun_path=\"$S\"" "$T/st")/$(grep -c 'connect(.*AF_INET' "$T/st")" "0/taken over/1/0"
stop_relays
check "SIGTERM ends it and removes its socket" bash -c "! pgrep -f -- '--ca $T/certs/ca.pem relay\$' >/dev/null && test ! -e '$S'"
wait "$RP2"
check_eq "... status 0, nothing more on stderr" "$?/$(cat "$T/relay2.out")" "0/$waiting"

# SIGINT and SIGHUP end it as SIGTERM does (a terminal closed, ^C).
for sig in INT HUP; do
	SHARNESS_RELAY_IDLE=0 "$CLIENT" relay </dev/null >"$T/relay.out" 2>&1 &
	RP=$!
	wait_for 5 has_sock
	S=$(sock)
	kill -"$sig" "$RP"
	wait "$RP"
	check_eq "SIG$sig ends it: status 0, nothing on stderr, its socket removed" "$?/$(cat "$T/relay.out")/$(test -e "$S" && echo left)" "0//"
done

# The ticket directory removed and made again while a relay waits: the lock
# it then gets is the old file's, and it must not serve on that (it would
# remove the socket of a relay that took the new lock); it waits for the
# new one's holder instead.
hand_relay "$T/ra.out" &
RA=$!
wait_for 5 has_sock
hand_relay "$T/rb.out" &
RB=$!
wait_for 5 grep -q "takes over" "$T/rb.out"
rm -rf "$TK" && mkdir -m 0700 "$TK"
hand_relay "$T/rc.out" &
RC_PID=$!
wait_for 5 has_sock
check "the first relay, its socket gone with the directory, ends" wait_for 5 bash -c "! kill -0 $RA 2>/dev/null"
sleep 2
check_eq "... the waiting one still waits (the old lock file is not the new directory's), the new one serves" \
	"$(kill -0 "$RB" && echo waiting)/$(kill -0 "$RC_PID" && echo serving)/$(ls "$TK" | grep -c '\.relay$')" "waiting/serving/1"
kill "$RC_PID"
wait "$RC_PID"
check "... and once the new one ends, the waiting one serves" wait_for 5 has_sock
kill "$RB"
wait "$RB" "$RA"

# A renewed certificate (here: the same bytes, a new modification time) is
# another identity: the relay ends with status 1, for the unit to start one
# for the new files.
SHARNESS_RELAY_IDLE=0 "$CLIENT" relay </dev/null >"$T/relay.out" 2>&1 &
RP=$!
wait_for 5 has_sock
touch "$SHARNESS_CERT"
check "a relay whose certificate file changed ends" wait_for 5 bash -c "! kill -0 $RP 2>/dev/null"
wait "$RP"
check_eq "... status 1, saying why, its socket removed" "$?/$(cat "$T/relay.out")/$(sock)" \
	"1/sharness-client relay: a certificate, key or CA file changed: a relay for the new files is needed/"

# Its refusals say what to change (read in the journal under systemd):
# status 2 (the unit does not restart it) for settings that can never work,
# 1 for a file that may yet appear.
SHARNESS_RELAY=off "$CLIENT" relay >"$T/o" 2>&1
check_eq "relay with SHARNESS_RELAY=off: status 2, says how to turn it on" "$?/$(cat "$T/o")" \
	"2/sharness-client relay: SHARNESS_RELAY=off turns the relay off (unset it, or set it to on)"
SHARNESS_KEY=$T/none.key "$CLIENT" relay >"$T/o" 2>&1
check_eq "relay without its key: status 1, names the file and the setting" "$?/$(cat "$T/o")" \
	"1/sharness-client relay: cannot read the client key $T/none.key: No such file or directory (set --key or SHARNESS_KEY)"
SHARNESS_TICKETS=off "$CLIENT" relay >"$T/o" 2>&1
check_eq "relay with SHARNESS_TICKETS=off: status 2, says why" "$?/$(cat "$T/o")" \
	"2/sharness-client relay: SHARNESS_TICKETS=off, and its socket is kept in the ticket directory"
SHARNESS_URL="$SHARNESS_URL/$(printf 'p%.0s' $(seq 900))" "$CLIENT" relay >"$T/o" 2>&1
check_eq "relay for a URL too long to name one: status 2, says what to shorten" "$?/$(cat "$T/o")" \
	"2/sharness-client relay: the URL is too long to name a relay (about 800 bytes at most): use a shorter path in it"
mkdir -m 0755 "$T/open-tickets"
SHARNESS_TICKETS=$T/open-tickets "$CLIENT" relay >"$T/o" 2>&1
check_eq "relay with a ticket directory others may read: status 2, says what it needs" "$?/$(cat "$T/o")" \
	"2/sharness-client relay: no usable ticket directory: Operation not permitted (SHARNESS_TICKETS: a directory of ours, mode 0700, whose path fits a socket address)"
check_eq "none of them left a relay or a socket" "$(relay_pids | wc -l)/$(ls "$TK" | grep -c '\.relay$')" "0/0"

# A reply's TLS record that arrives in two halves (a stand-in daemon sends
# the first half, waits 3 s, then the rest): the relay waits for the rest in
# poll; OpenSSL's "has pending" (true for half a record it cannot decrypt
# yet) once made it spin on a CPU for as long as the daemon took.
exec 7< <(exec python3 "$ROOT/tests/e2e/relay_halfrecord.py" "$T/certs" 3)
HALF_PID=$!
read -r HALF_PORT <&7
check_match "the stand-in daemon listens" "$HALF_PORT" '^[0-9]+$'
HALF_URL=https://127.0.0.1:$HALF_PORT
SHARNESS_RELAY_IDLE=0 "$CLIENT" --url "$HALF_URL" relay </dev/null >"$T/relay.out" 2>&1 &
RP=$!
wait_for 5 has_sock
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
before=$(cpu_ticks "$RP")
started=$(date +%s%N)
SHARNESS_URL=$HALF_URL timeout 20 "$CLIENT" run -- true >"$T/o" 2>&1
waited=$((($(date +%s%N) - started) / 1000000))
used=$(($(cpu_ticks "$RP") - before))
check "the stand-in daemon's reply took its 3 s through the relay (${waited} ms)" test "$waited" -ge 2900
check "... and the relay used under 0.3 s of CPU meanwhile (${used} ticks of $(getconf CLK_TCK)/s)" \
	test "$((used * 10))" -lt "$((3 * $(getconf CLK_TCK)))"
kill "$RP" "$HALF_PID" 2>/dev/null
wait "$RP" 2>/dev/null
exec 7<&-

# A certificate named by a symlink (as certbot's live/ names them): the
# relay a client starts watches that name, as clients do, so repointing it
# (a renewal) ends it; given the resolved path, it watched the old file.
mkdir -p "$T/live"
cp "$T/certs/app.pem" "$T/live/app-1.pem"
ln -s app-1.pem "$T/live/app.pem"
(cd "$T/live" && SHARNESS_RELAY=on SHARNESS_CERT=app.pem "$CLIENT" run --cwd "$WS" -- echo linked) >"$T/o" 2>&1
check_eq "a client whose certificate is a relative symlink, SHARNESS_RELAY=on: its run" "$?/$(cat "$T/o")" "0/linked"
check "... started a relay, given the symlink's own name made absolute" \
	wait_for 5 pgrep -f -- "--cert $T/live/app.pem --key"
LP=$(pgrep -f -- "--cert $T/live/app.pem --key")
cp "$T/certs/app.pem" "$T/live/app-2.pem"
ln -sfn app-2.pem "$T/live/app.pem"
check "repointing the symlink (a renewal) ends that relay" wait_for 5 bash -c "test -n '$LP' && ! kill -0 '$LP' 2>/dev/null"

# --- a daemon that cuts idle connections sooner (limits.idle_timeout_s 2) -----
# Each reply says when (Keep-Alive); the relay then keeps no connection
# ready, where it kept one 3 s and the daemon cut it at 2 s: a client handed
# it in that moment got a cut connection (exit 125).  Its clients make
# their connection through it instead.
e2e_stop
e2e_start '{"limits": {"idle_timeout_s": 2}}'
unset SHARNESS_RELAY
curl -s -o /dev/null -D "$T/hdr" --cacert "$SHARNESS_CA" --cert "$SHARNESS_CERT" --key "$SHARNESS_KEY" "$SHARNESS_URL/v0/policy"
check_eq "each reply says the daemon's idle timeout: Keep-Alive: timeout=2" \
	"$(grep -i '^keep-alive:' "$T/hdr" | tr -d '\r')" "Keep-Alive: timeout=2"
hand_relay "$T/relay.out" &
RP=$!
wait_for 5 has_sock
relay_conns() { ss -tnpH state established "( dport = :$PORT )" | grep -c "pid=$RP,"; }
"$CLIENT" run -- echo first >"$T/o" 2>&1
check_eq "a client through the relay: its run" "$?/$(cat "$T/o")" "0/first"
sleep 0.5
check_eq "... after whose reply (timeout=2) the relay keeps no connection to the daemon" "$(relay_conns)" 0
fails=0
for i in 1 2 3 4 5 6; do
	"$CLIENT" run -- echo "$i" >"$T/o" 2>&1 && [ "$(cat "$T/o")" = "$i" ] || fails=$((fails + 1))
	sleep 0.7
done
check_eq "six clients 0.7 s apart all get their run, still none kept between them" "$fails/$(relay_conns)" "0/0"
check_eq "... through the relay, which still runs" "$(kill -0 "$RP" && echo running)/$(sock | wc -l)" "running/1"
kill "$RP"
wait "$RP"
check_eq "... and ends on SIGTERM with nothing on stderr" "$?/$(cat "$T/relay.out")" "0/"
