/*
 * runq.h - the run slots and their FIFO queue (SPEC §15.3 "No surprise 503").
 *
 * At most max_runs runs hold a slot.  A request past that waits in arrival
 * order, at most queue_max of them, each up to its own deadline; a freed
 * slot is handed straight to the oldest waiter (the count never drops and
 * rises again), so a later request never overtakes an earlier one.  Each
 * waiter sleeps in poll(2) on an eventfd of its own and on its client's
 * socket: a hand-over wakes exactly it, and a client that hangs up leaves
 * the queue at once.  No polling loop.
 *
 * Trust: front only; the callers are the connection threads.
 */
#ifndef SHARNESS_RUNQ_H
#define SHARNESS_RUNQ_H

#include <stdbool.h>

struct runq;

enum runq_result {
	RUNQ_OK = 0,      /* the caller holds a slot: runq_release it */
	RUNQ_FULL = -1,   /* every slot busy and queue_max requests waiting already */
	RUNQ_TIMEOUT = -2,/* no slot came within the wait */
	RUNQ_GONE = -3,   /* the client hung up while waiting (no slot held) */
	RUNQ_ERROR = -4,  /* no eventfd (errno) */
};

/* max_runs >= 1; queue_max 0 means no queue (past max_runs: RUNQ_FULL). */
struct runq *runq_new(unsigned max_runs, unsigned queue_max);
void runq_free(struct runq *q);

/* Take a slot, waiting up to wait_ms in FIFO order.  client_fd (may be -1)
 * is watched for a hang-up.  *ahead, when not NULL, gets how many requests
 * were queued ahead of this one on arrival (for the log). */
enum runq_result runq_take(struct runq *q, int client_fd, unsigned wait_ms, unsigned *ahead);
/* Give the slot back: to the oldest waiter, or to the pool. */
void runq_release(struct runq *q);
/* Whether a request arriving now would get RUNQ_FULL (the approval path asks
 * before it bothers a person). */
bool runq_full(struct runq *q);

#endif
