/*
 * notify.h - the supervisor's answers to a run's seccomp notifications
 * (umask, connect and the writes; notify.c says why each is answered here).
 *
 * Trust: runs as the run's uid (the supervisor after its drop).
 */
#ifndef SHARNESS_NOTIFY_H
#define SHARNESS_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "actor.h"
#include "privsep.h"

struct notify_run {
	uid_t uid;          /* the run's uid: the only listener it may connect to */
	uint16_t tcp_port;  /* the proxy's port, 0 when the profile has no network */
	struct actor actor; /* the run's file actor (actor.c): its writes and unix connects */
	int actor_err;      /* why the actor did not start with the sandbox, when actor.pid is 0 */
	unsigned actor_busy; /* requests handed to the actor and not yet answered in full */
	unsigned n_denied;  /* calls refused so far (connects, .git, modes) */
	char denied[PRIVSEP_DENIAL_DETAIL]; /* the last of them, for the reply's detail */
	uint32_t denied_kind; /* its enum privsep_denial_kind, for the log (no path: the reply's copy is filtered) */
	struct privsep_denial first[PRIVSEP_DENIALS_MAX]; /* for the reply */
	unsigned n_first;
};

/* Answer one pending notification on `listener`, or hand it to the actor
 * (its answer comes back on run->actor.sock: notify_actor_answer).  0, or
 * -1 when nothing could be read (the listener is dead: every process of the
 * run is gone). */
int notify_answer(int listener, struct notify_run *run);

/* Pass on one answer of the actor.  -1 when the actor is gone. */
int notify_actor_answer(int listener, struct notify_run *run);

/* Stop the actor, if one was started and is still at work: kill it and
 * wait for it.  An idle one is left for notify_reap (notify.c says why). */
void notify_stop(struct notify_run *run);

/* Kill the actor, if notify_stop has not, and reap it: once the reply is
 * sent, and at once when the actor failed. */
void notify_reap(struct notify_run *run);

#endif
