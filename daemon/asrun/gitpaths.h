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
#include <sys/types.h>
#include <time.h>

#define GITPATHS_MAX 128 /* paths, each as named and as resolved */
#define GITPATHS_SEEN_MAX 16 /* files and directories read, to see them change */

/* A file or directory read (a config, an include, the .git, a hooks
 * directory), as it was: the person may change it during a run. */
struct gitseen {
	char *path;
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct gitpaths {
	size_t n;
	char *path[GITPATHS_MAX]; /* absolute, normalised */
	char *why[GITPATHS_MAX];  /* for the denial: "the person's git runs it (core.hooksPath)" */
	bool agent[GITPATHS_MAX]; /* what an AI agent's configuration runs (agentpaths.h), not git's */
	const char *closed;	  /* set: the config could not be read in full, and every write in
				   * the working tree (root) is refused for this reason */
	bool closed_agent;	  /* by an AI agent's configuration, not git's */
	char *root;		  /* the working tree */
	dev_t dev;		  /* and its .git, as read (gitrepos) */
	ino_t ino;
	unsigned long used; /* when a write last passed through it */
	struct gitseen seen[GITPATHS_SEEN_MAX];
	size_t n_seen;
	bool seen_all;		/* false: more was read than seen[] holds */
};

#define GITREPOS_MAX 32

/* The repositories read so far in a run; past GITREPOS_MAX the one
 * longest unused is forgotten, and read again when a write next passes
 * through it. */
struct gitrepos {
	size_t n;
	unsigned long tick;
	struct gitpaths repo[GITREPOS_MAX];
	const char *const *trees; /* where a run may write: the workspace, the write paths */
	size_t n_trees;
};

/* Read the config of the repository at `worktree`/.git (a directory, a
 * gitfile or a symlink) as the caller sees it, resolving through the host
 * /proc at `hostproc`, and keep what it names in `trees` (where a run may
 * write; elsewhere, `2>/dev/null` in an alias, it may not anyway).
 * Nothing is found where there is no repository. */
void gitpaths_find(int hostproc, const char *worktree, const char *const *trees, size_t n_trees,
		   struct gitpaths *g);
void gitpaths_free(struct gitpaths *g);

/* Why `path` (absolute, as the kernel prints it) may not change: it is one
 * of g's paths or lies under one, or, for a new entry (`making`), lies on
 * the way to one (a symlink or a moved directory there would redirect
 * git).  NULL when it may. */
const char *gitpaths_why(const struct gitpaths *g, const char *path, bool making, bool *agent);

/* Has anything gitpaths_find read changed since (a file or directory
 * made, removed, replaced or written)?  true also when it read more than
 * it could note. */
bool gitpaths_changed(const struct gitpaths *g);

/* The working tree `worktree` has a .git (device and inode): read it,
 * unless read already by that name and that .git (a run may move one
 * working tree in place of another) and nothing read has changed since
 * (the person may edit the config or link a hook while a run goes on:
 * husky writes its hooksPath, then the hooks; looked at on every write,
 * about 2 µs a path). */
void gitrepos_visit(struct gitrepos *rs, int hostproc, const char *worktree, dev_t dev, ino_t ino);

/* gitpaths_why over every repository read so far. */
const char *gitrepos_why(const struct gitrepos *rs, const char *path, bool making, bool *agent);

#endif
