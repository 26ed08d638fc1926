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

/* A waiting connection younger than this is cut for the cap only when
 * another account crowds: a client's handshake takes milliseconds, and one
 * whose account is not known (-1) shares its group with strangers'. */
#define GRACE_MS 2000

/* Debian's and Ubuntu's useradd give each account 65536 subordinate uids
 * from 100000 (/etc/subuid): a process in a user namespace of its own
 * makes sockets under any of them, so each range counts as one account. */
#define SUBUID_FIRST 100000L
#define SUBUID_RANGE 65536L

struct connguard_entry {
	struct connguard *owner;
	int fd;
	long account; /* the peer's uid, its subordinate range, or -1: not known */
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
	struct census { /* crowd_victim's room: one per waiting connection */
		long account;
		unsigned age_order; /* 0: the oldest */
	} *census;
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
	if (!(g->census = calloc(g->max_listed + 1, sizeof(*g->census)))) {
		free(g);
		return NULL;
	}
	g->timer.cb = on_deadline;
	return g;
}

void connguard_free(struct connguard *g)
{
	if (!g)
		return;
	/* Only after libmicrohttpd has stopped: every entry was removed. */
	loop_timer_cancel(g->loop, &g->timer);
	free(g->census);
	free(g);
}

static int by_account_then_age(const void *a, const void *b)
{
	const struct census *x = a, *y = b;
	if (x->account != y->account)
		return x->account < y->account ? -1 : 1;
	return x->age_order < y->age_order ? -1 : x->age_order > y->age_order;
}

/* Which waiting connection the newest one (`newcomer`, the last) costs:
 * the oldest of the account that holds the most (a tie: the one whose
 * oldest is older), sorted once, O(n log n).  When that is the newcomer's
 * own account, its connections younger than GRACE_MS are spared, and with
 * none older the newcomer itself is cut: a flood then cuts only its own,
 * even when the accounts are not known. */
static struct connguard_entry *crowd_victim(struct connguard *g, struct connguard_entry *newcomer)
{
	unsigned n = 0;
	for (struct connguard_entry *e = g->head.next; e != &g->head; e = e->next, n++)
		g->census[n] = (struct census){.account = e->account, .age_order = n};
	qsort(g->census, n, sizeof(*g->census), by_account_then_age);
	long crowd = 0;
	unsigned most = 0, crowd_oldest = 0;
	for (unsigned i = 0, run; i < n; i += run) {
		for (run = 1; i + run < n && g->census[i + run].account == g->census[i].account; run++)
			;
		if (run > most || (run == most && g->census[i].age_order < crowd_oldest)) {
			most = run;
			crowd = g->census[i].account;
			crowd_oldest = g->census[i].age_order;
		}
	}
	int64_t born_before = loop_now_ms() + g->deadline_ms - GRACE_MS; /* due_ms of one GRACE_MS old */
	bool own = crowd == newcomer->account;
	for (struct connguard_entry *e = g->head.next; e != &g->head; e = e->next)
		if (e->account == crowd && (!own || e->due_ms <= born_before))
			return e;
	return newcomer;
}

static long account_of(long uid)
{
	return uid >= SUBUID_FIRST ? -2 - (uid - SUBUID_FIRST) / SUBUID_RANGE : uid;
}

struct connguard_entry *connguard_add(struct connguard *g, int fd, long uid)
{
	struct connguard_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->owner = g;
	e->fd = fd;
	e->account = account_of(uid);
	e->due_ms = loop_now_ms() + g->deadline_ms;
	e->next = &g->head;
	e->prev = g->head.prev;
	g->head.prev->next = e;
	g->head.prev = e;
	e->listed = true;
	bool head_changed = e->prev == &g->head;
	if (++g->listed > g->max_listed) {
		cut(crowd_victim(g, e));
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
