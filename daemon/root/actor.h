/*
 * actor.h - a process per run that makes the run's writes that could touch a
 * .git, as the run, after checking them (actor.c says why and how).
 *
 * Trust: the actor runs as the run; the supervisor (root) starts it and
 * talks to it over a socketpair.
 */
#ifndef SHARNESS_ACTOR_H
#define SHARNESS_ACTOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sandbox_spec;

enum actor_op {
	ACTOR_OPEN = 1, /* a: path; flags, mode */
	ACTOR_MKDIR,    /* a: path; mode */
	ACTOR_MKNOD,    /* a: path; mode, len = dev */
	ACTOR_SYMLINK,  /* a: the link's text; b: the new link (fd1 its base) */
	ACTOR_LINK,     /* a: existing (fd0); b: new name (fd1); flags: AT_SYMLINK_FOLLOW */
	ACTOR_RENAME,   /* a: old (fd0); b: new (fd1); flags: renameat2's */
	ACTOR_UNLINK,   /* a: path; flags: AT_REMOVEDIR */
	ACTOR_TRUNCATE, /* a: path; len */
	ACTOR_CHMOD,    /* a: path; mode; flags: AT_SYMLINK_NOFOLLOW */
	ACTOR_FCHMOD,   /* fd0: the file; mode */
};

/* One call, with up to two descriptors (SCM_RIGHTS): the bases of a and b
 * (the run's dirfd or cwd), or the file itself for ACTOR_FCHMOD. */
struct actor_req {
	uint64_t id;     /* the seccomp notification's id, echoed back */
	uint32_t op;
	int32_t flags;
	uint32_t mode;
	uint32_t umask;  /* the caller's */
	uint64_t len;
	uint32_t n_fds;
	uint32_t cloexec; /* echoed back: the new fd's O_CLOEXEC */
	char a[PATH_MAX];
	char b[PATH_MAX];
};

/* The answer; ACTOR_OPEN's new descriptor comes with it (SCM_RIGHTS). */
struct actor_resp {
	uint64_t id;
	int32_t err;      /* 0 or an errno */
	int32_t denied;   /* refused by a check here: 1 a .git, 2 a mode (not an ordinary error) */
	uint32_t cloexec;
	char what[200];   /* for the log: the call and its path */
};

struct actor {
	pid_t pid;        /* 0: not started */
	int sock;
};

/* Fork the actor in the view of `target` (a process of the run). */
int actor_start(struct actor *a, pid_t target, const struct sandbox_spec *spec);

/* Kill and reap the actor, if one was started. */
void actor_stop(struct actor *a);

#endif
