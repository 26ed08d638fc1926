/*
 * execute.h - the front's side of one run: hand the validated request to the
 * launcher, feed the command's stdin, read stdout and stderr through the
 * secret filter into bounded captures, and collect the exit record.
 *
 * Trust: unprivileged.  Output bytes are hostile; every buffer is bounded by
 * the profile's output cap.
 */
#ifndef SHARNESS_EXECUTE_H
#define SHARNESS_EXECUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "denials.h"
#include "privsep.h"
#include "request.h"

struct scrub_rules;

struct run_result {
	int exit_code;          /* -1 when killed by a signal */
	int signal;
	bool timed_out;
	uint64_t ms;
	unsigned long filtered;
	bool truncated;
	bool utf8_replaced;
	bool cleanup_failed;
	bool disk_limited;      /* killed at a limits.disk_* bound; `message` says which */
	char message[256];
	struct privsep_usage usage; /* what the run cost (privsep.h) */
	int chan;               /* the run channel, left open (-1: none): EOF once the
	                         * supervisor has torn the run down; the caller closes it */
	uid_t uid;
	char *out, *err;        /* valid UTF-8, NUL-terminated */
	struct run_denials denials; /* what the locks refused (denials.c) */
};

/* What a run needs from the front (borrowed). */
struct execute_env {
	int ctl;                          /* control socket to the launcher */
	const struct scrub_rules *scrub;
	int audit_fd;                     /* for the egress proxy's decisions */
	const char *daemon_host;          /* the proxy never dials the daemon itself */
	unsigned daemon_port;
	/* A streamed run: each piece of filtered output as it arrives (which:
	 * 0 stdout, 1 stderr), from the run's thread; NULL for a plain run. */
	void (*output)(void *arg, int which, const char *buf, size_t len);
	void *output_arg;
};

/* Run `r` through the launcher.  `client_fd` is watched for a hang-up, which
 * aborts the run.  Proxy profiles get their egress proxy served here for
 * the run's lifetime.  Returns 0 with `res` filled (whatever the command's
 * exit), or -1 with `e` filled. */
int execute_run(const struct execute_env *env, const struct run_request *r, const char *run_id,
                int client_fd, struct run_result *res, struct request_error *e);
void execute_result_free(struct run_result *res);

#endif
