/*
 * connguard.c - see connguard.h.
 *
 * Trust: the descriptors and times come from libmicrohttpd and the clock;
 * nothing here reads what a client sent.
 */
#include "connguard.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>

struct connguard_entry {
	int fd;
	int64_t due_ms;
	bool listed; /* in the deadline list: neither verified nor cut yet */
	struct connguard_entry *prev, *next;
};

struct connguard {
	struct loop *loop;
	struct loop_timer timer;     /* the head's deadline */
	struct connguard_entry head; /* circular list, oldest first; head is a sentinel */
	int64_t deadline_ms;
	void (*on_cut)(unsigned n);
};

static void arm(struct connguard *g)
{
	if (g->head.next == &g->head) {
		loop_timer_cancel(g->loop, &g->timer);
		return;
	}
	int64_t in = g->head.next->due_ms - loop_now_ms();
	loop_timer_set(g->loop, &g->timer, in, g->timer.cb, g);
}

static void unlist(struct connguard_entry *e)
{
	if (!e->listed)
		return;
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->listed = false;
}

static void on_deadline(struct loop_timer *t)
{
	struct connguard *g = t->arg;
	int64_t now = loop_now_ms();
	unsigned cut = 0;
	while (g->head.next != &g->head && g->head.next->due_ms <= now) {
		struct connguard_entry *e = g->head.next;
		/* The socket is still open: its entry is removed before it is
		 * closed.  The entry stays until libmicrohttpd is done. */
		shutdown(e->fd, SHUT_RDWR);
		unlist(e);
		cut++;
	}
	if (cut && g->on_cut)
		g->on_cut(cut);
	arm(g);
}

struct connguard *connguard_new(struct loop *l, unsigned deadline_s, void (*on_cut)(unsigned n))
{
	struct connguard *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->loop = l;
	g->head.prev = g->head.next = &g->head;
	g->deadline_ms = (int64_t)deadline_s * 1000;
	g->on_cut = on_cut;
	g->timer.cb = on_deadline;
	return g;
}

void connguard_free(struct connguard *g)
{
	if (!g)
		return;
	/* Only after libmicrohttpd has stopped: every entry was removed. */
	loop_timer_cancel(g->loop, &g->timer);
	free(g);
}

struct connguard_entry *connguard_add(struct connguard *g, int fd)
{
	struct connguard_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = fd;
	e->due_ms = loop_now_ms() + g->deadline_ms;
	e->next = &g->head;
	e->prev = g->head.prev;
	g->head.prev->next = e;
	g->head.prev = e;
	e->listed = true;
	if (e->prev == &g->head)
		arm(g);
	return e;
}

void connguard_verified(struct connguard *g, struct connguard_entry *e)
{
	if (!e || !e->listed)
		return;
	bool was_first = g->head.next == e;
	unlist(e);
	if (was_first)
		arm(g);
}

void connguard_remove(struct connguard *g, struct connguard_entry *e)
{
	if (!e)
		return;
	connguard_verified(g, e);
	free(e);
}
