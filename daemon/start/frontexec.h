/*
 * frontexec.h - start the front: fork, drop to its uid, exec sharnessd-front
 * with the descriptors of handover.h.
 *
 * Trust: runs as root at start-up; the child holds no privilege by the time
 * it executes anything of the front's.
 */
#ifndef SHARNESS_FRONTEXEC_H
#define SHARNESS_FRONTEXEC_H

#include <stddef.h>
#include <sys/types.h>

/* What the front gets, by the numbers of handover.h (-1: none). */
struct frontexec_fds {
	int ctl, ready, listen, audit, doc, tls_key, secrets;
};

/* Open our executable `name` (sharnessd-front, sharness-actor: beside our
 * own, or in ../libexec/sharness) for an exec, after checking it is as
 * trusted as we are.  Its path goes to `path`.  The descriptor, or -1
 * with err set. */
int frontexec_open(const char *name, char *path, size_t len, char *err, size_t errlen);

/* Fork; the child places the descriptors, drops to `uid` (no capability,
 * no_new_privs, the parent-death signal) and execs `exe_fd`.  The child's
 * pid, or -1 (errno).  A child that cannot do all of that exits 126/127. */
pid_t frontexec_spawn(int exe_fd, const struct frontexec_fds *fds, uid_t uid);

#endif
