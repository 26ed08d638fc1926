#!/usr/bin/env bash
# sharnessd --check-config on good and bad configurations: the exit status and
# the exact one-sentence error line an operator sees (SPEC §11, issue 7).
# No daemon is started: --check-config needs neither root nor a free port.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARNESSD=${SHARNESSD:-$ROOT/build/sharnessd}
T=$(mktemp -d /tmp/sharness-checkcfg.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/e2e/lib_checks.sh"

# check_bad DESC FILE EXPECTED_LINE: exit status 1, nothing on stdout, exactly that line on stderr.
check_bad() {
	local out err rc
	out=$(cd "$T" && "$SHARNESSD" --check-config --config "$2" 2>"$T/err")
	rc=$?
	err=$(cat "$T/err")
	check_eq "$1: exit status 1" "$rc" 1
	check_eq "$1: the error line" "$err" "$3"
	check_eq "$1: nothing on stdout" "$out" ""
}
# write NAME JQ_FILTER: $T/NAME.json is the good config changed by the filter.
write() { jq "$2" "$T/good.json" >"$T/$1.json"; }

mkdir -p "$T/profiles" "$T/ws" "$T/badprof"
cp "$ROOT"/profiles/*.json "$T/profiles/"
cp "$ROOT"/profiles/*.json "$T/badprof/"
jq '. + {"netwrk": {"mode": "none"}}' "$ROOT/profiles/analyse.json" >"$T/badprof/analyse.json"
# Relative paths (certs, profiles, state) resolve against the file's
# directory; the certificates need not exist for --check-config.
jq -n --arg ws "$T/ws" '{
	listen: "127.0.0.1:7443",
	tls: {ca: "certs/ca.pem", cert: "certs/server.pem", key: "certs/server.key"},
	profiles_dir: "profiles",
	workspaces: [$ws],
	uid_range: {first: 1900000000, count: 4096},
	max_runs: 8,
	secrets_file: null,
	audit_log: "-",
	state_dir: "state"
}' >"$T/good.json"

# ---- good -------------------------------------------------------------------
out=$(cd / && "$SHARNESSD" --check-config --config "$T/good.json" 2>"$T/err")
rc=$?
check_eq "good config: exit status 0" "$rc" 0
check_eq "good config: first line" "$(echo "$out" | head -1)" "configuration OK: $T/good.json"
check_eq "good config: one hash line per profile" \
	"$(echo "$out" | grep -cE '^profile [a-z][a-z0-9_-]* +sha256:[0-9a-f]{64}$')" "$(ls "$ROOT"/profiles/*.json | wc -l)"
check_eq "good config: nothing on stderr" "$(cat "$T/err")" ""
# The relative profiles_dir resolved against the file, not the cwd (/ here):
# the analyse hash is the same as from the file's own directory.
h1=$(echo "$out" | awk '$2 == "analyse" { print $3 }')
h2=$(cd "$T" && "$SHARNESSD" --check-config --config good.json | awk '$2 == "analyse" { print $3 }')
check_eq "good config: relative paths resolve against the file's directory" "$h1" "$h2"

# The installed default configuration, with its paths taken as they are in the repo.
mkdir -p "$T/etc/profiles"
cp "$ROOT"/profiles/*.json "$T/etc/profiles/"
jq --arg ws "$T/ws" '.workspaces = [$ws]' "$ROOT/etc/sharnessd.json" >"$T/etc/sharnessd.json"
out=$("$SHARNESSD" --check-config --config "$T/etc/sharnessd.json" 2>&1)
check_eq "etc/sharnessd.json (workspace changed) passes" "$(echo "$out" | head -1)" \
	"configuration OK: $T/etc/sharnessd.json"

# ---- bad --------------------------------------------------------------------
write unknown '. + {"listen_adress": "127.0.0.1:7443"}'
check_bad "unknown key" unknown.json "sharnessd: unknown.json: key 'listen_adress' is unknown"

write unknown_nested '.tls.keyfile = "k.pem"'
check_bad "unknown nested key" unknown_nested.json "sharnessd: unknown_nested.json: key 'tls.keyfile' is unknown"

write nonloop '.listen = "0.0.0.0:7443"'
check_bad "non-loopback listen" nonloop.json \
	"sharnessd: nonloop.json: key 'listen' is 0.0.0.0:7443, which is not a loopback address; set \"listen_non_loopback\": true to allow it"

write badlisten '.listen = "localhost"'
check_bad "listen without a port" badlisten.json \
	"sharnessd: badlisten.json: key 'listen' must be \"HOST:PORT\" with a numeric address, such as \"127.0.0.1:7443\" or \"[::1]:7443\""

write uid0 '.uid_range.first = 0'
check_bad "uid range starting at root" uid0.json \
	"sharnessd: uid0.json: key 'uid_range.first' must be a whole number from 1 to 4294967294"

write uidsys '.uid_range.first = 500'
check_bad "uid range over system users" uidsys.json \
	"sharnessd: uid_range 500-4595 overlaps systemd's system users (1-999); set uid_range.first so that the whole range is free, e.g. 1900000000 with count 4096"

write uidsmall '.uid_range.count = 4'
check_bad "uid range smaller than max_runs" uidsmall.json \
	"sharnessd: uidsmall.json: key 'uid_range.count' (4) is smaller than 'max_runs' (8); every concurrent run needs its own uid"

write noprof '.profiles_dir = "nope"'
check_bad "missing profiles dir" noprof.json \
	"sharnessd: $T/nope: cannot open the profiles directory: No such file or directory"

write badprof '.profiles_dir = "badprof"'
check_bad "bad profile key" badprof.json "sharnessd: $T/badprof/analyse.json: key 'netwrk' is unknown"

write wsroot '.workspaces = ["/"]'
check_bad "workspace /" wsroot.json \
	"sharnessd: wsroot.json: key 'workspaces' entry '/' is the root directory; name a project directory instead"

write llzero '.landlock_min_abi = 0'
check_bad "landlock_min_abi 0" llzero.json \
	"sharnessd: llzero.json: key 'landlock_min_abi' must be a whole number from 1 to 8"
write llnine '.landlock_min_abi = 9'
check_bad "landlock_min_abi above the newest ABI known" llnine.json \
	"sharnessd: llnine.json: key 'landlock_min_abi' must be a whole number from 1 to 8"
write llstr '.landlock_min_abi = "3"'
check_bad "landlock_min_abi as a string" llstr.json "sharnessd: llstr.json: key 'landlock_min_abi' must be a number"
# The configuration alone is checked here; the kernel's ABI is checked at start (e2e/landlock.sh).
write llmax '.landlock_min_abi = 8'
out=$(cd "$T" && "$SHARNESSD" --check-config --config llmax.json 2>&1)
check_eq "landlock_min_abi 8: the configuration is valid" "$(echo "$out" | head -1)" "configuration OK: llmax.json"

printf '{"max_runs": 1, "max_runs": 2}\n' >"$T/dup.json"
check_bad "key given twice" dup.json "sharnessd: dup.json: key 'max_runs' appears more than once"

printf '{"listen": "127.0.0.1:7443",\n "max_runs": }\n' >"$T/syntax.json"
check_bad "not JSON" syntax.json "sharnessd: syntax.json: not valid JSON near line 2"

check_bad "missing file" missing.json "sharnessd: missing.json: cannot open: No such file or directory"

# ---- the other self-explaining options ----------------------------------------
out=$("$SHARNESSD" --version)
check_eq "--version: exit 0" "$?" 0
[[ "$out" =~ ^sharnessd\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && ok "--version prints 'sharnessd X.Y.Z'" ||
	not_ok "--version prints 'sharnessd X.Y.Z'" "got: $out"
# One version (daemon/common/version.h): the daemon's, the client's and its MCP server's.
version=$(sed -n 's/^#define SHARNESS_VERSION "\(.*\)"$/\1/p' "$ROOT/daemon/common/version.h")
check_eq "--version names version.h's version" "$out" "sharnessd $version"
check_eq "sharness-client --version names it too" "$("$CLIENT" --version)" "sharness-client $version"
mcp_init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
check_eq "... and its MCP server's serverInfo" \
	"$(printf '%s\n' "$mcp_init" | "$CLIENT" mcp 2>/dev/null | jq -r .result.serverInfo.version)" "$version"
out=$("$SHARNESSD" --help)
check_eq "--help: exit 0" "$?" 0
for opt in --config --check-config --filter --verbose --version; do
	grep -q -- "$opt" <<<"$out" && ok "--help names $opt" || not_ok "--help names $opt"
done
"$SHARNESSD" --no-such-option >/dev/null 2>"$T/err"
check_eq "an unknown option: exit 2" "$?" 2
grep -q '^usage: sharnessd' "$T/err" && ok "an unknown option prints the usage on stderr" ||
	not_ok "an unknown option prints the usage on stderr" "$(cat "$T/err")"
exit 0
