/*
 * gitdir.h - where git keeps the repository of a working tree: its git
 * directory (`.git`, or the one a gitfile names) and the shared one a
 * `commondir` file names (a linked worktree's main `.git`).  The file
 * actor reads the config there (asrun/gitpaths.c); start-up finds the
 * shared directory of a workspace that is a linked worktree or a
 * submodule, which lies outside it, so that root binds it read-only into
 * every run's view (root/mount.c).
 *
 * Trust: the files read are the person's (no run may create or change a
 * `.git`: SPEC §15.2) and each read is one line, bounded by `size`.
 */
#ifndef SHARNESS_GITDIR_H
#define SHARNESS_GITDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The first line of `file`, which must begin with `prefix`, without it
 * (and without its line end) in out.  false when unreadable or empty. */
bool gitdir_first_line(const char *file, const char *prefix, char *out, size_t size);

/* The git directory the gitfile `<worktree>/.git` names ("gitdir: PATH",
 * PATH from the working tree), lexically normalised.  false when .git is
 * no such file or the path does not fit. */
bool gitdir_gitfile(const char *worktree, char *gitdir, size_t size);

/* The shared git directory of `gitdir`: what its `commondir` file names
 * (from gitdir), lexically normalised, else gitdir itself.  false when a
 * path does not fit. */
bool gitdir_common(const char *gitdir, char *common, size_t size);

/* Start-up: the real path of the shared git directory of the working tree
 * `workspace`, when it lies outside the workspace, is `owner`'s and holds
 * the git directory (a linked worktree's `.git/worktrees/NAME`, a
 * submodule's `.git/modules/NAME`); malloc'd.  NULL otherwise: no
 * repository, one inside the workspace, or one root must not show. */
char *gitdir_outside(const char *workspace, uid_t owner);

#endif
