#!/bin/bash
# mcp.sh - `sharness-client mcp`: the JSON-RPC stdio protocol line by line
# (version negotiation, ping, errors), then the official MCP TypeScript SDK
# client (@modelcontextprotocol/sdk, installed from npm into build/npm)
# spawning it: initialize, tools/list, tools/call against the real daemon.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
C=$CLIENT  # lib.sh: $CLIENT or build/sharness-client
tmp=$T/mcp-test  # inside the harness's $T, removed at exit
mkdir -p "$tmp"

# ---- raw protocol, no daemon needed ---------------------------------------
init() { printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n' "$1"; }
for v in 2025-11-25 2025-06-18 2025-03-26 2024-11-05; do
	got=$(init "$v" | "$C" mcp | jq -r .result.protocolVersion)
	check_eq "mcp: protocol $v is accepted as is" "$got" "$v"
done
got=$(init 1999-01-01 | "$C" mcp | jq -r .result.protocolVersion)
check_eq "mcp: an unknown version is answered with the latest" "$got" 2025-11-25
{
	init 2025-11-25
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"2.0","id":"p","method":"ping"}'
	echo '{"jsonrpc":"2.0","id":3,"method":"resources/list"}'
	echo '{not json'
	echo '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
	echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}'
	echo '[{"jsonrpc":"2.0","id":5,"method":"ping"}]'
	echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_command","arguments":{"command":7}}}'
	echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}'
} | "$C" --url https://127.0.0.1:1 mcp >"$tmp/raw" 2>"$tmp/raw.err"
rc=$?
check_eq "mcp: exits 0 when stdin closes" "$rc" 0
check_eq "mcp: one reply line per request, none for notifications" "$(wc -l <"$tmp/raw")" 8
check "mcp: every stdout line is a JSON-RPC 2.0 message" bash -c "jq -e -s 'all(.jsonrpc == \"2.0\")' '$tmp/raw'"
line() { sed -n "$1p" "$tmp/raw"; }
check_eq "mcp: initialize names the server and the tools capability" \
	"$(line 1 | jq -c '[.id, .result.serverInfo.name, .result.capabilities.tools]')" '[1,"sharness-client",{"listChanged":false}]'
check_eq "mcp: ping -> {}" "$(line 2 | jq -c '[.id, .result]')" '["p",{}]'
check_eq "mcp: unknown method -> -32601" "$(line 3 | jq -c '[.id, .error.code]')" '[3,-32601]'
check_eq "mcp: bad JSON -> -32700 with id null" "$(line 4 | jq -c '[.id, .error.code]')" '[null,-32700]'
check_eq "mcp: tools/list has run_command and the job tools" "$(line 5 | jq -c '[.id, [.result.tools[].name]]')" '[4,["run_command","job_start","job_status","job_output","job_kill","job_list"]]'
check_eq "mcp: run_command requires command (string)" \
	"$(line 5 | jq -c '.result.tools[0].inputSchema | [.required, .properties.command.type, (.properties | keys)]')" \
	'[["command"],"string",["command","cwd","profile","timeout_s"]]'
check_eq "mcp: a batch array is refused (-32600)" "$(line 6 | jq -c '.error.code')" '-32600'
check_eq "mcp: a wrong argument type is a tool error (isError), not a protocol error" \
	"$(line 7 | jq -c '[.id, .result.isError]')" '[6,true]'
check_eq "mcp: an unknown tool is -32602" "$(line 8 | jq -c '[.id, .error.code]')" '[7,-32602]'
check "mcp: nothing on stderr for valid traffic" test ! -s "$tmp/raw.err"

out=$( { echo '{"jsonrpc":"2.0","id":1,"method":"ping"}'; head -c 5000000 /dev/zero | tr '\0' x; echo
	printf '%s' '{"jsonrpc":"2.0","id":2,"method":"ping"}'; } | "$C" mcp | jq -c '[.id, .result, .error.code]' | tr '\n' ' ')
check_eq "mcp: a line over 4 MiB is refused (-32600) and the server goes on, last line without newline served" \
	"$out" '[1,{},null] [null,null,-32600] [2,{},null] '

# ---- the official TypeScript SDK client -----------------------------------
npmdir=$root/build/npm
mkdir -p "$npmdir"
cp "$here/mcp/package.json" "$here/mcp/client.mjs" "$npmdir/"
if [ ! -f "$npmdir/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
	! cmp -s "$here/mcp/package.json" "$npmdir/.installed-package.json"; then
	(cd "$npmdir" && npm install --no-audit --no-fund --loglevel=error >"$tmp/npm.log" 2>&1) &&
		cp "$here/mcp/package.json" "$npmdir/.installed-package.json"
fi
check "mcp: @modelcontextprotocol/sdk installed from npm" test -f "$npmdir/node_modules/@modelcontextprotocol/sdk/package.json"
sdk() { node "$npmdir/client.mjs" "$C" "$1" 2>"$tmp/sdk.err"; }

# Daemon unreachable: the SDK still connects; the call becomes a tool error.
"$root/certs/mkcerts" "$tmp/certs" >/dev/null 2>&1
SHARNESS_CA=$tmp/certs/ca.pem SHARNESS_CERT=$tmp/certs/app.pem SHARNESS_KEY=$tmp/certs/app.key \
SHARNESS_URL=https://127.0.0.1:1 sdk '[{"command":"true"}]' >"$tmp/s0"
check_eq "sdk: initialize negotiates 2025-11-25" "$(jq -r .protocolVersion "$tmp/s0")" 2025-11-25
check_eq "sdk: tools/list -> run_command and the job tools (the SDK validates each schema)" "$(jq -c '[.tools[].name]' "$tmp/s0")" '["run_command","job_start","job_status","job_output","job_kill","job_list"]'
check_eq "sdk: ping" "$(jq -c .ping "$tmp/s0")" '{}'
check_eq "sdk: unreachable daemon -> isError with a clear message" \
	"$(jq -c '.calls[0] | [.isError, (.content[0].text | test("cannot reach sharnessd at https://127.0.0.1:1"))]' "$tmp/s0")" '[true,true]'
check "sdk: unknown tool is a protocol error" bash -c "jq -r .unknownTool '$tmp/s0' | grep -q -- -32602"

e2e_start
cd "$WS" || exit 1
sdk '[{"command":"echo hi; echo oops >&2"},
      {"command":"echo bye; exit 3"},
      {"command":"pwd"},
      {"command":"sleep 30","timeout_s":1},
      {"command":"true","profile":"nosuchprofile"},
      {"command":"pwd","cwd":"'"$WS"'/d"},
      {"command":"true","bogus":1},
      {"command":"printf \"%s\" \"it'"'"'s \\$HOME\""},
      {"command":"true","timeout_s":1e300},
      {"command":"true","timeout_s":2000000000}]' >"$tmp/s1" 2>/dev/null
mkdir -p "$WS/d"
sdk '[{"command":"pwd","cwd":"'"$WS"'/d"}]' >"$tmp/s2"
check "sdk: no fatal error" bash -c "! jq -e .fatal '$tmp/s1' >/dev/null"
c() { jq -c ".calls[$1] | $2" "$tmp/s1"; }
check_eq "sdk: exit 0 -> isError false" "$(c 0 .isError)" false
check_eq "sdk: output and exit code in the text" "$(c 0 .content[0].text)" '"hi\n[stderr]\noops\n[exit code 0]"'
check_eq "sdk: structuredContent has stdout, stderr, exit" "$(c 0 '[.structuredContent.stdout, .structuredContent.stderr, .structuredContent.exit]')" '["hi\n","oops\n",0]'
check_eq "sdk: exit 3 -> isError true, exit code in the text" "$(c 1 '[.isError, .content[0].text]')" '[true,"bye\n[exit code 3]"]'
check_eq "sdk: cwd defaults to the server's working directory" "$(c 2 .structuredContent.stdout)" "\"$WS\\n\""
check_eq "sdk: timeout_s -> timed out tool error" "$(c 3 '[.isError, .structuredContent.timed_out, (.content[0].text | test("timed out"))]')" '[true,true,true]'
check_eq "sdk: unknown profile -> tool error with the daemon's message" \
	"$(c 4 '[.isError, (.content[0].text | test("^sharnessd did not run the command: .*nosuchprofile"))]')" '[true,true]'
check_eq "sdk: cwd argument" "$(jq -c '.calls[0].structuredContent.stdout' "$tmp/s2")" "\"$WS/d\\n\""
check_eq "sdk: an unknown argument is a tool error" "$(c 6 '[.isError, (.content[0].text | test("unknown argument .bogus."))]')" '[true,true]'
check_eq "sdk: quotes and \$ arrive intact" "$(c 7 .structuredContent.stdout)" "\"it's \$HOME\""
check_eq "sdk: timeout_s far past long's range -> a tool error naming the range (review s36)" \
	"$(c 8 '[.isError, .content[0].text]')" '[true,"argument '"'"'timeout_s'"'"' must be from 1 to 1000000000 seconds"]'
check_eq "sdk: timeout_s 2000000000 -> the same (it said 'at least 1')" "$(c 9 .content[0].text)" \
	'"argument '"'"'timeout_s'"'"' must be from 1 to 1000000000 seconds"' 
