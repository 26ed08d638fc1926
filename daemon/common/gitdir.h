/*
 * gitdir.h - where git keeps the repository of a working tree: its git
 * directory (`.git`, or the one a gitfile names) and the shared one a
 * `commondir` file names (a linked worktree's main `.git`).  The file
 * actor reads the config there (asrun/gitpaths.c); start-up finds the
 * shared directory of a workspace that is a linked worktree or a
 * submodule, which lies outside it, so that root binds it read-only into
 * every run's view (root/mount.c).
 *
 * Trust: the files read are the person's, or whoever could write the
 * workspace's `.git` (no run can: SPEC §15.2), so start-up takes nothing
 * a gitfile names on trust: see gitdir_outside.  Each read is one line of
 * a regular file, bounded by `size`; a longer one is an error, never cut.
 */
#ifndef SHARNESS_GITDIR_H
#define SHARNESS_GITDIR_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The first line of the regular file `file` (a symlink is not followed),
 * which must begin with `prefix`, without it (and its line end) in out.
 * 1; 0 when there is no such file; -1 when it cannot be read, is not a
 * regular file, is empty, lacks the prefix or does not fit. */
int gitdir_first_line(const char *file, const char *prefix, char *out, size_t size);

/* The git directory the gitfile `<worktree>/.git` names ("gitdir: PATH",
 * PATH from the working tree), lexically normalised: 1; 0 when .git is
 * not a regular file (none, a directory, a symlink); -1 when it is one
 * that cannot be read or parsed. */
int gitdir_gitfile(const char *worktree, char *gitdir, size_t size);

/* The shared git directory of `gitdir`: what its `commondir` file names
 * (from gitdir), lexically normalised, or gitdir itself when it has none:
 * 1 (0 never); -1 when commondir cannot be read or a path does not fit. */
int gitdir_common(const char *gitdir, char *common, size_t size);

/* Start-up: the real path of the shared git directory of the workspace
 * `workspace` whose owner is `owner`, when root may bind it into the runs'
 * view; malloc'd.  That is, when all of these hold:
 *   - `.git` is a gitfile (not a symlink) of `owner`, writable by nobody else;
 *   - it names a linked worktree's git directory, `<shared>/worktrees/NAME`,
 *     whose own `gitdir` file points back at this `.git`; or a
 *     submodule's, under `<super>/.git/modules/` of a superproject that
 *     holds the workspace;
 *   - the shared directory is a git directory (HEAD, objects/, refs/) of
 *     `owner`, outside the workspace.
 * NULL otherwise (the actor then refuses the tree's writes).  `st`: the
 * shared directory as checked (bind only that inode).  Call it with the fs
 * uid of `owner`: it follows paths the gitfile names. */
char *gitdir_outside(const char *workspace, uid_t owner, struct stat *st);

#endif
