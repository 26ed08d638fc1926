/*
 * landlock.h - the run's Landlock ruleset (SPEC §6): every access right the
 * running kernel's ABI knows is handled; only the listed paths are granted.
 *
 * Trust: runs in the sandbox child (after the mount namespace is built, before
 * seccomp and execve).
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

/* The kernel's Landlock ABI version, or -1 (errno) when unavailable. */
int landlock_abi(void);

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

#endif
