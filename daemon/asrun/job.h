/*
 * job.h - the one job a sandbox's init runs, built by its supervisor after
 * the drop to the run's uid (job.c).
 */
#ifndef SHARNESS_JOB_H
#define SHARNESS_JOB_H

#include <stddef.h>

#include "privsep.h"
#include "profile.h"

/* The job's wire form (struct sandbox_job, then cwd, cmd and the
 * environment) for a request root checked (root/check.c): `cwd` resolved,
 * `cmd`, and `env` the request's env_count "NAME=VALUE\0" entries.  NULL
 * when out of memory; free() it. */
char *job_build(const struct profile *p, const struct privsep_run *req, const char *cwd, const char *cmd,
                const char *env, size_t *len);

#endif
