#!/bin/bash
# mkcerts.sh - end-to-end test of certs/mkcerts: it runs the real script with the real
# OpenSSL CLI in a throwaway directory and checks what a TLS peer would check: modes,
# subjects, key type, EKU, chain and validity, --client, and refusal to overwrite.
set -u

here=$(cd "$(dirname "$0")" && pwd)
mk="$here/../../certs/mkcerts"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mkcerts-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
d="$tmp/certs"
failed=0

t() { # t NAME COMMAND...: one "ok"/"not ok" line per check
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		echo "ok - mkcerts: $name"
	else
		echo "not ok - mkcerts: $name"
		sed 's/^/# /' "$tmp/out" >&2
		failed=1
	fi
	cp "$tmp/out" "$tmp/last"
}
fails() { ! "$@"; }
mode_is() { [ "$(stat -c %a "$1")" = "$2" ]; }
subject_is() { [ "$(openssl x509 -in "$1" -noout -subject -nameopt compat)" = "subject=$2" ]; }
has_ext() { openssl x509 -in "$1" -noout -text | grep -qF -- "$2"; }
is_p256() { openssl pkey -in "$1" -noout -text | grep -q 'NIST CURVE: P-256'; }
verify() { openssl verify -CAfile "$d/ca.pem" "$@" >/dev/null 2>&1; }
key_matches() { # the certificate's public key is the key file's
	[ "$(openssl x509 -in "$1" -noout -pubkey)" = "$(openssl pkey -in "$2" -pubout)" ]
}
out_has() { grep -qF -- "$1" "$tmp/last"; } # in the previous check's output
not_after() { date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s; }
ended_yesterday() { # notAfter is in the past, but less than two days ago
	local end now
	end=$(not_after "$1") now=$(date +%s)
	[ "$end" -lt "$now" ] && [ "$end" -gt $((now - 2 * 86400)) ]
}

t "help exits 0 and documents --client" bash -c "'$mk' --help | grep -q -- '--client NAME ROLE'"
t "no DIR is a usage error" fails "$mk"
t "full set is made" "$mk" "$d"
for f in ca server app orchestrator person; do
	t "$f.key is mode 0600" mode_is "$d/$f.key" 600
	t "$f.pem is mode 0644" mode_is "$d/$f.pem" 644
	t "$f.key is EC P-256" is_p256 "$d/$f.key"
	t "$f.pem matches $f.key" key_matches "$d/$f.pem" "$d/$f.key"
done
t "CA is a CA" has_ext "$d/ca.pem" "CA:TRUE"
t "CA is self-signed and verifies" verify "$d/ca.pem"
t "server subject is CN=localhost" subject_is "$d/server.pem" "/CN=localhost"
t "server SAN has localhost" has_ext "$d/server.pem" "DNS:localhost"
t "server SAN has 127.0.0.1" has_ext "$d/server.pem" "IP Address:127.0.0.1"
t "server EKU is serverAuth" has_ext "$d/server.pem" "TLS Web Server Authentication"
t "server verifies as sslserver" verify -purpose sslserver "$d/server.pem"
t "server does not verify as sslclient" fails verify -purpose sslclient "$d/server.pem"
for r in app orchestrator person; do
	t "$r subject is /CN=$r/OU=$r" subject_is "$d/$r.pem" "/CN=$r/OU=$r"
	t "$r EKU is clientAuth" has_ext "$d/$r.pem" "TLS Web Client Authentication"
	t "$r is not a CA" has_ext "$d/$r.pem" "CA:FALSE"
	t "$r verifies as sslclient" verify -purpose sslclient "$d/$r.pem"
	t "$r does not verify as sslserver" fails verify -purpose sslserver "$d/$r.pem"
done

cp "$d/ca.pem" "$tmp/ca.before"
t "second run refuses to overwrite the CA" fails "$mk" "$d"
t "refusal names --force" out_has "pass --force"
t "CA unchanged after refusal" cmp -s "$d/ca.pem" "$tmp/ca.before"
t "--force replaces the CA" "$mk" "$d" --force
t "new CA differs" fails cmp -s "$d/ca.pem" "$tmp/ca.before"
t "old client does not verify against the new CA" \
	fails openssl verify -CAfile "$d/ca.pem" "$tmp/ca.before"

t "--client issues one more" "$mk" "$d" --client agent-1 app
t "agent-1 subject" subject_is "$d/agent-1.pem" "/CN=agent-1/OU=app"
t "agent-1.key is mode 0600" mode_is "$d/agent-1.key" 600
t "agent-1.pem is mode 0644" mode_is "$d/agent-1.pem" 644
t "agent-1 verifies as sslclient" verify -purpose sslclient "$d/agent-1.pem"
t "agent-1 matches its key" key_matches "$d/agent-1.pem" "$d/agent-1.key"
t "--client refuses to overwrite" fails "$mk" "$d" --client agent-1 orchestrator
t "--client --force overwrites" "$mk" "$d" --client agent-1 orchestrator --force
t "agent-1 role changed" subject_is "$d/agent-1.pem" "/CN=agent-1/OU=orchestrator"
t "--client with an odd role" "$mk" "$d" --client weird wizard
t "weird subject" subject_is "$d/weird.pem" "/CN=weird/OU=wizard"
t "--client with no role" "$mk" "$d" --client anon -
t "anon has no OU" subject_is "$d/anon.pem" "/CN=anon"
t "--client --expired" "$mk" "$d" --client old app --expired
t "expired cert fails verification" fails verify -purpose sslclient "$d/old.pem"
t "expired cert ended yesterday" ended_yesterday "$d/old.pem"
t "expired cert is otherwise valid (chain, purpose)" \
	verify -purpose sslclient -no_check_time "$d/old.pem"
t "--client --not-yet-valid" "$mk" "$d" --client early app --not-yet-valid
t "not-yet-valid cert fails verification" fails verify -purpose sslclient "$d/early.pem"
t "--eku server makes a wrong-purpose client" "$mk" "$d" --client srvlike app --eku server
t "wrong-purpose client fails sslclient" fails verify -purpose sslclient "$d/srvlike.pem"
t "--days sets the validity" "$mk" "$d" --client short app --days 2
t "2-day cert ends within 3 days" fails openssl x509 -in "$d/short.pem" -noout -checkend $((3 * 86400))
t "2-day cert lasts past 1 day" openssl x509 -in "$d/short.pem" -noout -checkend 86400
t "a path in NAME is refused" fails "$mk" "$d" --client ../evil app
t "a DN separator in ROLE is refused" fails "$mk" "$d" --client evil "app/CN=x"
t "NAME 'ca' is refused" fails "$mk" "$d" --client ca app
t "--client without a CA is refused" fails "$mk" "$tmp/empty" --client x app
t "refusal says to make the CA first" out_has "run 'mkcerts"
t "bad --days is refused" fails "$mk" "$tmp/other" --days 0
t "rogue CA's client does not verify against ours" bash -c \
	"'$mk' '$tmp/rogue' >/dev/null && ! openssl verify -CAfile '$d/ca.pem' '$tmp/rogue/app.pem'"

exit $failed
