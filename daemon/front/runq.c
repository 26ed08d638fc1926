/*
 * runq.c - see runq.h.
 */
#include "runq.h"

#include <stdlib.h>

struct runq {
	struct loop *loop;
	unsigned max_runs, queue_max;
	unsigned running;     /* slots held, handed-over ones included */
	unsigned waiting;
	struct runq_waiter *head, *tail;
};

struct runq *runq_new(struct loop *l, unsigned max_runs, unsigned queue_max)
{
	struct runq *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->loop = l;
	q->max_runs = max_runs ? max_runs : 1;
	q->queue_max = queue_max;
	return q;
}

void runq_free(struct runq *q)
{
	free(q);
}

static void unlink_waiter(struct runq *q, struct runq_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		q->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		q->tail = w->prev;
	w->prev = w->next = NULL;
	w->queued = false;
	q->waiting--;
}

bool runq_full(const struct runq *q)
{
	return q->running >= q->max_runs && q->waiting >= q->queue_max;
}

/* The deadline, or the hand-over's zero timer: `granted` says which. */
static void on_timer(struct loop_timer *t)
{
	struct runq_waiter *w = t->arg;
	if (w->queued)
		unlink_waiter(w->q, w); /* the deadline: it leaves the queue */
	bool granted = w->granted;
	w->granted = false; /* the caller holds the slot now */
	w->cb(w->arg, granted ? RUNQ_OK : RUNQ_TIMEOUT);
}

enum runq_result runq_take(struct runq *q, struct runq_waiter *w, unsigned wait_ms,
                           void (*cb)(void *arg, enum runq_result r), void *arg, unsigned *ahead)
{
	if (ahead)
		*ahead = q->waiting;
	/* A free slot goes to whoever asks only when nobody waits: otherwise
	 * release has already handed it to the head of the queue. */
	if (q->running < q->max_runs && !q->head) {
		q->running++;
		return RUNQ_OK;
	}
	if (q->waiting >= q->queue_max || wait_ms == 0)
		return RUNQ_FULL;
	*w = (struct runq_waiter){.q = q, .queued = true, .cb = cb, .arg = arg, .prev = q->tail};
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
	q->waiting++;
	loop_timer_set(q->loop, &w->timer, wait_ms, on_timer, w);
	return RUNQ_WAITING;
}

void runq_cancel(struct runq *q, struct runq_waiter *w)
{
	loop_timer_cancel(q->loop, &w->timer);
	if (w->queued)
		unlink_waiter(q, w);
	if (w->granted) {
		w->granted = false;
		runq_release(q); /* to the next in line */
	}
}

void runq_release(struct runq *q)
{
	struct runq_waiter *w = q->head;
	if (w) {
		/* The slot changes hands without ever being free; the waiter
		 * hears of it at the loop's next turn. */
		unlink_waiter(q, w);
		w->granted = true;
		loop_timer_set(q->loop, &w->timer, 0, on_timer, w);
	} else if (q->running > 0) {
		q->running--;
	}
}
