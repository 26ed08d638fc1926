#!/usr/bin/env bash
# A workspace that is a linked worktree or a submodule checkout keeps its
# git directory in another checkout's .git, outside the workspace.
# Start-up finds that shared git directory and root binds it read-only
# into each run's view (common/gitdir.h, root/mount.c): git works in the
# sandbox, and the file actor reads the config there, so what it names is
# closed and the rest of the tree is writable (without it, every write in
# such a workspace is refused: the actor cannot tell what git would run).
# Only a directory of the workspace's owner is bound, and the daemon's own
# secrets may not lie in one.
. "$(dirname "$0")/lib.sh"

g() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main -c protocol.file.allow=always "$@"; }

# A main checkout outside every workspace and outside /tmp (a run's own
# /tmp is readable: git must work through the bind's own Landlock grant),
# with a hooks directory in the tree (husky's), and a linked worktree of
# it as the first workspace.
OUTSIDE=$(mktemp -d /var/tmp/sharness-e2e-wt.XXXXXX)
trap 'e2e_cleanup; rm -rf "$OUTSIDE"' EXIT
MAIN=$OUTSIDE/main
g init -q "$MAIN"
g -C "$MAIN" commit -q --allow-empty -m first
g -C "$MAIN" config core.hooksPath .husky/_
g -C "$MAIN" worktree add -q -b wt "$T/ws"
# A submodule checkout as the second.
g init -q "$T/lib"
g -C "$T/lib" commit -q --allow-empty -m lib
g init -q "$T/super"
g -C "$T/super" submodule add -q "$T/lib" lib
# A worktree whose main checkout belongs to someone else: not bound.
g init -q "$T/other"
g -C "$T/other" commit -q --allow-empty -m other
g -C "$T/other" worktree add -q -b owt "$T/owt"
chown -R 12345:12345 "$T/other"
# A main checkout whose config includes a file in its own tree, which the
# runs' view does not hold (only its .git is bound): that tree stays closed.
g init -q "$OUTSIDE/inc"
g -C "$OUTSIDE/inc" commit -q --allow-empty -m inc
g -C "$OUTSIDE/inc" config include.path ../.gitconfig
printf '[core]\n\thooksPath = .githooks\n' >"$OUTSIDE/inc/.gitconfig"
g -C "$OUTSIDE/inc" worktree add -q -b iwt "$T/iwt"
# Gitfiles that name what is not this worktree's git directory: a plain
# directory of the owner's, another worktree's, and a good one that others
# may write.  None is bound.
mkdir -p "$T/forged/plain" "$T/forged/theirs" "$T/forged/gw" "$OUTSIDE/notgit"
echo secret >"$OUTSIDE/notgit/key"
echo "gitdir: $OUTSIDE/notgit" >"$T/forged/plain/.git"
echo "gitdir: $MAIN/.git/worktrees/ws" >"$T/forged/theirs/.git"
g -C "$MAIN" worktree add -q -b gw "$T/forged/gw"
chmod g+w "$T/forged/gw/.git"
main_sum=$(cd "$MAIN/.git" && find . -type f -exec sha256sum {} + | sort)

jq --arg p "$ROOT/build/probes" '.name = "probew" | .description = "probes, writable workspace" |
	.workspace = "read-write" | .exec_paths = [$p] | .network = {"mode": "none"} | .approval = "never"' \
	"$ROOT/profiles/analyse.json" >"$T/probew.json"
E2E_PROFILES="$T/probew.json"
e2e_start "{\"workspaces\": [\"$T/ws\", \"$T/super/lib\", \"$T/owt\", \"$T/iwt\", \"$T/forged/plain\", \"$T/forged/theirs\", \"$T/forged/gw\"]}"

check_match "worktree: start-up names the shared git directory runs see" "$(cat "$T/daemon.log")" \
	"workspace $T/ws: a linked worktree or a submodule; runs see its shared git directory $MAIN/.git, read-only"
check_match "submodule: start-up names the superproject's module directory" "$(cat "$T/daemon.log")" \
	"workspace $T/super/lib: .*runs see its shared git directory $T/super/.git/modules/lib, read-only"
for w in owt forged/plain forged/theirs forged/gw; do
	check "not bound: $w (another user's, a plain directory, another worktree's, a gitfile others may write)" \
		bash -c "! grep -q 'workspace $T/$w:' '$T/daemon.log'"
done
check_match "--doctor names it" "$("$SHARNESSD" --doctor --config "$T/sharnessd.json" 2>&1)" \
	"workspace $T/ws is a linked worktree or a submodule: runs see its shared git directory $MAIN/.git, read-only"

prove_sandboxed probew
run_in() { # CWD CMD: OUT = the stdout and stderr of CMD under probew in CWD
	OUT="not run: the sandbox was not proven"
	[ "$proof" = 1 ] || return 0
	run_cmd "$2" probew "$(jq -nc --arg cwd "$1" '{cwd: $cwd}')"
	OUT="$(jf .stdout)$(jf .stderr)"
}
denials() { jf '.denials[] | "\(.lock): \(.detail)"'; }

run_in "$T/ws" 'git status --short --branch; git log --oneline | wc -l'
check_match "worktree: git works in the sandbox" "$OUT" '^## wt
(\?\? .*
)*1$'
run_in "$T/ws" 'echo hi > notes.txt && mkdir -p src && echo x > src/a && cat notes.txt src/a && rm -r notes.txt src'
check_eq "worktree: the tree is written as ever" "$OUT" "hi
x"
run_in "$T/ws" "echo x >> $MAIN/.git/config; touch $MAIN/.git/hooks/pre-commit $MAIN/.git/worktrees/ws/HEAD"
check_match "worktree: the main checkout's .git is read-only" "$OUT" \
	'Read-only file system.*Read-only file system.*Read-only file system'
run_in "$T/ws" 'mkdir -p .husky/_'
check_match "worktree: what its shared config names is closed (core.hooksPath)" "$OUT $(denials)" \
	"Permission denied.*git: refused mkdir (.husky/)?_: .*\\(core.hooksPath\\)"
check_eq "worktree: the main checkout's git directory is unchanged on the host" \
	"$(cd "$MAIN/.git" && find . -type f -exec sha256sum {} + | sort)" "$main_sum"
check "worktree: no hooks directory was made on the host" test ! -e "$T/ws/.husky/_"

run_in "$T/super/lib" 'git status --short --branch; echo ok > f && cat f && rm f'
check_match "submodule: git works and the tree is written" "$OUT" '^## main(\.\.\.origin/main)?
ok$'

run_in "$T/owt" 'echo x > f'
check_match "another user's git directory: the tree stays closed, with the reason" "$OUT $(denials)" \
	"Permission denied.*git: refused open f: the repository.s git directory is outside the run.s view"
check "another user's git directory: nothing was written" test ! -e "$T/owt/f"

run_in "$T/iwt" 'echo x > f'
check_match "an include in the main checkout's tree (outside the view): the tree stays closed, with the reason" \
	"$OUT $(denials)" "Permission denied.*git: refused open f: the repository.s git config includes a file outside the run.s view"
run_in "$T/forged/plain" 'cat '"$OUTSIDE"'/notgit/key; echo x > f'
check_match "a gitfile naming a plain directory: nothing bound, nothing read, the tree closed" "$OUT" \
	"No such file or directory.*Permission denied"
run_in "$T/forged/theirs" 'git status 2>&1; echo x > f'
check_match "a gitfile naming another worktree's git directory: not bound, the tree closed" "$OUT" \
	"not a git repository.*Permission denied"
check "... nothing was written in them" test ! -e "$T/iwt/f" -a ! -e "$T/forged/plain/f" -a ! -e "$T/forged/theirs/f"

# Root binds only the directory start-up opened: the main checkout's .git
# replaced since (here by a copy) is left out, a sandbox prepared before
# is not used, and the tree is closed again.
mv "$MAIN/.git" "$MAIN/.git.moved"
cp -a "$MAIN/.git.moved" "$MAIN/.git"
run_in "$T/ws" 'echo x > f'
check_match "worktree: a git directory replaced since start-up is not bound" "$OUT $(denials)" \
	"Permission denied.*git: refused open f: the repository.s git directory is outside the run.s view"
check "worktree: ... and nothing was written" test ! -e "$T/ws/f"
rm -rf "$MAIN/.git"
mv "$MAIN/.git.moved" "$MAIN/.git"

# Nor is one bound below the top of another workspace (a run there could
# move a directory on the way while root places the bind): --doctor says so.
jq --arg o "$OUTSIDE" '.workspaces += [$o]' "$T/sharnessd.json" >"$T/below.json"
check_match "a shared git directory below the top of another workspace is not bound (--doctor)" \
	"$("$SHARNESSD" --doctor --config "$T/below.json" 2>&1)" \
	"✘ workspace $T/ws: its shared git directory $MAIN/.git lies below the top of the workspace $OUTSIDE"

# The daemon's own secrets may not lie in a git directory runs see.
jq --arg s "$MAIN/.git/sharness-state" '.state_dir = $s' "$T/sharnessd.json" >"$T/bad.json"
out=$("$SHARNESSD" --check-config --config "$T/bad.json" 2>&1)
check_match "start-up refuses a state dir inside a bound git directory" "$? $out" \
	"^1 .*state_dir $MAIN/.git/sharness-state lies inside the git directory runs see of workspace $T/ws"
