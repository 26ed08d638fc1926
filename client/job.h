/*
 * job.h - `sharness-client job status|output|kill|list` (`job start` is
 * `run` posting to /v0/jobs, main.c): the daemon's jobs API, SPEC §15.3.
 */
#ifndef SHARNESS_CLIENT_JOB_H
#define SHARNESS_CLIENT_JOB_H

#include <stdbool.h>

#include "conf.h"

struct job_args {
	const char *sub;     /* status, output, kill, list */
	const char *id;      /* NULL for list */
	const char *stream;  /* output: stdout (default) or stderr */
	long long since;     /* output: first byte offset */
	bool follow;         /* output -f: until the job ends */
	bool json;
};

/* Exit code: 0, the job's own (output -f), 125 on a failure, 2 usage. */
int job_main(const struct conf *c, const struct job_args *a);

#endif
