/*
 * denials.h - what the locks refused during a run, named, with what would
 * work instead: the reply's `denials` (SPEC §15.3, issue 14).
 *
 * Trust: front (unprivileged); the supervisor's part arrives in the exit
 * record and is bounded there.
 */
#ifndef SHARNESS_DENIALS_H
#define SHARNESS_DENIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "privsep.h"
#include "profile.h"
#include "proxy.h"

struct scrub_rules;

#define RUN_DENIALS_MAX 12
#define RUN_PROXY_DENIALS_MAX 4

struct run_denial {
	const char *lock;   /* "timeout", "output", "pids", "memory", "disk", "proxy", "network",
	                     * "unix-socket", "git", "mode", "read-only", "noexec", "daemon" */
	char detail[240];   /* what happened */
	char hint[240];     /* what would work instead */
	bool inferred;      /* read from the command's output, not known by a lock */
};

struct run_denials {
	struct run_denial v[RUN_DENIALS_MAX];
	size_t n;
	unsigned long filtered; /* secrets the filter replaced in the details */
};

/* What the run tells about itself, for denials_collect. */
struct denial_facts {
	const struct profile *profile;
	unsigned timeout_s;
	bool timed_out, truncated, disk_limited;
	const char *disk_message;
	int exit_code;                    /* -1 when killed by a signal */
	bool have_oom, oom_killed, have_pids_limited, pids_limited;
	const struct privsep_exit *ex;    /* the supervisor's refusals */
	const char (*proxy)[PROXY_DENIAL_DETAIL]; /* the proxy's refusals */
	size_t n_proxy;
	const char *stderr_text, *stdout_text; /* filtered, for what can only be inferred */
	const struct scrub_rules *scrub;       /* for what the run chose: paths, hosts */
};

void denials_collect(struct run_denials *d, const struct denial_facts *f);

#endif
