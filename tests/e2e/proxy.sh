#!/usr/bin/env bash
# The egress proxy of `proxy` profiles (SPEC §8, issue 6) through the real
# daemon: an HTTP origin (python3 http.server) and a TLS origin (openssl
# s_server) on loopback in the host's network namespace, reached from inside
# the sandbox only through the proxy and only when allowlisted; the bypass
# attempts of shared/research/sandbox.md §C rows 32-36; direct connections
# fail; `analyse` has no proxy at all; every decision is in the audit log.
. "$(dirname "$0")/lib.sh"

HPORT=$(free_port)
TPORT=$(free_port)
mkdir -p "$T/www" "$T/tls" "$T/extra"
printf 'hello over http\n' >"$T/www/hello.txt"
printf 'hello over tls\n' >"$T/tls/hello.txt"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-keyout "$T/tls/key.pem" -out "$T/tls/cert.pem" -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost >/dev/null 2>&1

# The test hosts are named in a profile of their own, exactly as an operator
# would name an internal registry: "localhost:PORT" (an exact name, so its
# loopback address is allowed; a wildcard would not be).
cat >"$T/extra/proxytest.json" <<EOF
{
  "name": "proxytest",
  "description": "e2e: the egress proxy to two loopback test origins",
  "workspace": "read-only",
  "network": {"mode": "proxy", "allow": ["localhost:$HPORT", "localhost:$TPORT"]},
  "approval": "never"
}
EOF
E2E_PROFILES="$T/extra/proxytest.json"

python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$HPORT" >/dev/null 2>&1 &
HTTP_PID=$!
(cd "$T/tls" && exec openssl s_server -accept "127.0.0.1:$TPORT" -cert cert.pem -key key.pem \
	-WWW -quiet) >/dev/null 2>&1 </dev/null &
TLS_PID=$!
trap 'kill "$HTTP_PID" "$TLS_PID" 2>/dev/null; wait "$HTTP_PID" "$TLS_PID" 2>/dev/null; e2e_cleanup' EXIT
for _ in $(seq 1 100); do
	curl -s -o /dev/null "http://127.0.0.1:$HPORT/" && curl -sk -o /dev/null "https://127.0.0.1:$TPORT/hello.txt" && break
	sleep 0.05
done

e2e_start
# The workspace is the one host path the sandbox reads: the test CA goes there.
cp "$T/tls/cert.pem" "$WS/origin-ca.pem"

# ---- the environment ----
run_cmd 'printf "%s|%s|%s|%s" "$HTTP_PROXY" "$HTTPS_PROXY" "$http_proxy" "$https_proxy"' proxytest
if ! [[ "$(jf .stdout)" =~ ^http://127\.0\.0\.1:[0-9]+/?\| ]]; then
	not_ok "a proxy profile gets HTTP_PROXY (the proxy is not wired into runs yet?)" "body: $BODY"
	exit 1
fi
ok "a proxy profile gets HTTP_PROXY"
P=$(jf .stdout | cut -d'|' -f1)
check_eq "HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy agree" "$(jf .stdout)" "$P|$P|$P|$P"
check_match "the proxy is on the sandbox's own loopback" "$P" '^http://127\.0\.0\.1:[0-9]+/?$'

# ---- allowed: plain HTTP and HTTPS through CONNECT ----
# --noproxy '' overrides NO_PROXY (which names localhost for the sandbox's
# own loopback): here "localhost" must go through the proxy, which resolves
# it in the host's namespace, where the origins are.
run_cmd "curl -sS --max-time 10 --noproxy '' http://localhost:$HPORT/hello.txt" proxytest
check_eq "plain HTTP to an allowlisted host" "$(jf .stdout)" "hello over http"
run_cmd "curl -sS --max-time 10 --noproxy '' --cacert origin-ca.pem https://localhost:$TPORT/hello.txt" proxytest
check_eq "HTTPS (CONNECT) to an allowlisted host" "$(jf .stdout)" "hello over tls"
run_cmd "curl -sS --max-time 10 --noproxy '' --cacert origin-ca.pem https://LOCALHOST.:$TPORT/hello.txt" proxytest
check_eq "case and a trailing dot are the same host" "$(jf .stdout)" "hello over tls"

# ---- denied: not on the allowlist (row 33) ----
run_cmd "curl -s --max-time 10 --noproxy '' -w ' %{http_code}' http://evil.example/" proxytest
check_eq "a host not on the allowlist: 403 with a one-line reason" "$(jf .stdout)" \
	"sharness proxy: host 'evil.example' port 80 is not on the allowlist of profile 'proxytest'
 403"
run_cmd "curl -s --max-time 10 --noproxy '' -o /dev/null -w '%{http_connect}' https://evil.example/" proxytest
check_eq "CONNECT to a host not on the allowlist: 403" "$(jf .stdout)" 403
run_cmd "curl -s --max-time 10 --noproxy '' -p -x \"\$HTTP_PROXY\" -o /dev/null -w '%{http_connect}' http://127.0.0.1:22/" proxytest
check_eq "CONNECT to 127.0.0.1:22: 403" "$(jf .stdout)" 403
run_cmd "curl -s --max-time 10 --noproxy '' -o /dev/null -w '%{http_code}' http://localhost:$((HPORT == 65535 ? 1 : HPORT + 1))/" proxytest
check_eq "an allowlisted host on another port: 403" "$(jf .stdout)" 403
run_cmd "curl -s --max-time 10 --noproxy '' -o /dev/null -w '%{http_code}' http://169.254.169.254/latest/meta-data/" proxytest
check_eq "cloud metadata: 403" "$(jf .stdout)" 403

# ---- canonicalisation bypasses (row 35), raw on the wire with bash ----
# Each line: the status the proxy answers to one CONNECT request.
RAW='p=${HTTP_PROXY#http://}; p=${p%/}
ask() {
	exec 3<>"/dev/tcp/${p%:*}/${p##*:}" || { echo x; return; }
	printf "%b" "$1" >&3
	IFS=" " read -r _ code _ <&3
	echo "$code"
	exec 3<&-
}'
run_cmd "$RAW
ask 'CONNECT evil.example\\0.localhost:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT evil.example%00.localhost:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT localhost.evil.example:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT [::ffff:127.0.0.1]:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT 2130706433:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT 0x7f000001:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT 127.1:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'CONNECT user@localhost:$HPORT HTTP/1.1\\r\\n\\r\\n'
ask 'GET / HTTP/1.1\\r\\nHost: localhost:$HPORT\\r\\n\\r\\n'
ask 'CONNECT LocalHost.:$HPORT HTTP/1.1\\r\\n\\r\\n'" proxytest
check_eq "NUL, %00, suffix, mapped, numeric, userinfo, origin-form refused; case+dot allowed" \
	"$(jf .stdout | xargs)" "400 400 403 403 403 403 403 400 400 200"

# ---- direct connections fail (row 32) ----
run_cmd "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:$HPORT/hello.txt; echo rc=\$?" proxytest
check_match "direct to the host's loopback server fails" "$(jf .stdout)" 'rc=[1-9]'
check "  ...and never reaches it" bash -c '! grep -q "hello over http" <<<"$0"' "$(jf .stdout)"
run_cmd "curl -sS --max-time 5 --noproxy '*' http://192.0.2.1/; echo rc=\$?" proxytest
check_match "direct to 192.0.2.1 (TEST-NET-1) fails" "$(jf .stdout)" 'rc=[1-9]'
# curl does not print errno; bash does.
run_cmd "echo > /dev/tcp/192.0.2.1/443; echo rc=\$?" proxytest
check_eq "bash /dev/tcp to 192.0.2.1 fails" "$(jf .stdout)" 'rc=1'
check_match "  ...with no route (or refused by Landlock's TCP rule)" "$(jf .stderr)" 'Network is unreachable|Permission denied'
run_cmd "getent hosts example.com; echo rc=\$?" proxytest
check_eq "no DNS inside (row 36)" "$(jf .stdout)" "rc=2"

# ---- analyse: no proxy at all ----
run_cmd 'env | grep -ci proxy' analyse
check_eq "analyse: no proxy variables" "$(jf .stdout)" 0
run_cmd "curl -sS --max-time 5 --noproxy '' -x http://127.0.0.1:3128 http://localhost:$HPORT/hello.txt; echo rc=\$?" analyse
check_match "analyse: no proxy listening" "$(jf .stdout)" 'rc=[1-9]'

# ---- the audit log ----
sleep 0.2
A=$(grep '"event":"proxy"' "$T/audit.log")
check_match "audit: an allow line" "$A" '"decision":"allow","status":200'
check_match "audit: a deny line with its reason" "$A" "\"host\":\"evil.example\",\"port\":80,\"decision\":\"deny\",\"status\":403,\"reason\":\"host 'evil.example' port 80 is not on the allowlist of profile 'proxytest'\""
check_match "audit: lines carry the run id" "$A" '"run_id":"[0-9a-f]{32}"'
check_match "audit: relayed connections end with byte counts" "$(grep '"event":"proxy_end"' "$T/audit.log")" '"bytes_up":[1-9][0-9]*,"bytes_down":[1-9]'
