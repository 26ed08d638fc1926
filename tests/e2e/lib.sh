# tests/e2e/lib.sh - the end-to-end harness, sourced by every tests/e2e/*.sh.
#
#   e2e_start [CONFIG_JSON_FRAGMENT]   throwaway CA and certs in $T/certs, a workspace $WS,
#                                      the real daemon on a free loopback port; exports
#                                      SHARNESS_URL SHARNESS_CA SHARNESS_CERT SHARNESS_KEY (app),
#                                      SHARNESS_TICKETS=$T/tickets (the client's session
#                                      tickets stay inside the test's own directory),
#                                      SHARNESS_RELAY=off (each client connects itself, even
#                                      where a relay runs; relay.sh tests the relay,
#                                      client/relay.h)
#   api METHOD PATH [BODY] [ROLE]      curl with ROLE's certificate (default app);
#                                      sets $STATUS and $BODY
#   run_cmd CMD [PROFILE]              POST /v0/run {"cmd":CMD}; sets $STATUS $BODY
#   jf FIELD                           jq -r FIELD of $BODY
#   client_run ARGS...                 sharness-client; sets $OUT $ERR $RC
#   ok / not_ok / check / check_eq     print TAP-like lines the runner counts
#   e2e_stop                           stop the daemon (runs at exit anyway)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SHARNESSD=${SHARNESSD:-$ROOT/build/sharnessd}
CLIENT=${CLIENT:-$ROOT/build/sharness-client}
T=$(mktemp -d /tmp/sharness-e2e.XXXXXX)
chmod 755 "$T"
DAEMON_PID=

. "$ROOT/tests/e2e/lib_checks.sh"
jf() { printf '%s' "$BODY" | jq -r "$1" 2>/dev/null; }

# client_run ARGS...: run sharness-client; its stdout, stderr and exit code
# land in OUT, ERR (trailing newlines kept) and RC, and in $T/client/{out,err}.
client_run() {
	mkdir -p "$T/client"
	"$CLIENT" "$@" >"$T/client/out" 2>"$T/client/err"
	RC=$?
	OUT=$(cat "$T/client/out"; echo x); OUT=${OUT%x}
	ERR=$(cat "$T/client/err"; echo x); ERR=${ERR%x}
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

e2e_config() { # extra JSON fragment merged into the config
	local extra=${1:-"{}"}
	PREWARM=$(jq -rn --argjson extra "$extra" '$extra.prewarm // 1')
	jq -n --arg port "$PORT" --arg uid_first "$UID_FIRST" --arg prewarm "$PREWARM" --arg t "$T" --arg ws "$WS" --argjson extra "$extra" '{
		listen: ("127.0.0.1:" + $port),
		tls: {ca: ($t + "/certs/ca.pem"), cert: ($t + "/certs/server.pem"), key: ($t + "/certs/server.key")},
		profiles_dir: ($t + "/profiles"),
		workspaces: [$ws],
		uid_range: {first: ($uid_first|tonumber), count: 4096},
		max_runs: 8,
		secrets_file: null,
		audit_log: ($t + "/audit.log"),
		state_dir: ($t + "/state"),
		prewarm: ($prewarm|tonumber)
	} * $extra' >"$T/sharnessd.json"
}

e2e_start() {
	PORT=${E2E_PORT:-$(free_port)} # E2E_PORT: a restart on the same port
	# A uid range of its own, so that two daemons on one machine (tests run
	# side by side) never take each other's processes for strays.
	UID_FIRST=$((1900000000 + 4096 * (RANDOM % 50000)))
	WS=$T/ws
	mkdir -p "$WS/src" "$T/profiles"
	printf 'hello from the workspace\n' >"$WS/hello.txt"
	printf 'int main(void) { return 0; } // TODO: write it\n' >"$WS/src/main.c"
	cp "$ROOT"/profiles/*.json "$T/profiles/"
	[ -n "${E2E_PROFILES:-}" ] && cp $E2E_PROFILES "$T/profiles/"
	[ -f "$T/certs/ca.pem" ] || "$ROOT/certs/mkcerts" "$T/certs" >/dev/null
	e2e_config "${1:-}"
	${E2E_WRAP:-} "$SHARNESSD" --config "$T/sharnessd.json" ${E2E_DAEMON_ARGS:-} >"$T/daemon.log" 2>&1 &
	DAEMON_PID=$!
	# Up to 20 s: an ASan build on a loaded machine (a VM booting beside it)
	# once took more than 5; a daemon that dies is noticed at once.
	for _ in $(seq 1 400); do
		grep -q 'listening on' "$T/daemon.log" 2>/dev/null && break
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	if ! grep -q 'listening on' "$T/daemon.log"; then
		not_ok "daemon starts" "$(cat "$T/daemon.log")"
		exit 1
	fi
	export SHARNESS_URL=https://127.0.0.1:$PORT
	export SHARNESS_CA=$T/certs/ca.pem SHARNESS_CERT=$T/certs/app.pem SHARNESS_KEY=$T/certs/app.key
	export SHARNESS_TICKETS=$T/tickets SHARNESS_RELAY=off
}

e2e_stop() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -TERM "$DAEMON_PID"
		for _ in $(seq 1 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	DAEMON_PID=
}

e2e_cleanup() {
	e2e_stop
	if [ "$E2E_FAILED" != 0 ] && [ -f "$T/daemon.log" ]; then
		echo "# daemon log (last 30 lines):"
		tail -30 "$T/daemon.log" | sed 's/^/#   /'
	fi
	umount -R "$T"/state/root 2>/dev/null
	rm -rf "$T"
}
trap e2e_cleanup EXIT

api() { # METHOD PATH [BODY] [ROLE]
	local method=$1 path=$2 body=${3:-} role=${4:-app}
	local out="$T/body.$BASHPID"
	local args=(-s -o "$out" -w '%{http_code}' --cacert "$T/certs/ca.pem" -X "$method")
	[ "$role" != none ] && args+=(--cert "$T/certs/$role.pem" --key "$T/certs/$role.key")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	[ -n "${API_MAX_TIME:-}" ] && args+=(--max-time "$API_MAX_TIME") # a hang fails the check (STATUS 000)
	STATUS=$(curl "${args[@]}" "https://127.0.0.1:$PORT$path")
	BODY=$(cat "$out" 2>/dev/null)
	rm -f "$out"
}

# What a healthy idle daemon holds in its uid range: one waiting sandbox
# (one run cgroup; two processes: the init and the run's file actor) per
# profile and `prewarm`, nothing else (the front's own uid, the range's
# first, is not counted).
warm_count() { echo $((PREWARM * $(ls "$T"/profiles/*.json | wc -l))); }
warm_procs() { echo $((2 * $(warm_count))); }
front_pid() { # the daemon's front: its child running as uid_range.first
	local p
	for p in $(pgrep -P "$DAEMON_PID" 2>/dev/null); do
		[ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$UID_FIRST" ] && { echo "$p"; return; }
	done
}
range_procs() { ps -eo uid= | awk -v f="$UID_FIRST" '$1>f && $1<f+4096' | wc -l; }
run_cgroups() { ls /sys/fs/cgroup/pids/sharness-"$UID_FIRST" 2>/dev/null | grep -c '^run-'; }
# The daemon's own parent cgroups, in every hierarchy (the memory one may sit
# below the caller's cgroup): one line each.
parent_cgroups() { find /sys/fs/cgroup -maxdepth 5 -type d -name "sharness-$UID_FIRST" 2>/dev/null; }
settled() { # "PROCS CGROUPS" once they equal the warm counts (or after 3 s)
	local want
	want=$(warm_count)
	for _ in $(seq 1 60); do
		[ "$(range_procs)" = "$(warm_procs)" ] && [ "$(run_cgroups)" = "$want" ] && break
		sleep 0.05
	done
	echo "$(range_procs) $(run_cgroups)"
}
check_settled() { # DESC: nothing of the runs is left beyond the waiting sandboxes
	check_eq "$1" "$(settled)" "$(warm_procs) $(warm_count)"
}

run_cmd() { # CMD [PROFILE] [EXTRA_JSON]
	local body
	body=$(jq -nc --arg cmd "$1" --arg p "${2:-analyse}" --argjson x "${3:-{\}}" '{cmd: $cmd, profile: $p} + $x')
	api POST /v0/run "$body"
}

# Attack tests run only inside a proven sandbox.  prove_sandboxed PROFILE
# [EXTRA_JSON]: the identity probe (tests/probes, make probes), run under
# PROFILE, which must let it execute (exec_paths), shows from inside a
# non-root uid, an own pid namespace and private /proc, no capabilities,
# no_new_privs, a seccomp filter, its own hostname and only fds 0-2; proof=1 when all held,
# else 0 (each check is reported).  A test's attacks look at $proof first.
prove() { # DESC GOT EXPECTED-REGEX
	if [[ "$2" =~ $3 ]]; then ok "proof: $1"; else not_ok "proof: $1" "got: $2"; proof=0; fi
}
prove_sandboxed() {
	local id
	run_cmd "$ROOT/build/probes/probe_identity" "$1" "${2:-{\}}"
	id=$(jf .stdout)
	proof=1
	prove "the probe ran" "$STATUS/$(jf .exit)" '^200/0$'
	prove "non-root uid" "$(grep '^uid ' <<<"$id")" "^uid ([1-9][0-9]{6,}) \\1 \\1$"
	prove "own pid namespace (init is pid 1, few processes)" "$(grep -E '^(pid1|procs) ' <<<"$id" | tr '\n' ' ')" '^pid1 sharnessd procs [1-4] $'
	prove "no capabilities" "$(grep -E '^Cap(Prm|Eff|Bnd|Amb) ' <<<"$id" | awk '{print $2}' | sort -u)" '^0+$'
	prove "no_new_privs" "$(grep '^NoNewPrivs ' <<<"$id")" '^NoNewPrivs 1$'
	prove "seccomp filter" "$(grep '^Seccomp ' <<<"$id")" '^Seccomp 2$'
	prove "hostname" "$(grep '^hostname ' <<<"$id")" '^hostname sandbox$'
	prove "only fds 0, 1, 2" "$(grep '^fds ' <<<"$id")" '^fds 0,1,2$'
	prove "private /proc" "$(run_cmd 'ls /proc | grep -c "^[0-9]"' "$1" "${2:-{\}}"; jf .stdout)" '^[1-5]$'
}
