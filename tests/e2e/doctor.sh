#!/bin/bash
# tests/e2e/doctor.sh - sharnessd --doctor and sharness-client doctor (SPEC §15.1):
# a good configuration gives only ✔ lines and exit 0; each broken one gives its ✘ line
# with the fix and exit 1; the doctor leaves nothing behind (no cgroup, no lock file).
. "$(dirname "$0")/lib.sh"

# doctor NAME CONFIG: run sharnessd --doctor; DOUT, DRC
doctor() {
	DOUT=$("$SHARNESSD" --doctor --config "$1" 2>&1)
	DRC=$?
	printf '%s\n' "$DOUT" >"$T/doctor.$(basename "$1" .json).out"
}
# variant NAME JQ_FILTER: $T/NAME.json from the base configuration
variant() { local n=$1; shift; jq "$@" "$T/base.json" >"$T/$n.json"; }
xline() { printf '%s\n' "$DOUT" | grep '^✘' | tr '\n' ' '; }

cgroups_now() { ls -d /sys/fs/cgroup/*/sharness-* /sys/fs/cgroup/sharness-* 2>/dev/null | sort; }
before_cg=$(cgroups_now)

# A configuration of the harness's shape, not started: own port, range, state_dir.
PORT=$(free_port)
UID_FIRST=$((1900000000 + 4096 * (RANDOM % 50000)))
WS=$T/ws
mkdir -p "$WS" "$T/profiles"
cp "$ROOT"/profiles/*.json "$T/profiles/"
"$ROOT/certs/mkcerts" "$T/certs" >/dev/null
e2e_config
jq --arg s "$T/dstate" '.state_dir = $s' "$T/sharnessd.json" >"$T/base.json"

doctor "$T/base.json"
check_eq "good config: exit 0" "$DRC" 0
check_eq "good config: only ✔ lines" "$(printf '%s\n' "$DOUT" | grep -vc '^✔')" 0
for what in 'configuration' 'running as root' 'Landlock ABI' 'seccomp filter builds' 'run namespaces' \
	'idmap user namespace' 'cgroups (hybrid|v1|v2)' 'uid_range .* is free' 'tls.cert .* signed by tls.ca' \
	'client certificate \(role person\)' 'workspace '"$WS"': owner root' 'audit log' 'listen .* free' \
	'the TLS key, the CA key, the secrets file, the audit log and the state dir lie outside every workspace' \
	'kernel.core_pattern .*: a run.s crash leaves no core and reaches no helper' \
	"the front's executable $(dirname "$SHARNESSD")/sharnessd-front" \
	"the file actor's executable $(dirname "$SHARNESSD")/sharness-actor"; do
	check_match "good config: a ✔ line for '$what'" "$DOUT" "✔ $what"
done
abi=$(printf '%s\n' "$DOUT" | sed -n 's/^✔ Landlock ABI \([0-9]*\).*/\1/p')
check "nothing left: no state_dir (so no lock file) was created" test ! -e "$T/dstate"
check "nothing left: no audit log was created" test ! -e "$T/audit.log"
check_eq "nothing left: no sharness-* cgroup was created" "$(cgroups_now)" "$before_cg"

# Expired server certificate (signed by the same CA, serverAuth).
"$ROOT/certs/mkcerts" "$T/certs" --client srvold - --expired --eku server >/dev/null
variant expired --arg t "$T" '.tls.cert = ($t + "/certs/srvold.pem") | .tls.key = ($t + "/certs/srvold.key")'
doctor "$T/expired.json"
check_eq "expired server certificate: exit 1" "$DRC" 1
check_match "expired server certificate: ✘ with the fix" "$(xline)" \
	"✘ tls.cert $T/certs/srvold.pem expired on [0-9-]+ [0-9:]+ UTC: issue a new server certificate"

# Missing key.
variant nokey --arg t "$T" '.tls.key = ($t + "/certs/missing.key")'
doctor "$T/nokey.json"
check_eq "missing key: exit 1" "$DRC" 1
check_match "missing key: ✘ names the file and the fix" "$(xline)" \
	"✘ tls.key $T/certs/missing.key: cannot read it \(No such file or directory\): point tls.key at"

# World-writable workspace.
mkdir -p "$T/wsww" && chmod 0777 "$T/wsww"
variant ww --arg w "$T/wsww" '.workspaces += [$w]'
doctor "$T/ww.json"
check_eq "world-writable workspace: exit 1" "$DRC" 1
check_match "world-writable workspace: ✘ with chmod o-w" "$(xline)" \
	"✘ workspace $T/wsww is world-writable \(mode 0777\).*chmod o-w $T/wsww"

# A secret of the daemon's inside a workspace: the start-up's own refusal.
variant inws --arg w "$T" '.workspaces += [$w]'
doctor "$T/inws.json"
check_eq "the daemon's key inside a workspace: exit 1" "$DRC" 1
check_match "the daemon's key inside a workspace: ✘ with the start-up's sentence" "$(xline)" \
	"✘ tls.key $T/certs/server.key lies inside the workspace $T, where a run can read it; move it out"

# proxy.listen is accepted (a configuration of 0.1 loads) and said to do nothing.
variant plisten '.proxy.listen = "127.0.0.1:3129"'
out=$(timeout 10 "$SHARNESSD" --config "$T/plisten.json" --check-config 2>&1)
check_eq "proxy.listen: the configuration still loads" "$?" 0
check_match "proxy.listen: ... with a warning that it does nothing" "$out" \
	"warning: proxy.listen \(127.0.0.1:3129\) has no effect and can be removed: the egress proxy listens on 127.0.0.1:3128 inside each proxy run's own network namespace"

# landlock_min_abi above the running ABI: the start-up's own refusal sentence.
if [ -n "$abi" ] && [ "$abi" -lt 8 ]; then
	variant ll --arg s "$T/llstate" ".landlock_min_abi = $((abi + 1)) | .state_dir = \$s"
	doctor "$T/ll.json"
	check_eq "landlock_min_abi $((abi + 1)) > ABI $abi: exit 1" "$DRC" 1
	check_match "landlock_min_abi: ✘ with the start-up's refusal" "$(xline)" "✘ Landlock: .*ABI $abi"
	timeout 20 "$SHARNESSD" --config "$T/ll.json" >"$T/ll.start" 2>&1
	refusal=$(sed -n 's/.*sharnessd: //p' "$T/ll.start" | head -1)
	check_match "landlock_min_abi: the start-up refuses with the ABI named" "$refusal" "ABI $abi .*below landlock_min_abi"
	check_match "landlock_min_abi: the doctor prints the same sentence the start-up refuses with" \
		"$(xline)" "✘ Landlock: $(printf '%s' "${refusal#*: }" | sed 's/[][\.*^$()+?{}|]/\\&/g')"
else
	not_ok "landlock_min_abi case needs a running ABI below 8" "got: '${abi}'"
fi

# Started from a cgroup so deep that a run's cgroup directory would not fit: the doctor says
# so and start-up refuses, and the refusal leaves no cgroup behind (v1 and hybrid hosts; on v2
# the runs go below the root or the delegated unit, whatever the caller's depth).
pids_mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { print $2; exit }' /proc/self/mounts)
if [ -n "$pids_mnt" ]; then
	own=$(sed -n 's/^[0-9]*:pids:\///p' /proc/self/cgroup)
	top=$pids_mnt/${own:+$own/}sharness-doctor-$$
	deep=$top
	for i in 1 2 3 4 5 6 7; do deep=$deep/$(printf '%060d' "$i"); done
	mkdir -p "$deep"
	# in_deep CMD...: CMD with this one process moved into the deep cgroup
	in_deep() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$deep" "$@"; }
	variant deep --arg s "$T/deepstate" '.state_dir = $s'
	DOUT=$(in_deep "$SHARNESSD" --doctor --config "$T/deep.json" 2>&1)
	DRC=$?
	check_eq "started from a deep cgroup: exit 1" "$DRC" 1
	check_match "deep cgroup: ✘ names the run cgroups' directory and the fix" "$(xline)" \
		"✘ cgroups \((hybrid|v1)\): the run cgroups' directory $deep/sharness-$UID_FIRST is too long \([0-9]+ bytes leave no room for a run's name\): start sharnessd from a cgroup nearer the root"
	in_deep timeout 20 "$SHARNESSD" --config "$T/deep.json" >"$T/deep.start" 2>&1
	check_match "deep cgroup: start-up refuses it too" "$(cat "$T/deep.start")" \
		"the run cgroups' directory is too long .*nearer the root than $deep/sharness-$UID_FIRST"
	check_eq "deep cgroup: the refusal left no parent cgroup (only the test's own chain)" \
		"$(find "$top" -name "sharness-$UID_FIRST" | wc -l)" 0
	check_eq "deep cgroup: nor elsewhere" \
		"$(cgroups_now | grep -c "sharness-$UID_FIRST\$")" "$(printf '%s\n' "$before_cg" | grep -c "sharness-$UID_FIRST\$")"
	find "$top" -depth -type d -exec rmdir {} +
	check "deep cgroup: the test's chain is gone" test ! -e "$top"
else
	ok "deep cgroup: no v1 pids hierarchy here (pure v2), nothing to check"
fi

# A broken configuration is a ✘, not a crash.
printf '{"listen": 7}' >"$T/badcfg.json"
doctor "$T/badcfg.json"
check_eq "unparsable configuration: exit 1" "$DRC" 1
check_match "unparsable configuration: ✘ configuration with --check-config" "$(xline)" "✘ configuration: .*--check-config"

# A live daemon holding the range; first the doctor of its own configuration.
e2e_start
doctor "$T/sharnessd.json"
check_eq "the running daemon's own configuration: exit 0" "$DRC" 0
check_match "own configuration: ✔ the claims are this configuration's daemon" "$DOUT" \
	"✔ uid_range and state_dir .* held by this configuration's running sharnessd \(pid $DAEMON_PID\)"
check_match "own configuration: ✔ reachability (TCP connect)" "$DOUT" \
	"✔ sharnessd \(pid $DAEMON_PID\) listens on https://127.0.0.1:$PORT: TCP connect OK"
jq --arg s "$T/ostate" --argjson f $((UID_FIRST + 100)) --argjson p "$(free_port)" \
	'.state_dir = $s | .uid_range.first = $f | .listen = ("127.0.0.1:" + ($p|tostring))' \
	"$T/sharnessd.json" >"$T/overlap.json"
doctor "$T/overlap.json"
check_eq "overlapping uid range of a live daemon: exit 1" "$DRC" 1
check_match "overlapping range: ✘ names the live pid and the fix" "$(xline)" \
	"✘ uid_range $((UID_FIRST + 100))-[0-9]+: another sharnessd \(pid $DAEMON_PID\) uses uid_range $UID_FIRST-$((UID_FIRST + 4095)), which overlaps: give this daemon a uid_range of its own"
check "overlapping range: the doctor created no lock file" test ! -e "$T/ostate"
jq --arg s "$T/state" --argjson f $((UID_FIRST + 8192)) '.uid_range.first = $f' "$T/sharnessd.json" >"$T/samedir.json"
doctor "$T/samedir.json"
check_match "shared state_dir: ✘ names the pid holding its lock" "$(xline)" \
	"✘ state_dir $T/state: another sharnessd \(pid $DAEMON_PID\) holds its lock"

# sharness-client doctor against the running daemon, with hooks in a home of its own.
export HOME=$T/home
cd "$T"
mkdir -p "$HOME/.claude" "$HOME/.gemini"
jq -n --arg c "$CLIENT hook claude" '{hooks: {PreToolUse: [{matcher: "Bash|Monitor|PowerShell", hooks: [{type: "command", command: $c}]}]}}' \
	>"$HOME/.claude/settings.json"
client_run doctor
printf '%s' "$OUT" | sed 's/^/# client doctor: /'
check_eq "client doctor: exit 0" "$RC" 0
check_match "client doctor: reachability over mTLS with the policy hash" "$OUT" \
	"✔ sharnessd at https://127.0.0.1:$PORT answers GET /v0/policy over mutual TLS: .*policy sha256:[0-9a-f]{64}"
check_match "client doctor: the certificate's role" "$OUT" "✔ certificate $T/certs/app.pem: role app, valid until"
check_match "client doctor: Claude Code hook installed" "$OUT" "✔ Claude Code hook installed"
check_match "client doctor: Gemini not installed is a note" "$OUT" "✔ Gemini CLI hook: not installed \(see docs/agents.md\)"
check_match "client doctor: SHARNESS_RELAY=off (lib.sh) is a note" "$OUT" \
	"✔ relay: off \(SHARNESS_RELAY=off\): each fresh client sets up its own TLS"
check_eq "client doctor: only ✔ lines" "$(printf '%s' "$OUT" | grep -vc '^✔')" 0
# In $HOME, a project's .claude/settings.json is the user's: one file, read once.
(cd "$HOME" && client_run doctor && printf '%s\n' "$OUT") >"$T/doctor-home.out"
check_eq "client doctor run in \$HOME: the settings file named once" \
	"$(grep '^✔ Claude Code hook installed' "$T/doctor-home.out")" "✔ Claude Code hook installed ($HOME/.claude/settings.json)"
# The relay: none, then one started as the user unit runs it.
SHARNESS_RELAY= client_run doctor
check_eq "client doctor, no relay: a note that names the unit, exit 0" "$RC/$(grep '^✔ relay' <<<"$OUT")" \
	"0/✔ relay: none serves this identity: each fresh client (each hook call) sets up its own TLS; 'systemctl --user enable --now sharness-relay' keeps one (docs/client.md)"
SHARNESS_RELAY= SHARNESS_RELAY_IDLE=0 "$CLIENT" relay </dev/null >/dev/null 2>&1 &
relay_pid=$!
for _ in $(seq 1 100); do compgen -G "$SHARNESS_TICKETS/*.relay" >/dev/null && break; sleep 0.05; done
SHARNESS_RELAY= client_run doctor
check_eq "client doctor, a relay running: says it serves, exit 0" "$RC/$(grep '^✔ relay' <<<"$OUT")" \
	"0/✔ relay: one serves this identity: fresh clients set up no TLS of their own"
kill -TERM "$relay_pid"
wait "$relay_pid"

# Another PreToolUse hook for Bash beside sharness's allow: some Claude Code
# builds then drop sharness's rewrite and keep its allow (docs/agents.md).
cp "$HOME/.claude/settings.json" "$T/claude.json"
claude_hooks() { # SHARNESS-HOOK-ARGS OTHER-MATCHER
	jq -n --arg c "$CLIENT hook claude$1" --arg m "$2" '{hooks: {PreToolUse: [
		{matcher: "Bash|Monitor|PowerShell", hooks: [{type: "command", command: $c}]},
		{matcher: $m, hooks: [{type: "command", command: "/usr/local/bin/audit-hook"}]}]}}' >"$HOME/.claude/settings.json"
}
# Claude Code's other tools that run a command (review s36): a matcher of
# Bash alone leaves Monitor and PowerShell to run on the host.
jq -n --arg c "$CLIENT hook claude" '{hooks: {PreToolUse: [{matcher: "Bash", hooks: [{type: "command", command: $c}]}]}}' \
	>"$HOME/.claude/settings.json"
client_run doctor
check_eq "client doctor, sharness's matcher is Bash alone: exit 1" "$RC" 1
check_match "... ✘ naming the matcher to use" "$OUT" \
	"✘ Claude Code hook .*its matcher leaves out Monitor or PowerShell.*\"Bash\|Monitor\|PowerShell\""
jq -n --arg c "$CLIENT hook claude" '{hooks: {PreToolUse: [{matcher: "Bash|Mon|Power", hooks: [{type: "command", command: $c}]}]}}' \
	>"$HOME/.claude/settings.json"
client_run doctor
check_eq "... parts of the names (Bash|Mon|Power) do not cover them: exit 1" "$RC/$(grep -c 'leaves out Monitor or PowerShell' <<<"$OUT")" 1/1
claude_hooks " --rewrite" "Bash|Edit"
client_run doctor
check_eq "client doctor, another hook for Bash beside sharness's allow with a rewrite (--rewrite): exit 1" "$RC" 1
check_match "... ✘ names that hook, its file and the fix" "$OUT" \
	"✘ Claude Code hook .*another PreToolUse hook may run for Bash too \(matcher 'Bash\|Edit': '/usr/local/bin/audit-hook', in $HOME/.claude/settings.json\).*'$CLIENT hook claude --ask'"
claude_hooks "" "Bash|Edit"
client_run doctor
check_eq "... without --rewrite (unrouted calls denied, nothing to drop): ✔, exit 0" "$RC/$(grep -c '^✔ Claude Code hook installed' <<<"$OUT")" 0/1
claude_hooks " --rewrite" "*"
client_run doctor
check_eq "... a matcher of every tool (*) counts too" "$RC" 1
# A pattern is not compiled (the checkout's settings could make a regex
# engine spin for minutes): it may select Bash.
claude_hooks " --rewrite" "(((a{1,100}){1,100}){1,100})"
client_run doctor
check_eq "... a regular expression counts, and takes no time to judge" "$RC/$(grep -c 'may run for Bash too' <<<"$OUT")" 1/1
claude_hooks " --rewrite --ask" "Bash"
client_run doctor
check_eq "... with --ask (the person is asked then): ✔, exit 0" "$RC/$(grep -c '^✔ Claude Code hook installed' <<<"$OUT")" 0/1
claude_hooks " --rewrite" "Edit|Write"
client_run doctor
check_eq "... a hook for other tools only: ✔, exit 0" "$RC/$(grep -c '^✔ Claude Code hook installed' <<<"$OUT")" 0/1
cp "$T/claude.json" "$HOME/.claude/settings.json"

jq -n '{hooks: {BeforeTool: [{matcher: "run_shell_command", hooks: [{type: "command", command: "/nonexistent/sharness-client hook gemini"}]}]}}' \
	>"$HOME/.gemini/settings.json"
client_run doctor
check_eq "client doctor, hook path missing: exit 1" "$RC" 1
check_match "client doctor: ✘ for a hook naming a missing path, with the fix" "$OUT" \
	"✘ Gemini CLI hook \($HOME/.gemini/settings.json, BeforeTool\) runs /nonexistent/sharness-client, which does not exist.*'$CLIENT hook gemini'"
rm "$HOME/.gemini/settings.json"

"$ROOT/certs/mkcerts" "$T/other" >/dev/null
SHARNESS_CA=$T/other/ca.pem client_run doctor
check_eq "client doctor, wrong CA: exit 1" "$RC" 1
check_match "client doctor, wrong CA: ✘ the certificate is not signed by that CA" "$OUT" \
	"✘ certificate $T/certs/app.pem is not signed by the CA $T/other/ca.pem"
check_match "client doctor, wrong CA: ✘ the daemon cannot be reached over TLS" "$OUT" "✘ sharnessd at https://127.0.0.1:$PORT: "

e2e_stop
client_run doctor
check_eq "client doctor, no daemon: exit 1" "$RC" 1
check_eq "nothing left after every doctor: no new sharness-* cgroup but the daemon's own" \
	"$(cgroups_now | grep -v "sharness-$UID_FIRST\$")" "$(printf '%s\n' "$before_cg" | grep -v "sharness-$UID_FIRST\$")"
[ "$E2E_FAILED" = 0 ]
