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

# --- the daemon's own secrets are never inside a workspace (SPEC §15.2) -----
# Each case: a config that puts one of them inside $WS (through a symlink in
# one case, so the check must resolve it); --check-config and a real start refuse.
mkdir -p "$WS/keys" "$T/outside"
cp "$T/certs/ca.pem" "$T/certs/ca.key" "$T/certs/server.pem" "$T/certs/server.key" "$WS/keys/"
ln -s "$WS/keys" "$T/outside/link"
printf 'a-vault-key-for-the-test-0123456789\n' >"$WS/keys/secrets.txt"
printf 'a-vault-key-for-the-test-0123456789\n' >"$T/secrets.txt"
chmod 600 "$WS/keys/secrets.txt" "$T/secrets.txt"
keepout_case() { # DESC JQ_EDIT EXPECT_REGEX
	jq "$2" "$T/sharnessd.json" >"$T/keepout.json"
	"$SHARNESSD" --check-config --config "$T/keepout.json" >"$T/keepout.out" 2>&1
	local rc=$?
	check_match "$1: --check-config refuses (exit $rc)" "$rc $(cat "$T/keepout.out")" "^1 .*$3"
}
keepout_case "tls.key in the workspace" ".tls.key = \"$WS/keys/server.key\" | .tls.cert = \"$WS/keys/server.pem\"" \
	"tls.key $WS/keys/server.key lies inside the workspace $WS, where a run can read it; move it out"
keepout_case "tls.key through a symlink into the workspace" ".tls.key = \"$T/outside/link/server.key\" | .tls.cert = \"$T/outside/link/server.pem\"" \
	"tls.key $WS/keys/server.key lies inside the workspace $WS"
keepout_case "the CA key next to tls.ca in the workspace" ".tls.ca = \"$WS/keys/ca.pem\"" \
	"the CA key \\(next to tls.ca\\) $WS/keys/ca.key lies inside the workspace $WS.*certs/mkcerts"
keepout_case "secrets_file in the workspace" ".secrets_file = \"$WS/keys/secrets.txt\"" \
	"secrets_file $WS/keys/secrets.txt lies inside the workspace $WS"
keepout_case "audit_log in the workspace (not there yet)" ".audit_log = \"$WS/logs-not-yet/../audit.log\"" \
	"(audit_log .* lies inside the workspace|cannot)"
keepout_case "audit_log in the workspace" ".audit_log = \"$WS/audit.log\"" \
	"audit_log $WS/audit.log lies inside the workspace $WS"
keepout_case "state_dir in the workspace" ".state_dir = \"$WS/.state\"" \
	"state_dir $WS/.state lies inside the workspace $WS.*set state_dir outside"
keepout_case "the workspace is the state_dir's parent's parent" ".state_dir = \"$WS/src/deep/state\"" \
	"state_dir $WS/src/deep/state lies inside"
# A workspace that holds a home directory (root's here): a run could plant
# ~/.bashrc, ~/.gitconfig or ~/.ssh/authorized_keys, run by themselves.
jq '.workspaces = ["/root"]' "$T/sharnessd.json" >"$T/home.json"
"$SHARNESSD" --check-config --config "$T/home.json" >"$T/home.out" 2>&1
check_match "a workspace that is root's home: --check-config refuses (exit $?)" "$(cat "$T/home.out")" \
	"the workspace /root holds /root, the home directory of root: a run could leave what that user's shell, git and ssh run"
jq ".secrets_file = \"$T/secrets.txt\"" "$T/sharnessd.json" >"$T/keepout.json"
"$SHARNESSD" --check-config --config "$T/keepout.json" >"$T/keepout.out" 2>&1
check_eq "everything outside the workspace: --check-config passes" "$?" 0
jq ".state_dir = \"$WS/.state\"" "$T/sharnessd.json" >"$T/keepout.json"
timeout 20 "$SHARNESSD" --config "$T/keepout.json" >"$T/keepout.out" 2>&1
check_match "a real start refuses too (exit $?)" "$(cat "$T/keepout.out")" "state_dir $WS/.state lies inside the workspace"
check "... before making anything there" test ! -e "$WS/.state"

# --- a profile's paths are never where a run may write (a workspace, another
# profile's write_paths): root places them while it builds a sandbox,
# following symlinks a run may have planted there -----------------------------
jq ".profiles_dir = \"$T/pcase\"" "$T/sharnessd.json" >"$T/pcase.json"
with_profile() { # KEY PATH: a profile "inws" with KEY = [PATH] beside the shipped ones (and
	# $T/pcase/*.json made since); --check-config's exit and output in PRC and POUT
	jq --arg k "$1" --arg p "$2" '.name = "inws" | .[$k] = [$p]' "$T/profiles/analyse.json" >"$T/pcase/inws.json"
	"$SHARNESSD" --check-config --config "$T/pcase.json" >"$T/pcase.out" 2>&1
	PRC=$?
	POUT=$(cat "$T/pcase.out")
}
fresh_profiles() { rm -rf "$T/pcase" && cp -r "$T/profiles" "$T/pcase"; }
profile_case() { # DESC KEY PATH EXPECT_REGEX: refused
	fresh_profiles
	with_profile "$2" "$3"
	check_match "$1: --check-config refuses (exit $PRC)" "$PRC $POUT" "^1 .*$4"
}
profile_case "read_paths in the workspace" read_paths "$WS/src" \
	"profile inws: read_paths entry $WS/src lies inside the workspace $WS, where a run could replace it or a directory above it with a symlink"
profile_case "write_paths in the workspace, not there yet" write_paths "$WS/cache/new" \
	"profile inws: write_paths entry $WS/cache/new lies inside the workspace $WS"
profile_case "exec_paths through a symlink into the workspace" exec_paths "$T/outside/link" \
	"profile inws: exec_paths entry $T/outside/link lies inside the workspace $WS"
profile_case "read_paths that is the workspace" read_paths "$WS" "read_paths entry $WS lies inside"
timeout 20 "$SHARNESSD" --config "$T/pcase.json" >"$T/pcase.out" 2>&1
check_match "a real start refuses too (exit $?)" "$(cat "$T/pcase.out")" "profile inws: read_paths entry $WS lies inside"
# Above a workspace: mounted after it, the entry would hide the workspace's
# own mount (idmap, .git read-only, noexec) in the profile's runs.
profile_case "read_paths holding the workspace" read_paths "$T" \
	"profile inws: read_paths entry $T holds the workspace $WS, and its mount would hide the workspace's own"
profile_case "write_paths holding the workspace" write_paths "$T" "profile inws: write_paths entry $T holds the workspace $WS"
ln -s "$T" "$T/outside/up"
profile_case "exec_paths holding the workspace through a symlink" exec_paths "$T/outside/up" \
	"profile inws: exec_paths entry $T/outside/up holds the workspace $WS"
profile_case "a profile path that cannot be resolved (a component is a file)" read_paths "$T/secrets.txt/sub" \
	"profile inws: read_paths entry $T/secrets.txt/sub cannot be resolved \(Not a directory\)"
# Inside another profile's write_paths: its runs could replace the entry by
# a symlink (a write_paths entry itself is a mount's root: shared is fine).
fresh_profiles
jq --arg p "$T/shared" '.name = "writer" | .write_paths = [$p]' "$T/profiles/analyse.json" >"$T/pcase/writer.json"
with_profile read_paths "$T/shared/deps"
check_match "read_paths inside another profile's write_paths: refused (exit $PRC)" "$PRC $POUT" \
	"^1 .*profile inws: read_paths entry $T/shared/deps lies inside profile writer's write_paths entry $T/shared, where its runs could replace it"
with_profile write_paths "$T/shared"
check_eq "... the same write_paths entry in two profiles: accepted" "$PRC" 0
with_profile read_paths "$T/secrets.txt"
check_eq "a profile path outside every workspace and write_paths entry: accepted" "$PRC" 0
# A write_paths entry is guarded only below its top: one in a .git, a git
# directory or an agent's configuration would let runs write what the
# person's git or agent runs on the host.
mkdir -p "$T/outside/agent/.gemini" "$T/outside/bare.git/hooks" "$T/outside/bare.git/objects" "$T/outside/bare.git/refs"
echo 'ref: refs/heads/main' >"$T/outside/bare.git/HEAD"
ln -s agent/.gemini "$T/outside/gem"
profile_case "write_paths that is an agent's configuration (~/.gemini)" write_paths "$T/outside/agent/.gemini" \
	"profile inws: write_paths entry $T/outside/agent/.gemini lies in $T/outside/agent/.gemini, an AI agent's or editor's configuration, so its runs could write what the person's agent or editor runs"
profile_case "... or reached through a symlink" write_paths "$T/outside/gem" \
	"write_paths entry $T/outside/gem lies in $T/outside/agent/.gemini, an AI agent"
profile_case "write_paths in a bare repository (its hooks)" write_paths "$T/outside/bare.git/hooks" \
	"write_paths entry $T/outside/bare.git/hooks lies in $T/outside/bare.git, a git directory, so its runs could write what the person's git runs"
profile_case "write_paths in a .git, any case" write_paths "$T/outside/x/.GIT/hooks" \
	"write_paths entry $T/outside/x/.GIT/hooks lies in $T/outside/x/.GIT, a git directory"
fresh_profiles
with_profile read_paths "$T/outside/agent/.gemini"
check_eq "... a read_paths entry there: accepted (runs read it only)" "$PRC" 0

# --- the development defaults of make run keep certificates and state out of
# the checkout (the default workspace) -----------------------------------------
check_eq "defaults: scripts/devcerts.sh --dir agrees with the daemon" \
	"$(cd "$ROOT" && scripts/devcerts.sh --dir)" "/var/lib/sharness-dev/$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)/certs"
check "make run's curl line has --cacert DIR/ca.pem --cert DIR/app.pem --key DIR/app.key, DIR outside the checkout" \
	bash -c "d=\$(cd '$ROOT' && scripts/devcerts.sh --dir); cd '$ROOT' && SHARNESSD_NO_EXEC=1 timeout 1 bash -c 'sed \"s/^exec build\\/sharnessd\$/exit 0/\" scripts/run-dev.sh | bash' | grep -qF -- \"--cacert \$d/ca.pem --cert \$d/app.pem --key \$d/app.key\" && case \$d in '$ROOT'/*) exit 1;; esac"
