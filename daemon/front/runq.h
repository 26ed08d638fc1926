/*
 * runq.h - the run slots and their FIFO queue (SPEC §15.3 "No surprise 503").
 *
 * At most max_runs runs hold a slot.  A request past that waits in arrival
 * order, at most queue_max of them, each up to its own deadline (a timer of
 * the front's loop); a freed slot is handed straight to the oldest waiter
 * (the count never drops and rises again), so a later request never
 * overtakes an earlier one.  The hand-over is a zero timer: the waiter's
 * callback runs at the loop's next turn, never inside the caller of
 * runq_release.  A waiter whose client hangs up leaves with runq_cancel.
 *
 * Trust: front only; everything runs on the front's loop thread.
 */
#ifndef SHARNESS_RUNQ_H
#define SHARNESS_RUNQ_H

#include <stdbool.h>

#include "loop.h"

struct runq;

enum runq_result {
	RUNQ_OK = 0,      /* the caller holds a slot: runq_release it */
	RUNQ_FULL = -1,   /* every slot busy and queue_max requests waiting already */
	RUNQ_TIMEOUT = -2,/* no slot came within the wait */
	RUNQ_WAITING = 1, /* queued: the callback comes with RUNQ_OK or RUNQ_TIMEOUT */
};

/* One queued request (the caller's memory, until its callback or cancel). */
struct runq_waiter {
	struct runq *q;
	struct runq_waiter *prev, *next;
	struct loop_timer timer;   /* the deadline, then the hand-over */
	bool queued, granted;
	void (*cb)(void *arg, enum runq_result r);
	void *arg;
};

/* max_runs >= 1; queue_max 0 means no queue (past max_runs: RUNQ_FULL). */
struct runq *runq_new(struct loop *l, unsigned max_runs, unsigned queue_max);
void runq_free(struct runq *q);

/* Take a slot now (RUNQ_OK), or queue `w` for up to wait_ms (RUNQ_WAITING:
 * `cb` follows, once), or RUNQ_FULL.  *ahead, when not NULL, gets how many
 * requests were queued ahead of this one on arrival (for the log). */
enum runq_result runq_take(struct runq *q, struct runq_waiter *w, unsigned wait_ms,
                           void (*cb)(void *arg, enum runq_result r), void *arg, unsigned *ahead);
/* A queued waiter leaves before its callback (its client went away); a
 * slot already handed to it goes on to the next. */
void runq_cancel(struct runq *q, struct runq_waiter *w);
/* Give the slot back: to the oldest waiter, or to the pool. */
void runq_release(struct runq *q);
/* Whether a request arriving now would get RUNQ_FULL (the approval path asks
 * before it bothers a person). */
bool runq_full(const struct runq *q);

#endif
