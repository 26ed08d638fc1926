/*
 * supervise.h - a run's sandbox as its supervisor built it (supervise.c,
 * as root), for the half that watches the run as the run's uid
 * (asrun/watch.c) once the supervisor has dropped to it.
 *
 * Trust: the supervisor's own state; nothing here comes from the run.
 */
#ifndef SHARNESS_SUPERVISE_H
#define SHARNESS_SUPERVISE_H

#include <stddef.h>
#include <sys/types.h>

#include "actor.h"
#include "sandbox.h"

struct run_cgroup;

/* What prepare() builds ahead of a request. */
struct sandbox_ready {
	struct run_cgroup *cg;
	pid_t init;
	int out_r, err_r, in_w;  /* the command's pipes, our ends */
	int status_r;            /* struct sandbox_status from the init */
	int sync_w;              /* held open while we live: the init watches it */
	int job_w;               /* the job goes here */
	int listener;            /* proxy profiles: 127.0.0.1:PROXY_PORT in the run's netns */
	int notify;              /* the run's seccomp listener (umask), taken from the init */
	struct actor actor;      /* the run's file actor, started ahead with the sandbox */
	int actor_err;           /* why it did not start (errno), when actor.pid is 0 */
	char error[200];         /* set when preparing failed */
	char view[512];          /* what the view was built from (view_facts) */
};

#define SANDBOX_NONE                                                                                    \
	((struct sandbox_ready){.out_r = -1, .err_r = -1, .in_w = -1, .status_r = -1, .sync_w = -1, .job_w = -1, \
	                        .listener = -1, .notify = -1, .init = -1})

/* Kill every process of the run: the cgroup's kill, then the init. */
void supervise_kill(struct sandbox_ready *sb);

/* Kill the run and reap its init, waiting at most `ms`: the init's end
 * waits for every process of its pid namespace, and one the kernel holds
 * in an uninterruptible wait (direct I/O, a slow disk, NFS) holds it.
 * true once reaped. */
bool supervise_end_init(struct sandbox_ready *sb, int ms);

/* Kill what is left, reap the init and the actor, close our ends and wait
 * until the cgroup is empty.  0 once nothing of the run lives on. */
int supervise_stop(struct sandbox_ready *sb);

/* "The sandbox could not be built: STEP failed (SYSCALL PATH): ERRNO." */
void supervise_failure(char *out, size_t len, struct sandbox_status *sst);

#endif
