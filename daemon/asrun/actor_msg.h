/*
 * actor_msg.h - the messages between a run's supervisor (asrun/notify.c)
 * and its file actor (asrun/actor_serve.c), both of the run's uid by the
 * time they talk; root/actor.h starts the actor.
 */
#ifndef SHARNESS_ACTOR_MSG_H
#define SHARNESS_ACTOR_MSG_H

#include <limits.h>
#include <stdint.h>

#include "privsep.h"

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
	ACTOR_CONNECT,  /* a: sun_path, len bytes (not terminated); flags: the socket type; fd0: the
	                 * caller's cwd; connected only to a listener of the run's own uid */
	ACTOR_BIND,     /* a: sun_path (fd0 its base, the caller's cwd); fd1: the run's socket */
};

/* Why the actor refused a call (actor_resp.denied): a check of ours, not
 * an ordinary error. */
enum actor_denied {
	ACTOR_DENIED_GIT = 1,    /* it would create or change a .git */
	ACTOR_DENIED_MODE,       /* a setuid, setgid or world-writable mode */
	ACTOR_DENIED_UNIX,       /* a connect to a unix socket that is not the run's */
	ACTOR_DENIED_DAEMON,     /* the actor itself could not do its work (what says which step) */
	ACTOR_DENIED_GIT_RUNS,   /* it would change a path the person's git runs (gitpaths.h) */
	ACTOR_DENIED_AGENT,      /* it would change an AI agent's configuration (.claude, .mcp.json, ...) */
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
	int32_t replace;  /* echoed back: ACTOR_CONNECT's socket in the run, which the new one
	                   * replaces; -1 for the other calls (a new descriptor) */
	uint32_t blocking; /* echoed back: ACTOR_CONNECT's socket was blocking */
	char a[PATH_MAX];
	char b[PATH_MAX];
};

/* The answer; ACTOR_OPEN's new descriptor comes with it (SCM_RIGHTS). */
struct actor_resp {
	uint64_t id;
	int32_t err;      /* 0 or an errno */
	int32_t denied;   /* enum actor_denied, or 0 */
	uint32_t cloexec;
	int32_t replace;
	uint32_t blocking;
	char what[PRIVSEP_DENIAL_DETAIL]; /* for the reply: the call and its whole path */
};

/* After a response that carried a descriptor, the actor closes its own copy
 * and then sends this one byte.  The supervisor answers the run only once
 * it came: a file the actor still held open for writing would make the
 * run's next exec of it fail with ETXTBSY (`cp x build/t && ./build/t`). */
#define ACTOR_CLOSED 'c'

#endif
