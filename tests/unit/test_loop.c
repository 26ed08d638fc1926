/*
 * test_loop.c - the front's event loop (front/loop.c) and what lives on it:
 * the run slots' FIFO queue (runq.c) and the pre-authentication deadline
 * (connguard.c) with the peer's uid from the kernel (peeruid.c).  Real
 * descriptors and the real clock: a pipe made readable wakes the loop, a
 * socketpair the deadline shuts down reads EOF, a loopback TCP connection
 * is looked up in the kernel's socket table.
 */
#include "harness.h"
#include "connguard.h"
#include "loop.h"
#include "peeruid.h"
#include "runq.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
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

/* Connections from `uid[i]` into a guard of `cap` waiting places, each
 * after `pause_ms[i]`; `cut` gets which were shut down (their peer reads
 * EOF; the others pass a byte).  The first is verified: never cut. */
enum { CROWD_MAX = 8 };
static void crowd(unsigned cap, size_t n, const long *uid, const int *pause_ms, bool *cut)
{
	struct loop *l = loop_new();
	struct connguard *g = connguard_new(l, 60, cap, on_cut);
	int s[CROWD_MAX][2];
	struct connguard_entry *e[CROWD_MAX];
	char c;
	cut_total = cut_crowded = 0;
	for (size_t i = 0; i < n; i++) {
		CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s[i]) == 0);
		if (pause_ms && pause_ms[i])
			usleep((useconds_t)pause_ms[i] * 1000);
		e[i] = connguard_add(g, s[i][0], uid[i]);
		if (i == 0)
			connguard_verified(g, e[0]);
	}
	for (size_t i = 0; i < n; i++) {
		cut[i] = read(s[i][1], &c, 1) == 0;
		if (!cut[i])
			CHECK(send(s[i][1], "x", 1, 0) == 1 && read(s[i][0], &c, 1) == 1);
		connguard_remove(g, e[i]);
		close(s[i][0]);
		close(s[i][1]);
	}
	connguard_free(g);
	loop_free(l);
}

static const char *cuts(const bool *cut, size_t n)
{
	static char out[CROWD_MAX + 1];
	for (size_t i = 0; i < n; i++)
		out[i] = cut[i] ? 'x' : '.';
	out[n] = '\0';
	return out;
}

/* Past `max_unverified` waiting connections, a new one costs the account
 * that holds the most (review s37 front 2, fixes M3): a flood cuts its own,
 * never another account's waiting client nor a verified connection. */
TEST(connguard_cuts_the_crowding_accounts_own_past_the_cap)
{
	bool cut[CROWD_MAX];
	/* 65534 floods while 1000's client waits: within two seconds of its
	 * own, the newcomer is cut, not 65534's other young ones. */
	static const long flood[] = {1000, 1000, 65534, 65534, 65534, 65534};
	crowd(3, 6, flood, NULL, cut);
	CHECK_STR(cuts(cut, 6), "....xx");
	CHECK_EQ_INT(cut_crowded, 2);
	/* 1000's client comes while 65534 crowds: 65534's oldest pays, young
	 * or not. */
	static const long late[] = {1000, 65534, 65534, 65534, 1000};
	crowd(3, 5, late, NULL, cut);
	CHECK_STR(cuts(cut, 5), ".x...");
	/* A range of subordinate uids (a user namespace's) is one account:
	 * its own newcomer goes, then 1001's costs it its oldest. */
	static const long subuids[] = {1000, 1000, 165536, 165537, 165538, 1001};
	crowd(3, 6, subuids, NULL, cut);
	CHECK_STR(cuts(cut, 6), "..x.x.");
	/* No uid known: those past two seconds go oldest first; then the
	 * young are spared and the newcomer goes. */
	static const long unknown[] = {-1, -1, -1, -1, -1, -1, -1, -1};
	static const int pause_ms[] = {0, 0, 0, 0, 2100, 0, 0, 0};
	crowd(3, 8, unknown, pause_ms, cut);
	CHECK_STR(cuts(cut, 8), ".xxx...x");
}

/* The uid of a loopback peer, whose socket uid 65534 made (when the test
 * runs as root; its own uid otherwise): over IPv4, IPv6, and IPv4 to a
 * dual-stack listener, where the peer's address is v4-mapped (review s37
 * fixes M3 feared that one is never found: the kernel's inet_diag looks it
 * up as IPv4). */
static long peer_uid_over(int family, const char *listen_at, const char *connect_at, uid_t maker)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
	struct sockaddr_in a4 = {.sin_family = AF_INET};
	struct sockaddr *a = family == AF_INET6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4;
	socklen_t alen = family == AF_INET6 ? sizeof(a6) : sizeof(a4);
	int l = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), off = 0;
	CHECK(l >= 0);
	if (family == AF_INET6) {
		CHECK(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) == 0);
		CHECK(inet_pton(AF_INET6, listen_at, &a6.sin6_addr) == 1);
	} else
		CHECK(inet_pton(AF_INET, listen_at, &a4.sin_addr) == 1);
	CHECK(bind(l, a, alen) == 0 && listen(l, 1) == 0 && getsockname(l, a, &alen) == 0);
	in_port_t port = family == AF_INET6 ? a6.sin6_port : a4.sin_port;
	struct sockaddr_in c4 = {.sin_family = AF_INET, .sin_port = port};
	struct sockaddr_in6 c6 = {.sin6_family = AF_INET6, .sin6_port = port};
	bool v4 = inet_pton(AF_INET, connect_at, &c4.sin_addr) == 1;
	CHECK(v4 || inet_pton(AF_INET6, connect_at, &c6.sin6_addr) == 1);
	CHECK(seteuid(maker) == 0);
	int c = socket(v4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(seteuid(0) == 0 || geteuid() == maker);
	CHECK(c >= 0 && connect(c, v4 ? (struct sockaddr *)&c4 : (struct sockaddr *)&c6,
	                        v4 ? sizeof(c4) : sizeof(c6)) == 0);
	int s = accept(l, NULL, NULL), diag = peeruid_open();
	long uid = peeruid_of(diag, s);
	close(diag);
	close(s);
	close(c);
	close(l);
	return uid;
}

TEST(peeruid_names_the_local_peers_uid)
{
	uid_t maker = getuid() == 0 ? 65534 : getuid();
	CHECK_EQ_INT(peer_uid_over(AF_INET, "127.0.0.1", "127.0.0.1", maker), (long)maker);
	CHECK_EQ_INT(peer_uid_over(AF_INET6, "::1", "::1", maker), (long)maker);
	CHECK_EQ_INT(peer_uid_over(AF_INET6, "::", "127.0.0.1", maker), (long)maker);
}

int main(void)
{
	RUN(timers_fire_in_deadline_order);
	RUN(cancelled_timer_never_fires);
	RUN(watch_wakes_on_a_descriptor_and_unwatch_stops_it);
	RUN(runq_hands_slots_over_in_order);
	RUN(runq_cancel_of_a_granted_waiter_passes_the_slot_on);
	RUN(connguard_cuts_only_unverified_connections_at_the_deadline);
	RUN(connguard_cuts_the_crowding_accounts_own_past_the_cap);
	RUN(peeruid_names_the_local_peers_uid);
	return harness_done();
}
