/*
 * cgsetup.h - the cgroup side of start-up (cgsetup.c): which layout this
 * system has, the delegated subtree the runs go to, the crash recovery of a
 * predecessor's run cgroups, and the doctor's probe.  What it finds is the
 * state root/runcg.c reads for each run (runcg_layout.h).
 *
 * Trust: privileged, at start, before anything is forked.
 */
#ifndef SHARNESS_CGSETUP_H
#define SHARNESS_CGSETUP_H

#include <stdbool.h>
#include <stddef.h>

/* Detect the hierarchy, create the daemon's parent cgroup ("sharness") and,
 * on pure v2, move the daemon into a leaf so runs may be siblings.  Fails
 * (naming what is missing) when the pids controller is unusable. */
int runcg_init(char *err, size_t errlen);
/* runcg_init with another parent name (tests, a second daemon) and, with
 * legacy_only, the unified mount of a hybrid box ignored (pure v1 behaviour:
 * freezer + kill loop instead of cgroup.kill).  May be called again to
 * switch; call it before forking anything that must stay out of the runs. */
int runcg_init_named(const char *parent, bool legacy_only, char *err, size_t errlen);
/* The daemon's parent cgroup name, "sharness-<uid_range first>": two daemons
 * with different ranges never clean up each other's runs.  Start-up and the
 * doctor's probe both name it so. */
void runcg_parent_name(char *out, size_t outlen, unsigned uid_first);
/* Pure v2 delegation step, exposed for tests: move the calling process into
 * <dir>/daemon, then enable `controllers` ("pids memory") in the
 * subtree_control of dir and of a new <dir>/runs.  dir is an absolute path. */
int runcg_v2_delegate(const char *dir, const char *controllers, char *err, size_t errlen);

/* Pure v2 under systemd in a cgroup systemd has not delegated to us (a
 * root login shell's session scope): main.c then restarts the daemon in
 * a transient scope with Delegate=yes. */
bool runcg_wants_scope(void);
/* The directory the run cgroups live in (absolute), for the state record. */
int runcg_runs_dir(char *out, size_t outlen);
/* Kill and remove the run cgroups below `dir`, the runs directory an earlier
 * daemon of this state_dir recorded, when it is not ours (v2 only).
 * Returns the number removed, -1 on error. */
int runcg_cleanup_previous(const char *dir, char *err, size_t errlen);

/* The fix that is true here when the pids controller is missing: a
 * cgroup_disable=pids boot parameter, a kernel without it, or delegation. */
const char *runcg_pids_fix(void);

const char *runcg_version(void);   /* "v1", "hybrid" or "v2" */
bool runcg_has_memory(void);

/* Kill and remove every run cgroup a crashed predecessor left.
 * Returns the number removed, -1 on error. */
int runcg_cleanup_stale(char *err, size_t errlen);
/* At a clean stop, after runcg_cleanup_stale: remove the parent cgroups
 * start-up made, where they are empty (not a delegated systemd cgroup:
 * systemd removes that).  Each test daemon takes its own uid range, so
 * without this every one of them left a sharness-<uid> behind. */
void runcg_remove_parent(void);

/* Read-only probe for `sharnessd --doctor`: what runcg_init_named would find,
 * without cgroup_init, mkdir, moves or writes.  Fills `p`; never fails (an
 * empty layout means no pids controller is mounted). */
struct runcg_probe {
	char layout[8];      /* "v1", "hybrid", "v2"; "" without a pids controller */
	bool pids, memory;   /* the controllers the runs would get */
	bool systemd;        /* systemd is PID 1 */
	bool at_root;        /* v2: a subtree of our own at the root (no systemd) */
	bool delegated;      /* v2 under systemd: our cgroup is delegated */
	bool writable;       /* base accepts a new cgroup (access W_OK) */
	int write_errno;     /* why not, when it does not */
	char base[4096];     /* where the "sharness-<first>" parent would be made */
	/* The longest directory a run's cgroup would be made in, "" where only
	 * start-up can know (a transient scope systemd-run makes); runs_dir_fits
	 * is the check start-up makes of it (a run's name must fit below it). */
	char runs_dir[8192];
	bool runs_dir_fits;
};
/* parent: the name start-up gives its cgroup (runcg_parent_name). */
void runcg_probe(struct runcg_probe *p, const char *parent);

#endif
