/*
 * mount.h - the run's file system view, built in its private mount namespace:
 * a read-only tmpfs root holding read-only binds of the system directories,
 * the idmapped workspace (read-only or read-write, never executable), private
 * /tmp, /dev, /dev/shm, a fresh /proc, and nothing else: /home, /root, /run,
 * /var/run and /sys simply do not exist.
 *
 * Trust: privileged, in the sandbox child before the privilege drop.
 */
#ifndef SHARNESS_MOUNT_H
#define SHARNESS_MOUNT_H

#include "sandbox.h"

/* Build the view and pivot into it.  Returns 0 or -1 with errno set. */
int mount_build(const struct sandbox_spec *s);

/* An O_PATH fd for `rel` resolved beneath `dirfd` (never above it, no magic
 * links; `resolve` adds RESOLVE_* flags such as RESOLVE_NO_SYMLINKS or
 * RESOLVE_NO_XDEV).  -1 with errno (ELOOP, EXDEV, ENOENT, ...). */
int mount_open_beneath(int dirfd, const char *rel, unsigned resolve);

/* An O_PATH fd of the directory at absolute `path`, reached with no symlink
 * on the way, and (unless `want` is NULL) only if it is the directory
 * `want` describes (device and inode); -1 otherwise (ESTALE: another). */
int mount_open_workspace(const char *path, const struct stat *want);

#endif
