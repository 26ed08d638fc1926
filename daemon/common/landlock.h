/*
 * landlock.h - the run's Landlock ruleset (SPEC §6): every access right the
 * running kernel's ABI knows is handled; only the listed paths are granted.
 *
 * Trust: runs in the sandbox child (after the mount namespace is built, before
 * seccomp and execve), and in the front once it has started (front/lockdown.c).
 */
#ifndef SHARNESS_LANDLOCK_H
#define SHARNESS_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>

enum landlock_grant {
	LANDLOCK_GRANT_READ = 1,       /* read files, list dirs */
	LANDLOCK_GRANT_EXEC = 2,       /* execute */
	LANDLOCK_GRANT_WRITE = 4,      /* create, write, remove, truncate, rename */
	LANDLOCK_GRANT_DEV = 8,        /* ioctl on devices (for /dev/null, /dev/tty) */
	LANDLOCK_GRANT_LIST = 16,      /* list directories only (no file contents) */
};

struct landlock_path {
	const char *path;
	unsigned grants;               /* enum landlock_grant bits */
};

/* The newest Landlock ABI this file knows.  ABI 7 (audit logging flags) and
 * ABI 8 (LANDLOCK_RESTRICT_SELF_TSYNC) add no access right; ABI 9's
 * RESOLVE_UNIX is not handled (see landlock.c). */
#define LANDLOCK_ABI_KNOWN 8

enum landlock_kind {
	LANDLOCK_KIND_FS,    /* handled_access_fs */
	LANDLOCK_KIND_NET,   /* handled_access_net (ABI 4) */
	LANDLOCK_KIND_SCOPE, /* scoped (ABI 6) */
};

/* One access right the ruleset handles, the ABI that brought it, and the
 * lock of the sandbox that holds it on a kernel older than that ABI.  The
 * one table of these (landlock_rights()) builds the ruleset, GET /v0/policy
 * and is checked against docs/landlock.md, so they cannot drift apart. */
struct landlock_right {
	const char *name; /* "truncate", "connect_tcp", ... */
	enum landlock_kind kind;
	uint64_t bit; /* the kernel's LANDLOCK_ACCESS_* / LANDLOCK_SCOPE_* value */
	int since_abi;
	const char *other_lock; /* what covers it below since_abi; NULL for ABI 1 rights */
};

/* The table, in ABI order; its length in *n.  Static, never freed. */
const struct landlock_right *landlock_rights(size_t *n);

/* What enforces `r` on a kernel with Landlock ABI `abi`: "Landlock" when the
 * ABI has the right, else r->other_lock.  Never NULL. */
const char *landlock_enforced_by(const struct landlock_right *r, int abi);

/* The kernel's Landlock ABI version, or -1 (errno) when unavailable. */
int landlock_abi(void);

/* The start-up check: the running ABI when it is at least `min_abi`, else -1
 * with one sentence in `err` that is true for this system: no Landlock
 * (ENOSYS: an older kernel or one built without it; EOPNOTSUPP: built but not
 * in lsm=, with the current list from /sys/kernel/security/lsm to extend), or
 * an ABI below `min_abi`, naming the running ABI and kernel release. */
int landlock_check(int min_abi, char *err, size_t errlen);

/* The sentence itself, from the facts (for landlock_check and the tests):
 * `abi` as landlock_abi() returned it and `errnum` its errno; `release` from
 * uname(2); `lsm` the contents of /sys/kernel/security/lsm or NULL when it
 * cannot be read; `seccomp_mode` the Seccomp: line of /proc/self/status (-1
 * unknown).  Returns 0 when abi >= min_abi (err untouched), else -1. */
int landlock_refusal(int abi, int errnum, int min_abi, const char *release, const char *lsm, int seccomp_mode,
		     char *err, size_t errlen);

/* Restrict the calling thread: only `paths` with their grants; TCP bind denied,
 * TCP connect denied except to `tcp_connect_port` (0 = none); abstract unix
 * sockets and signals scoped where the ABI has them.  Requires no_new_privs.
 * Returns 0 or -1 with errno.  Fails closed: Landlock unavailable → -1
 * (ENOSYS not built, EOPNOTSUPP disabled); a path that cannot be opened →
 * -1 with open()'s errno (ENOENT for a missing path), nothing applied, so the
 * caller decides whether a missing path may be left out.  A grant on a file
 * (not a directory) keeps only the file rights (read, write, exec, truncate,
 * ioctl).  Async-signal-safe (syscalls only). */
int landlock_apply(const struct landlock_path *paths, size_t n, uint16_t tcp_connect_port);

/* After a failed landlock_apply, errmsg_op() names the call and path. */

/* The same, but TCP connect is left alone (the front's egress proxy dials
 * the hosts a profile allows; the front binds nothing). */
int landlock_apply_connect_any(const struct landlock_path *paths, size_t n);

#endif
