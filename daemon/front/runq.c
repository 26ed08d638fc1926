/*
 * runq.c - see runq.h.
 */
#include "runq.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct waiter {
	int efd;              /* written once, by runq_release, under the lock */
	bool granted;         /* the slot is ours: set under the lock */
	struct waiter *next;
};

struct runq {
	pthread_mutex_t mu;
	unsigned max_runs, queue_max;
	unsigned running;     /* slots held, handed-over ones included */
	unsigned waiting;
	struct waiter *head, *tail;
};

struct runq *runq_new(unsigned max_runs, unsigned queue_max)
{
	struct runq *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_mutex_init(&q->mu, NULL);
	q->max_runs = max_runs ? max_runs : 1;
	q->queue_max = queue_max;
	return q;
}

void runq_free(struct runq *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Under the lock. */
static void unlink_waiter(struct runq *q, struct waiter *w)
{
	struct waiter **pp = &q->head, *prev = NULL;
	for (; *pp; prev = *pp, pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			if (q->tail == w)
				q->tail = prev;
			q->waiting--;
			return;
		}
}

bool runq_full(struct runq *q)
{
	pthread_mutex_lock(&q->mu);
	bool full = q->running >= q->max_runs && q->waiting >= q->queue_max;
	pthread_mutex_unlock(&q->mu);
	return full;
}

enum runq_result runq_take(struct runq *q, int client_fd, unsigned wait_ms, unsigned *ahead)
{
	struct waiter w = {.efd = -1};
	enum runq_result rc;

	if (ahead)
		*ahead = 0;
	pthread_mutex_lock(&q->mu);
	/* A free slot goes to whoever asks only when nobody waits: otherwise
	 * release has already handed it to the head of the queue. */
	if (q->running < q->max_runs && !q->head) {
		q->running++;
		pthread_mutex_unlock(&q->mu);
		return RUNQ_OK;
	}
	if (q->waiting >= q->queue_max || wait_ms == 0) {
		pthread_mutex_unlock(&q->mu);
		return RUNQ_FULL;
	}
	w.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w.efd < 0) {
		pthread_mutex_unlock(&q->mu);
		return RUNQ_ERROR;
	}
	if (ahead)
		*ahead = q->waiting;
	if (q->tail)
		q->tail->next = &w;
	else
		q->head = &w;
	q->tail = &w;
	q->waiting++;
	pthread_mutex_unlock(&q->mu);

	uint64_t deadline = now_ms() + wait_ms;
	rc = RUNQ_TIMEOUT;
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline)
			break;
		struct pollfd p[2] = {{.fd = w.efd, .events = POLLIN}, {.fd = client_fd, .events = POLLRDHUP}};
		int n = poll(p, 2, (int)(deadline - now));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (p[0].revents & POLLIN) {
			rc = RUNQ_OK;
			break;
		}
		if (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			rc = RUNQ_GONE;
			break;
		}
	}
	pthread_mutex_lock(&q->mu);
	/* The verdict is `granted`, read under the lock: a hand-over may have
	 * come between poll's return and here. */
	bool granted = w.granted;
	if (!granted)
		unlink_waiter(q, &w);
	pthread_mutex_unlock(&q->mu);
	close(w.efd);
	if (granted && rc == RUNQ_GONE) {
		runq_release(q); /* to the next in line */
		return RUNQ_GONE;
	}
	return granted ? RUNQ_OK : rc == RUNQ_OK ? RUNQ_TIMEOUT : rc;
}

void runq_release(struct runq *q)
{
	pthread_mutex_lock(&q->mu);
	struct waiter *w = q->head;
	if (w) {
		/* The slot changes hands without ever being free. */
		q->head = w->next;
		if (!q->head)
			q->tail = NULL;
		q->waiting--;
		w->granted = true;
		uint64_t one = 1;
		(void)!write(w->efd, &one, sizeof(one));
	} else if (q->running > 0) {
		q->running--;
	}
	pthread_mutex_unlock(&q->mu);
}
