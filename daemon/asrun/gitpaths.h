/*
 * gitpaths.h - the paths in a working tree that the person's git runs or
 * reads as config, by that repository's own config (gitpaths.c says which
 * keys and why).  The file actor (actor_serve.c) refuses every write
 * there: a run that changed one would have the person's next `git status`
 * or commit run its code outside the sandbox.  It reads each repository
 * the first time a write passes through its working tree (gitrepos): the
 * workspace's own and every nested one.
 */
#ifndef SHARNESS_GITPATHS_H
#define SHARNESS_GITPATHS_H

#include <stdbool.h>
#include <stddef.h>

#define GITPATHS_MAX 64 /* paths, each as named and as resolved */

struct gitpaths {
	size_t n;
	char *path[GITPATHS_MAX]; /* absolute, normalised */
	char *why[GITPATHS_MAX];  /* for the denial: "the person's git runs it (core.hooksPath)" */
	const char *closed;	  /* set: the config could not be read in full, and every write in
				   * the working tree (root) is refused for this reason */
	char *root;		  /* the working tree */
};

#define GITREPOS_MAX 32

/* The repositories read so far in a run; past GITREPOS_MAX the oldest is
 * read again when a write next passes through it. */
struct gitrepos {
	size_t n, next;
	struct gitpaths repo[GITREPOS_MAX];
};

/* Read the config of the repository at `worktree`/.git (a directory, a
 * gitfile or a symlink) as the caller sees it, resolving through the host
 * /proc at `hostproc`.  Nothing is found where there is no repository. */
void gitpaths_find(int hostproc, const char *worktree, struct gitpaths *g);
void gitpaths_free(struct gitpaths *g);

/* Why `path` (absolute, as the kernel prints it) may not change: it is one
 * of g's paths or lies under one, or, for a new entry (`making`), lies on
 * the way to one (a symlink or a moved directory there would redirect
 * git).  NULL when it may. */
const char *gitpaths_why(const struct gitpaths *g, const char *path, bool making);

/* The working tree `worktree` has a .git: read it, unless read already. */
void gitrepos_visit(struct gitrepos *rs, int hostproc, const char *worktree);

/* gitpaths_why over every repository read so far. */
const char *gitrepos_why(const struct gitrepos *rs, const char *path, bool making);

#endif
