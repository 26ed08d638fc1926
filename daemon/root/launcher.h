/*
 * launcher.h - the root half of sharnessd.  It never parses HTTP, TLS or JSON
 * from the network: it reads fixed privsep messages from the front,
 * re-validates every field, and hands each run to a supervisor of its own,
 * one prepared ahead of time (config `prewarm`) or forked on the spot.
 *
 * Trust: privileged; every message from the front is hostile.
 */
#ifndef SHARNESS_LAUNCHER_H
#define SHARNESS_LAUNCHER_H

#include <stdbool.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdnoreturn.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "config.h"
#include "privsep.h"
#include "profile.h"

struct uidpool;

struct launcher {
	const struct config *cfg;
	const struct profile_set *profiles;
	struct sock_fprog seccomp;     /* the run filter, compiled once at start */
	char newroot[4096];            /* mount point the sandboxes build on */
	struct uidpool *uids;
	uid_t front_uid;               /* a run channel's peer must have it (check_chan) */
	int actor_exe;                 /* sharness-actor, opened at start (root/actor.c) */
	struct stat workspace_st[CONFIG_WORKSPACES_MAX]; /* each as opened at start (start/main.c) */
	struct stat git_dir_st[CONFIG_WORKSPACES_MAX];   /* cfg->git_dirs[i], the same */
	int nice;                      /* the launcher's niceness: what every run gets */
	bool ahead_low;                /* build ahead at LAUNCHER_AHEAD_NICE: CAP_SYS_NICE sets it back */
};

/* Serve the front on `ctl` until SIGTERM/SIGINT or the front's death.
 * Returns the process exit code. */
int launcher_serve(struct launcher *l, int ctl, pid_t front_pid);

/* The niceness a sandbox prepared ahead of its request is built at: the
 * lowest, so that building it never slows a run that is going on now.
 * Setting it back needs CAP_SYS_NICE (the unit grants it); without, the
 * sandboxes are built at the launcher's own niceness, as runs are. */
#define LAUNCHER_AHEAD_NICE 19

/* When a request takes a sandbox built ahead, its replacement is built
 * when that run ends, or LAUNCHER_REFILL_MS after it began if it is still
 * going: a short command has the CPUs to itself (a build beside it made
 * `true` 30 % slower on two CPUs, docs/bench.md), and a long one does not
 * leave the next request without a sandbox. */
#define LAUNCHER_REFILL_MS 100

/* The life of one run (supervise.c), in a child of the launcher: prepare a
 * sandbox for (profile, workspace) as `uid`, then take one request (a
 * PRIVSEP_RUN with its run channel and payload fds) from `job_sock`.
 * `ahead`: no request waits for this sandbox yet and l->ahead_low; the
 * supervisor leads a process group of its own at LAUNCHER_AHEAD_NICE, and
 * the whole group is set back to the launcher's niceness when the request
 * comes. */
noreturn void supervise_run(const struct launcher *l, uint32_t profile_id, uint32_t workspace_id, uid_t uid,
                            int job_sock, bool ahead);

#endif
