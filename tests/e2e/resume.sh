#!/usr/bin/env bash
# resume.sh - TLS session resumption for the client started fresh per
# command (issue 16.1, SPEC §15.5; client/ticket.h, daemon/front/tls.h):
# a second client resumes and the daemon still knows (and checks) its
# certificate; the ticket is 0600 in a 0700 directory of ours and sealed
# with a key from the private key's bytes, and a ticket file that is too
# open, foreign, corrupt, planted, changed, another identity's or a
# symlink, or a directory that is too open, is never used; a ticket is per certificate; an expired
# certificate cannot resume; a daemon restart voids every ticket and the
# client then does a full handshake.
. "$(dirname "$0")/lib.sh"
e2e_start
cd "$WS" || exit 1
TK=$SHARNESS_TICKETS

# The last request's audit line: "STATUS RESUMED CN".
last_audit() { jq -rs 'map(select(.path != null)) | last | "\(.status) \(.tls_resumed) \(.peer_cn)"' "$T/audit.log"; }
ticket() { ls "$TK" 2>/dev/null | grep -v '\.tmp$' | head -1; }

# --- a fresh client resumes ---------------------------------------------------
check "no ticket directory before the first client" test ! -e "$TK"
client_run run -- echo first
check_eq "first client: the run works" "$RC/$OUT" $'0/first\n'
check_eq "first client: a full handshake (audit tls_resumed false)" "$(last_audit)" "200 false app"
check_eq "the ticket directory is 0700 and ours" "$(stat -c '%a %u' "$TK")" "700 $(id -u)"
F=$TK/$(ticket)
check_match "one ticket file, named by a SHA-256" "$(ticket)" '^[0-9a-f]{64}$'
check_eq "the ticket file is 0600 and ours" "$(stat -c '%a %u %F' "$F")" "600 $(id -u) regular file"
check "the ticket is sealed: no TLS session in the clear" \
	bash -c "! openssl sess_id -inform DER -in '$F' -noout 2>/dev/null"
client_run run -- echo second
check_eq "second client: the run works" "$RC/$OUT" $'0/second\n'
check_eq "second client: resumed, and the daemon still knows the certificate" "$(last_audit)" "200 true app"
client_run profiles
check_eq "another command resumes too" "$RC $(last_audit)" "0 200 true app"

# --- a ticket is sealed with a key from the private key's bytes (review s36) -------
# In a workspace a run's files are the person's on disk, mode 0600 as ours:
# a session it got from a server of its own, planted as the ticket, would be
# resumed with no certificate checked.  Here the session is the daemon's own,
# so a client that took it would resume.
req=$'GET /v0/profiles HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
printf '%s' "$req" | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$T/certs/ca.pem" \
	-cert "$T/certs/app.pem" -key "$T/certs/app.key" -sess_out "$T/planted.pem" -quiet >/dev/null 2>&1
openssl sess_id -in "$T/planted.pem" -outform DER -out "$T/planted.der" 2>/dev/null
cp "$F" "$T/sealed"
cp "$T/planted.der" "$F"
client_run run -- echo planted
check_eq "a session planted as the ticket (DER, 0600, ours) is not resumed: the run works" "$RC/$OUT" $'0/planted\n'
check_eq "... with a full handshake" "$(last_audit)" "200 false app"
check "... and the ticket is sealed again" bash -c "! openssl sess_id -inform DER -in '$F' -noout 2>/dev/null"
cp "$F" "$T/sealed"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[40] ^= 1; open(sys.argv[1], "wb").write(b)' "$F"
client_run run -- true
check_eq "a sealed ticket with one bit changed is not used" "$(last_audit)" "200 false app"

# --- a ticket is per certificate --------------------------------------------------
client_run --cert "$T/certs/person.pem" --key "$T/certs/person.key" profiles
check_eq "another certificate never resumes the first one's ticket" "$RC $(last_audit)" "0 200 false person"
client_run --cert "$T/certs/person.pem" --key "$T/certs/person.key" profiles
check_eq "... and gets its own" "$RC $(last_audit) $(ticket | wc -l)" "0 200 true person 1"
check_eq "two tickets now" "$(ls "$TK" | wc -l)" 2
client_run run -- true
check_eq "the first certificate still resumes its own" "$(last_audit)" "200 true app"
G=$(ls "$TK" | grep -v "^${F##*/}\$" | head -1)
cp "$F" "$T/app-ticket"
cp "$TK/$G" "$F"
client_run run -- true
check_eq "the other certificate's ticket moved to this one's name is not used" "$RC $(last_audit)" "0 200 false app"

# --- what is never trusted ----------------------------------------------------
chmod 644 "$F"
client_run run -- echo open
check_eq "a world-readable ticket is not used" "$RC $(last_audit)" "0 200 false app"
check_eq "... and is replaced by a 0600 one" "$(stat -c '%a %u' "$F")" "600 $(id -u)"
chmod 640 "$F"
client_run run -- true
check_eq "a group-readable ticket is not used" "$(last_audit)" "200 false app"
chown nobody "$F"
chmod 600 "$F"
client_run run -- true
check_eq "a ticket owned by another user is not used" "$(last_audit)" "200 false app"
check_eq "... and is replaced by ours" "$(stat -c '%u' "$F")" "$(id -u)"
head -c 600 /dev/urandom >"$F"
chmod 600 "$F"
client_run run -- echo corrupt
check_eq "a corrupt ticket is ignored: the run works" "$RC/$OUT" $'0/corrupt\n'
check_eq "... with a full handshake" "$(last_audit)" "200 false app"
client_run run -- true
check_eq "... and the next client resumes again" "$(last_audit)" "200 true app"
cp "$F" "$T/real-ticket"
rm "$F"
ln -s "$T/real-ticket" "$F"
client_run run -- true
check_eq "a ticket that is a symlink is not followed" "$(last_audit)" "200 false app"
check "... and is replaced by a file" test -f "$F" -a ! -L "$F"
chmod 755 "$TK"
before=$(sha256sum <"$F")
client_run run -- echo opendir
check_eq "a ticket directory others may read is not used: the run works" "$RC/$OUT" $'0/opendir\n'
check_eq "... with a full handshake" "$(last_audit)" "200 false app"
check_eq "... and nothing is written there" "$(sha256sum <"$F")" "$before"
chmod 700 "$TK"
chown nobody "$TK"
client_run run -- true
check_eq "a ticket directory of another user is not used" "$RC $(last_audit)" "0 200 false app"
chown "$(id -u)" "$TK"
SHARNESS_TICKETS=off client_run run -- true
check_eq "SHARNESS_TICKETS=off: a full handshake" "$RC $(last_audit)" "0 200 false app"
cp "$F" "$T/kept"
client_run --key "$T/certs/person.key" run -- true
check_eq "a key that does not match: the same refusal as ever, ticket or not" "$RC" 125
check_match "... saying so" "$ERR" "does not match the certificate"
check_eq "... and the ticket file is untouched" "$(sha256sum <"$F")" "$(sha256sum <"$T/kept")"

# --- the ticket is the certificate: why it is 0600 ------------------------------------
printf '%s' "$req" | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$T/certs/ca.pem" \
	-cert "$T/certs/app.pem" -key "$T/certs/app.key" -sess_out "$T/sess.pem" -quiet >/dev/null 2>&1
printf '%s' "$req" | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$T/certs/ca.pem" \
	-sess_in "$T/sess.pem" >"$T/sc.out" 2>&1
check "openssl s_client with only a session (no certificate, no key): Reused" grep -q '^Reused, TLSv1.3' "$T/sc.out"
check_eq "... and the daemon takes it for the certificate it was issued to" "$(last_audit)" "200 true app"

# --- concurrent fresh clients ----------------------------------------------------------
pids=()
for i in 1 2 3 4 5 6; do "$CLIENT" run -- echo "c$i" >"$T/par.$i" 2>&1 & pids+=($!); done
wait "${pids[@]}" # not a bare wait: the daemon is a child too
check_eq "six clients at once: every reply right" "$(cat "$T"/par.* | sort | tr '\n' ' ')" "c1 c2 c3 c4 c5 c6 "
check_eq "... no temporary file left behind" "$(ls "$TK" | grep -c '\.tmp$')" 0
client_run run -- true
check_eq "... and the ticket they left resumes" "$(last_audit)" "200 true app"

# --- an expired certificate cannot resume ----------------------------------------------
# A certificate of the test CA valid for a few more seconds (openssl ca
# takes exact dates; openssl x509 -req only whole days).
mkdir -p "$T/ca"
: >"$T/ca/index.txt"
echo 1000 >"$T/ca/serial"
cat >"$T/ca/ca.cnf" <<EOF
[ ca ]
default_ca = c
[ c ]
database = $T/ca/index.txt
new_certs_dir = $T/ca
serial = $T/ca/serial
default_md = sha256
policy = p
unique_subject = no
[ p ]
commonName = supplied
organizationalUnitName = optional
EOF
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/ca/short.key" 2>/dev/null
openssl req -new -key "$T/ca/short.key" -subj "/CN=shortlived/OU=app" -out "$T/ca/short.csr" 2>/dev/null
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >"$T/ca/short.ext"
LIFE=6
openssl ca -batch -config "$T/ca/ca.cnf" -cert "$T/certs/ca.pem" -keyfile "$T/certs/ca.key" -in "$T/ca/short.csr" \
	-out "$T/ca/short.pem" -startdate "$(date -u -d '-1 min' +%Y%m%d%H%M%SZ)" \
	-enddate "$(date -u -d "+$LIFE sec" +%Y%m%d%H%M%SZ)" -extfile "$T/ca/short.ext" -notext >/dev/null 2>&1
expires=$(date -u -d "$(openssl x509 -in "$T/ca/short.pem" -noout -enddate | cut -d= -f2)" +%s)
short=(--cert "$T/ca/short.pem" --key "$T/ca/short.key")
client_run "${short[@]}" run -- echo short
check_eq "a short-lived certificate works while valid" "$RC/$OUT $(last_audit)" $'0/short\n 200 false shortlived'
client_run "${short[@]}" run -- true
check_eq "... and resumes while valid" "$RC $(last_audit)" "0 200 true shortlived"
while [ "$(date -u +%s)" -le "$expires" ]; do sleep 0.2; done
client_run "${short[@]}" run -- echo should-not-run
check_eq "once it expired, its resumed session is refused: 125" "$RC" 125
check_match "... saying it has expired" "$ERR" "expired"
check_eq "... the daemon resumed the session and refused the certificate (audit)" "$(last_audit)" "401 true null"
check "... and nothing ran" bash -c "! grep -q should-not-run '$T/client/out'"

# --- a restart voids every ticket; the client still works -----------------------------
cp "$F" "$T/before-restart"
E2E_PORT=$PORT e2e_stop
E2E_PORT=$PORT e2e_start
cp "$T/before-restart" "$F"
printf '%s' "$req" | openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$T/certs/ca.pem" \
	-sess_in "$T/sess.pem" >"$T/sc2.out" 2>&1
check "after a restart, a session from before is not resumed (s_client: New)" grep -q '^New, TLSv1.3' "$T/sc2.out"
check "... and without a certificate nothing is served" bash -c "! grep -q '^HTTP/1.1 200' '$T/sc2.out'"
client_run run -- echo after-restart
check_eq "after a restart the client with an old ticket still works" "$RC/$OUT" $'0/after-restart\n'
check_eq "... through a full handshake" "$(last_audit)" "200 false app"
client_run run -- true
check_eq "... and resumes with the new daemon's ticket" "$(last_audit)" "200 true app"

