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

struct loop;

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
	uid_t uid;
	char *out, *err;        /* valid UTF-8, NUL-terminated */
	struct run_denials denials; /* what the locks refused (denials.c) */
};

/* What a run needs from the front (borrowed). */
struct execute_env {
	struct loop *loop;                /* the front's: every descriptor of the run lives in it */
	int ctl;                          /* control socket to the launcher */
	const struct scrub_rules *scrub;
	int audit_fd;                     /* for the egress proxy's decisions */
	const char *daemon_host;          /* the proxy never dials the daemon itself */
	unsigned daemon_port;
};

/* What the run tells its owner, on the loop's thread, never from inside
 * execute_start or execute_abort. */
struct execute_hooks {
	/* Each piece of filtered output as it arrives (which: 0 stdout, 1
	 * stderr); NULL: only the captures of the reply. */
	void (*output)(void *arg, int which, const char *buf, size_t len);
	/* The run ended, once: rc 0 with `res` filled (whatever the command's
	 * exit; the owner frees it with execute_result_free), or -1 with `e`. */
	void (*finished)(void *arg, int rc, struct run_result *res, const struct request_error *e);
	/* Once, after `finished` (or execute_abort, without `finished`): the
	 * run's supervisor has torn it down (its
	 * channel's EOF, bounded: a stuck teardown is the launcher's to report),
	 * so the run's slot may go back - the launcher counts a run until then. */
	void (*released)(void *arg);
	void *arg;
};

struct execute;

/* Hand `r` to the launcher and serve the run from the loop: stdin fed, the
 * pipes read through the filter into the captures, the proxy's door (proxy
 * profiles) accepted, the exit record read.  `env` is copied; `r` and
 * `run_id` must outlive `finished`.  NULL with `e` filled when it could
 * not start (no hook is called then). */
struct execute *execute_start(const struct execute_env *env, const struct run_request *r, const char *run_id,
                              const struct execute_hooks *hooks, struct request_error *e);
/* The owner is gone (its client hung up, or DELETE came before the
 * command started): our side of the run's channel is shut, which tells
 * the supervisor to kill the run.  `finished` is not
 * called; `released` is, once the supervisor is gone (the slot is the
 * run's until then).  Only before `finished`. */
void execute_abort(struct execute *x);
/* Kill a running command and follow it to its end (DELETE of a job):
 * `finished` comes as for any run, with what the command wrote up to the
 * kill and the supervisor's exit record (signal KILL, usage).  0, or -1 when
 * the command has not started (STARTED not in yet): then abort instead.
 * Only before `finished`; a second call changes nothing. */
int execute_kill(struct execute *x);
/* Stop (pause) or go on reading the command's output: a stream's reader
 * is behind (live.h).  Only before `finished`. */
void execute_pause(struct execute *x, bool pause);
void execute_result_free(struct run_result *res);

#endif
