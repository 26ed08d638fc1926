/*
 * keepout.h - the daemon's own secrets are never inside a workspace (SPEC
 * §15.2): a writable run could read them, or an analyse run copy them out
 * (the filter knows the TLS key, not the CA key).  Checked at start-up and by
 * --check-config.
 *
 * Trust: the configuration is the operator's; paths are resolved with
 * realpath (symlinks followed), a file not yet made through its directory.
 */
#ifndef SHARNESS_KEEPOUT_H
#define SHARNESS_KEEPOUT_H

#include <stddef.h>

#include "config.h"
#include "profile.h"

/* 0 when tls.key, the CA key of certs/mkcerts (ca.key next to tls.ca, if it
 * exists), secrets_file, audit_log (unless "-") and state_dir all lie outside
 * every workspace, and no workspace is or holds the home directory of root
 * or a user from uid 1000; else -1 with one sentence in err naming the
 * file, the workspace and the fix. */
int keepout_check(const struct config *c, char *err, size_t errlen);

/* 0 when no profile's read_paths, write_paths or exec_paths entry lies in
 * or above a workspace or strictly inside any profile's write_paths entry,
 * as written or resolved, no write_paths entry lies in a .git, a git
 * directory or an AI agent's project configuration (guardnames.h), and
 * each one resolves (a missing tail is fine); else -1 with one sentence in
 * err.  Root places those paths while it
 * builds a sandbox, following symlinks, and a run may make any part of what
 * it can write a symlink to anywhere; one above a workspace would hide the
 * workspace's own mount. */
int keepout_profiles(const struct config *c, const struct profile_set *ps, char *err, size_t errlen);

/* 0 when root may bind workspace i's shared git directory (c->git_dirs[i],
 * or none) into the runs' view; else -1 with one sentence in err: it lies
 * inside a profile's write_paths entry (a run there could swap a directory
 * on the way for a symlink while root places the bind) or inside the state
 * dir.  The caller leaves it out, so the actor refuses that tree's writes. */
int keepout_git_dir(const struct config *c, const struct profile_set *ps, size_t i, char *err, size_t errlen);

#endif
