#!/usr/bin/env bash
# trust.sh - what the daemon trusts about itself and its peers (SPEC §15.2,
# issue 13): a client certificate with a second OU has no role, whatever that
# OU's length; the daemon refuses to start when its own secrets (TLS key, the
# CA key next to tls.ca, the secrets file, the audit log, the state dir) lie
# inside a workspace.
. "$(dirname "$0")/lib.sh"
e2e_start

# --- exactly one OU, for any length of the second ---------------------------
# signed by the test CA: TWO_OU NAME SECOND_OU -> $T/certs/NAME.{pem,key}
two_ou() {
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/certs/$1.key" 2>/dev/null
	openssl req -new -key "$T/certs/$1.key" -subj "/CN=$1/OU=app/OU=$2" -out "$T/certs/$1.csr" 2>/dev/null
	printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >"$T/certs/$1.ext"
	openssl x509 -req -in "$T/certs/$1.csr" -CA "$T/certs/ca.pem" -CAkey "$T/certs/ca.key" -CAcreateserial \
		-days 1 -sha256 -extfile "$T/certs/$1.ext" -out "$T/certs/$1.pem" 2>/dev/null
}
long=$(printf 'x%.0s' $(seq 1 64)) # 64 bytes: the most RFC 5280 allows, one past the old 63-byte buffer
two_ou ou_short admin
two_ou ou_long "$long"
check_eq "the long second OU is in the certificate" \
	"$(openssl x509 -in "$T/certs/ou_long.pem" -noout -subject -nameopt multiline | grep -c "organizationalUnitName *= *$long")" 1
api POST /v0/run '{"cmd":"echo should-not-run"}' ou_short
check_eq "a second OU (short): 403 no_role" "$STATUS/$(jf .error.code)" 403/no_role
api POST /v0/run '{"cmd":"echo should-not-run"}' ou_long
check_eq "a second OU of 64 bytes: 403 no_role, never the first OU's role" "$STATUS/$(jf .error.code)" 403/no_role
check "... and nothing ran" bash -c "! grep -q should-not-run <<<'$BODY'"
api POST /v0/run '{"cmd":"echo one-ou"}' app
check_eq "one OU still works" "$STATUS/$(jf .stdout)" 200/one-ou
e2e_stop
