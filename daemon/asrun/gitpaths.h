/*
 * gitpaths.h - the paths in a workspace's working tree that the person's
 * git runs or reads as config, by the workspace repository's own config
 * (gitpaths.c says which keys and why).  The file actor (actor_serve.c)
 * refuses every write there: a run that changed one would have the
 * person's next `git status` or commit run its code outside the sandbox.
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
				   * the workspace (root) is refused for this reason */
	const char *root;	  /* the workspace */
};

/* Read the config of the repository at `workspace`/.git (a directory, a
 * gitfile or a symlink) as the caller sees it, resolving through the host
 * /proc at `hostproc`.  Nothing is found where there is no repository. */
void gitpaths_find(int hostproc, const char *workspace, struct gitpaths *g);

/* Why `path` (absolute, as the kernel prints it) may not change: it is one
 * of g's paths or lies under one, or, for a new entry (`making`), lies on
 * the way to one (a symlink or a moved directory there would redirect
 * git).  NULL when it may. */
const char *gitpaths_why(const struct gitpaths *g, const char *path, bool making);

#endif
