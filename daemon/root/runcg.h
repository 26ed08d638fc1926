/*
 * runcg.h - one cgroup per run: pids and memory limits, kill of
 * every process of the run, removal afterwards.  cgroup v1, hybrid (limits on
 * v1, tracking and cgroup.kill on the controller-less v2 mount) and pure v2
 * (under systemd with Delegate=yes) are all supported; start/cgsetup.h finds
 * which, at start.
 *
 * Trust: privileged (launcher only).  Names come from the launcher, never from
 * the network.
 */
#ifndef SHARNESS_RUNCG_H
#define SHARNESS_RUNCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct run_cgroup;

/* A fresh cgroup named `name` (e.g. "run-<id>") with pids.max and, when the
 * controller exists and memory_max > 0, the memory limit. */
struct run_cgroup *runcg_create(const char *name, unsigned pids_max, uint64_t memory_max,
                                char *err, size_t errlen);
int runcg_attach(struct run_cgroup *cg, pid_t pid);
/* SIGKILL every process in the run (atomic cgroup.kill where available). */
int runcg_kill(struct run_cgroup *cg);
/* 0 once no process is left, -1 with errno ETIMEDOUT after timeout_ms. */
int runcg_wait_empty(struct run_cgroup *cg, int timeout_ms);
/* Remove the (empty) cgroup and free cg; -1 (cg still freed) if it could not be removed. */
int runcg_destroy(struct run_cgroup *cg);

/* Free cg and close its files, leaving the cgroup in place: the launcher
 * removes it by name once the run's supervisor has exited (runcg_remove). */
void runcg_release(struct run_cgroup *cg);

/* Remove the empty run cgroup `name` (runcg_create's), as runcg_destroy. */
int runcg_remove(const char *name);

#endif
