/*
 * ns.h - namespace helpers: the user namespace that carries the workspace's
 * id mapping, and bringing up loopback in the run's network namespace.
 *
 * Trust: privileged (supervisor and sandbox child).
 */
#ifndef SHARNESS_NS_H
#define SHARNESS_NS_H

#include <sys/types.h>

/* The clone flags of the sandbox child: everything but the user namespace
 * (the run's uid is a real, unmapped host uid) and the cgroup namespace
 * (entered after the supervisor attached the child to its cgroup). */
#define NS_SANDBOX_FLAGS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET)

/* A user namespace fd whose map shows on-disk owner `owner_uid`/`owner_gid`
 * as the run's `run_uid`: used with MOUNT_ATTR_IDMAP so the run owns the
 * workspace files and what it creates lands owned by the owner.  -1 on error. */
int ns_idmap_userns(uid_t owner_uid, gid_t owner_gid, uid_t run_uid);

/* Set IFF_UP on "lo" in the current network namespace. */
int ns_loopback_up(void);

#endif
