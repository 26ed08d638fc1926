#!/usr/bin/env bash
# A workspace's path swapped under the daemon (SPEC §15.2: nothing a run
# does may reach beyond its workspace): root opens each workspace once at
# start, and a run's workspace must be that very directory, reached by its
# path with no symlink on the way.  With nested workspaces a run of the outer
# one can replace the inner one by a symlink to "/", and so can any user who
# may write a workspace's parent: before, the next run in the inner one got
# the host's root file system mounted, idmapped to the run, as its workspace.
. "$(dirname "$0")/lib.sh"
jq --arg p "$ROOT/build/probes" '.name = "writable" | .description = "read-write, no network, the probes" |
	.workspace = "read-write" | .exec_paths = [$p]' "$ROOT/profiles/analyse.json" >"$T/writable.json"
E2E_PROFILES="$T/writable.json"
mkdir -p "$T/ws/inner"
printf 'the inner workspace\n' >"$T/ws/inner/mark"
e2e_start "{\"workspaces\": [\"$T/ws/inner\", \"$T/ws\"]}"
in_ws() { run_cmd "$1" writable "{\"cwd\": \"$2\"}"; } # CMD CWD

# --- Proof: are commands really sandboxed? -------------------------------
prove_sandboxed writable "{\"cwd\": \"$WS\"}"
[ "$proof" = 1 ] || exit 1 # the attack below runs only in a proven sandbox

in_ws 'cat mark' "$WS/inner"
check_eq "the inner workspace serves a run" "$STATUS $(jf .stdout)" "200 the inner workspace"
# The attack, from a run of the outer workspace.
in_ws 'mv inner inner.real && ln -s / inner && echo swapped' "$WS"
check_eq "a run of the outer workspace replaces the inner one by a symlink to /" "$STATUS $(jf .stdout)" "200 swapped"
check "... on the host too" test -L "$WS/inner"
in_ws 'ls -d "$PWD"/etc /etc/shadow 2>&1; id -u' "$WS/inner"
check_eq "a run in the swapped workspace is refused (500 sandbox_failed)" "$STATUS $(jf .error.code)" "500 sandbox_failed"
check_match "... saying the workspace is not the one the daemon started with" "$(jf .error.message)" \
	"^The workspace $WS/inner is not the directory sharnessd started with \(moved, made anew or a symlink\): restart sharnessd\.$"
check_eq "... so nothing ran with the host's / as its workspace" "$(jf '.stdout // ""')" ""

# Put back: the same directory serves again.
rm "$WS/inner" && mv "$WS/inner.real" "$WS/inner"
in_ws 'cat mark' "$WS/inner"
check_eq "the directory put back serves again" "$STATUS $(jf .stdout)" "200 the inner workspace"
# A new directory of the same name is not the workspace either.
mv "$WS/inner" "$WS/inner.old" && mkdir "$WS/inner" && printf 'another\n' >"$WS/inner/mark"
in_ws 'cat mark' "$WS/inner"
check_match "a directory made anew under the workspace's name is refused" "$STATUS $(jf .error.message)" \
	"^500 The workspace $WS/inner is not the directory sharnessd started with"
rm -r "$WS/inner" && mv "$WS/inner.old" "$WS/inner"
# The sandbox prepared while it was gone failed; the next request rebuilds it.
in_ws 'cat mark' "$WS/inner"
check_eq "put back again, it serves" "$STATUS $(jf .stdout)" "200 the inner workspace"
check_settled "afterwards: one waiting sandbox per profile, nothing else"
