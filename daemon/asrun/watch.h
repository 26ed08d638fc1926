/*
 * watch.h - a run's life after its supervisor dropped to the run's uid
 * (watch.c): the job, the timeout, the disk, the seccomp notifications,
 * the end and the exit record.
 *
 * Trust: runs as the run's uid; root/supervise.c built everything here.
 */
#ifndef SHARNESS_WATCH_H
#define SHARNESS_WATCH_H

#include <stddef.h>
#include <stdnoreturn.h>
#include <sys/types.h>
#include <time.h>

#include "config.h"
#include "privsep.h"
#include "profile.h"

struct sandbox_ready;

/* A file system a run may write to, and its O_PATH descriptor (opened by
 * root: the run's uid may not reach the path). */
struct watch_disk {
	const char *path;
	int fd;
};

struct watch {
	const struct config *cfg;
	const struct profile *p;
	const char *workspace;
	const struct privsep_run *req;
	uid_t uid;
	int chan;                   /* to the front */
	int sfd;                    /* SIGTERM, a signalfd: the daemon stops */
	struct timespec t0;         /* the request's arrival: the timeout counts from here */
	struct sandbox_ready *sb;   /* the sandbox, waiting for its job */
	const char *cwd, *cmd, *env; /* the request, checked by root (check.c, job.h) */
	size_t n_disk;
	struct watch_disk disk[1 + PROFILE_LIST_MAX];
};

/* Send the job, hand the run's pipes to the front, watch the run until it
 * ends, stop what is left, send the exit record and exit: 0 when nothing of
 * the run lives on (the launcher then removes its cgroup), 3 otherwise. */
noreturn void watch_run(struct watch *w);

#endif
