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
	struct connguard *owner;
	int fd;
	long uid;
	int64_t due_ms;
	bool listed; /* in the deadline list: neither verified nor cut yet */
	struct connguard_entry *prev, *next;
};

struct connguard {
	struct loop *loop;
	struct loop_timer timer;     /* the head's deadline */
	struct connguard_entry head; /* circular list, oldest first; head is a sentinel */
	int64_t deadline_ms;
	unsigned listed, max_listed;
	void (*on_cut)(unsigned n, bool crowded);
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
	e->owner->listed--;
}

/* The socket is still open: its entry is removed before it is closed.
 * The entry stays until libmicrohttpd is done. */
static void cut(struct connguard_entry *e)
{
	shutdown(e->fd, SHUT_RDWR);
	unlist(e);
}

static void on_deadline(struct loop_timer *t)
{
	struct connguard *g = t->arg;
	int64_t now = loop_now_ms();
	unsigned n = 0;
	for (; g->head.next != &g->head && g->head.next->due_ms <= now; n++)
		cut(g->head.next);
	if (n && g->on_cut)
		g->on_cut(n, false);
	arm(g);
}

struct connguard *connguard_new(struct loop *l, unsigned deadline_s, unsigned max_unverified,
                                void (*on_cut)(unsigned n, bool crowded))
{
	struct connguard *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->loop = l;
	g->head.prev = g->head.next = &g->head;
	g->deadline_ms = (int64_t)deadline_s * 1000;
	g->max_listed = max_unverified ? max_unverified : 1;
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

/* The oldest waiting connection of the uid that holds the most waiting
 * ones (a tie: the one whose oldest is older).  At most max_unverified
 * entries: a count for each is cheap. */
static struct connguard_entry *crowd_victim(struct connguard *g)
{
	struct connguard_entry *victim = NULL;
	unsigned most = 0;
	for (struct connguard_entry *e = g->head.next; e != &g->head; e = e->next) {
		unsigned n = 0;
		for (struct connguard_entry *o = g->head.next; o != &g->head; o = o->next)
			n += o->uid == e->uid;
		if (n > most) {
			most = n;
			victim = e;
		}
	}
	return victim;
}

struct connguard_entry *connguard_add(struct connguard *g, int fd, long uid)
{
	struct connguard_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->owner = g;
	e->fd = fd;
	e->uid = uid;
	e->due_ms = loop_now_ms() + g->deadline_ms;
	e->next = &g->head;
	e->prev = g->head.prev;
	g->head.prev->next = e;
	g->head.prev = e;
	e->listed = true;
	bool head_changed = e->prev == &g->head;
	if (++g->listed > g->max_listed) {
		cut(crowd_victim(g));
		head_changed = true;
		if (g->on_cut)
			g->on_cut(1, true);
	}
	if (head_changed)
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
