/*
 * test_loop.c - the front's event loop (front/loop.c) and what lives on it:
 * the run slots' FIFO queue (runq.c) and the pre-authentication deadline
 * (connguard.c).  Real descriptors and the real clock: a pipe made readable
 * wakes the loop, a socketpair the deadline shuts down reads EOF.
 */
#include "harness.h"
#include "connguard.h"
#include "loop.h"
#include "runq.h"

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static int order[8], n_order;

static void note_timer(struct loop_timer *t)
{
	order[n_order++] = (int)(intptr_t)t->arg;
}

/* A zero timer armed from inside a callback runs in the same turn, after
 * that callback (approvals and the queue hand their results over so). */
static struct loop_timer chained;
static struct loop *L;
static void arm_zero(struct loop_timer *t)
{
	note_timer(t);
	loop_timer_set(L, &chained, 0, note_timer, (void *)(intptr_t)9);
}

TEST(timers_fire_in_deadline_order)
{
	struct loop *l = loop_new();
	struct loop_timer a = {0}, b = {0}, c = {0};
	L = l;
	n_order = 0;
	loop_timer_set(l, &a, 30, note_timer, (void *)1);
	loop_timer_set(l, &b, 10, arm_zero, (void *)2);
	loop_timer_set(l, &c, 20, note_timer, (void *)3);
	CHECK(loop_next_ms(l) <= 10);
	int64_t t0 = loop_now_ms();
	while (n_order < 4 && loop_now_ms() - t0 < 2000)
		loop_once(l, -1);
	CHECK_EQ_INT(n_order, 4);
	CHECK_EQ_INT(order[0], 2);
	CHECK_EQ_INT(order[1], 9);
	CHECK_EQ_INT(order[2], 3);
	CHECK_EQ_INT(order[3], 1);
	CHECK(loop_now_ms() - t0 >= 30);
	CHECK_EQ_INT(loop_next_ms(l), -1);
	loop_free(l);
}

TEST(cancelled_timer_never_fires)
{
	struct loop *l = loop_new();
	struct loop_timer a = {0};
	n_order = 0;
	loop_timer_set(l, &a, 5, note_timer, (void *)1);
	loop_timer_cancel(l, &a);
	CHECK_EQ_INT(loop_next_ms(l), -1);
	loop_once(l, 20);
	CHECK_EQ_INT(n_order, 0);
	loop_free(l);
}

static int woke;
static void on_readable(struct loop_watch *w, uint32_t revents)
{
	char c;
	woke += (revents & EPOLLIN) != 0;
	(void)!read(w->fd, &c, 1);
}

TEST(watch_wakes_on_a_descriptor_and_unwatch_stops_it)
{
	struct loop *l = loop_new();
	int p[2];
	CHECK(pipe(p) == 0);
	struct loop_watch w;
	loop_watch_init(&w);
	CHECK(loop_watch(l, &w, p[0], EPOLLIN, on_readable, NULL) == 0);
	woke = 0;
	CHECK_EQ_INT(loop_once(l, 10), 0); /* nothing yet: the bound passes */
	CHECK(write(p[1], "x", 1) == 1);
	CHECK_EQ_INT(loop_once(l, 1000), 1);
	CHECK_EQ_INT(woke, 1);
	loop_unwatch(l, &w);
	CHECK(!loop_watched(&w));
	CHECK(write(p[1], "x", 1) == 1);
	CHECK_EQ_INT(loop_once(l, 10), 0);
	CHECK_EQ_INT(woke, 1);
	close(p[0]);
	close(p[1]);
	loop_free(l);
}

static enum runq_result results[4];
static int n_results;
static void on_slot(void *arg, enum runq_result r)
{
	results[n_results++] = r;
	(void)arg;
}

static void turn_until(struct loop *l, int n, int64_t max_ms)
{
	int64_t t0 = loop_now_ms();
	while (n_results < n && loop_now_ms() - t0 < max_ms)
		loop_once(l, 50);
}

TEST(runq_hands_slots_over_in_order)
{
	struct loop *l = loop_new();
	struct runq *q = runq_new(l, 1, 2);
	struct runq_waiter w1, w2, w3;
	unsigned ahead = 99;
	n_results = 0;
	CHECK_EQ_INT(runq_take(q, &w1, 1000, on_slot, NULL, &ahead), RUNQ_OK);
	CHECK_EQ_INT(runq_take(q, &w1, 1000, on_slot, NULL, &ahead), RUNQ_WAITING);
	CHECK_EQ_INT(ahead, 0);
	CHECK_EQ_INT(runq_take(q, &w2, 1000, on_slot, NULL, &ahead), RUNQ_WAITING);
	CHECK_EQ_INT(ahead, 1);
	CHECK(runq_full(q));
	CHECK_EQ_INT(runq_take(q, &w3, 1000, on_slot, NULL, NULL), RUNQ_FULL);
	/* The slot goes to w1, at the loop's next turn, never inside release. */
	runq_release(q);
	CHECK_EQ_INT(n_results, 0);
	turn_until(l, 1, 500);
	CHECK_EQ_INT(n_results, 1);
	CHECK_EQ_INT(results[0], RUNQ_OK);
	/* w1 holds it; w2 still waits, and times out. */
	turn_until(l, 2, 3000);
	CHECK_EQ_INT(n_results, 2);
	CHECK_EQ_INT(results[1], RUNQ_TIMEOUT);
	runq_release(q); /* w1's: nobody waits, so it goes back to the pool */
	CHECK_EQ_INT(runq_take(q, &w3, 1000, on_slot, NULL, NULL), RUNQ_OK);
	runq_release(q);
	runq_free(q);
	loop_free(l);
}

TEST(runq_cancel_of_a_granted_waiter_passes_the_slot_on)
{
	struct loop *l = loop_new();
	struct runq *q = runq_new(l, 1, 4);
	struct runq_waiter w0, w1, w2;
	n_results = 0;
	CHECK_EQ_INT(runq_take(q, &w0, 1000, on_slot, NULL, NULL), RUNQ_OK);
	CHECK_EQ_INT(runq_take(q, &w1, 1000, on_slot, NULL, NULL), RUNQ_WAITING);
	CHECK_EQ_INT(runq_take(q, &w2, 1000, on_slot, NULL, NULL), RUNQ_WAITING);
	runq_release(q);       /* granted to w1, delivery pending */
	runq_cancel(q, &w1);   /* w1's client left before it heard */
	turn_until(l, 1, 500);
	CHECK_EQ_INT(n_results, 1);
	CHECK_EQ_INT(results[0], RUNQ_OK); /* w2's */
	runq_release(q);
	CHECK(!runq_full(q));
	runq_free(q);
	loop_free(l);
}

static unsigned cut_total, cut_crowded;
static void on_cut(unsigned n, bool crowded)
{
	cut_total += n;
	cut_crowded += crowded ? n : 0;
}

TEST(connguard_cuts_only_unverified_connections_at_the_deadline)
{
	struct loop *l = loop_new();
	struct connguard *g = connguard_new(l, 1, 8, on_cut);
	int a[2], b[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
	struct connguard_entry *ea = connguard_add(g, a[0], -1);
	struct connguard_entry *eb = connguard_add(g, b[0], -1);
	connguard_verified(g, eb);
	cut_total = 0;
	int64_t t0 = loop_now_ms();
	CHECK(loop_next_ms(l) >= 900);
	while (cut_total == 0 && loop_now_ms() - t0 < 3000)
		loop_once(l, -1);
	CHECK_EQ_INT(cut_total, 1);
	CHECK(loop_now_ms() - t0 >= 1000);
	char c;
	CHECK_EQ_INT(read(a[1], &c, 1), 0);   /* shut down: EOF */
	CHECK(send(b[1], "x", 1, 0) == 1);     /* the verified one is untouched */
	CHECK_EQ_INT(read(b[0], &c, 1), 1);
	CHECK_EQ_INT(loop_next_ms(l), -1);     /* no deadline left to wait for */
	connguard_remove(g, ea);
	connguard_remove(g, eb);
	connguard_free(g);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
	loop_free(l);
}

/* Past `max_unverified` waiting connections, a new one cuts the oldest of
 * the uid that holds the most (review s37 front 2): a flood cuts its own,
 * never another account's waiting client nor a verified connection. */
TEST(connguard_cuts_the_crowding_uids_oldest_past_the_cap)
{
	struct loop *l = loop_new();
	struct connguard *g = connguard_new(l, 60, 3, on_cut);
	enum { N = 6 };
	static const long uid[N] = {1000, 1000, 65534, 65534, 65534, 65534};
	int s[N][2];
	struct connguard_entry *e[N];
	char c;
	cut_total = cut_crowded = 0;
	for (int i = 0; i < N; i++)
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, s[i]) == 0);
	e[0] = connguard_add(g, s[0][0], uid[0]);
	connguard_verified(g, e[0]);                 /* verified: never cut */
	for (int i = 1; i < N; i++)                  /* 1000's client waits, then 65534 floods */
		e[i] = connguard_add(g, s[i][0], uid[i]);
	CHECK_EQ_INT(cut_crowded, 2);                /* the 4th and 5th waiting cut 65534's oldest */
	CHECK_EQ_INT(read(s[2][1], &c, 1), 0);
	CHECK_EQ_INT(read(s[3][1], &c, 1), 0);
	for (int i = 0; i < N; i++)
		if (i != 2 && i != 3)
			CHECK(send(s[i][1], "x", 1, 0) == 1 && read(s[i][0], &c, 1) == 1);
	for (int i = 0; i < N; i++) {
		connguard_remove(g, e[i]);
		close(s[i][0]);
		close(s[i][1]);
	}
	connguard_free(g);
	loop_free(l);
}

int main(void)
{
	RUN(timers_fire_in_deadline_order);
	RUN(cancelled_timer_never_fires);
	RUN(watch_wakes_on_a_descriptor_and_unwatch_stops_it);
	RUN(runq_hands_slots_over_in_order);
	RUN(runq_cancel_of_a_granted_waiter_passes_the_slot_on);
	RUN(connguard_cuts_only_unverified_connections_at_the_deadline);
	RUN(connguard_cuts_the_crowding_uids_oldest_past_the_cap);
	return harness_done();
}
