/*
 * loop.h - the front's one event loop (issue 15.5): every descriptor a
 * connection or a run waits on is watched here with epoll, every deadline
 * is a timer here, and libmicrohttpd runs from it (front.c).  One thread
 * runs it; nothing in the front sleeps to poll.
 *
 * A watch and a timer are embedded in the object that owns them; the loop
 * never allocates for them.  Callbacks run on the loop's thread and may
 * watch, unwatch, arm, cancel and free anything, their own object included:
 * the loop takes one event per wait, so no stale event of a freed watch
 * waits in a batch (level-triggered epoll keeps the others ready).
 *
 * Trust: front; only descriptors and the clock.
 */
#ifndef SHARNESS_LOOP_H
#define SHARNESS_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct loop_watch;
struct loop_timer;

typedef void loop_watch_fn(struct loop_watch *w, uint32_t revents);
typedef void loop_timer_fn(struct loop_timer *t);

struct loop_watch {
	int fd;             /* -1: not watched */
	loop_watch_fn *cb;
	void *arg;
};

struct loop_timer {
	int64_t due_ms;     /* on loop_now_ms's clock */
	bool armed;
	loop_timer_fn *cb;
	void *arg;
	struct loop_timer *prev, *next; /* the loop's list, earliest first */
};

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Milliseconds on the monotonic clock. */
int64_t loop_now_ms(void);

/* Watch `fd` for `events` (EPOLLIN, EPOLLOUT, EPOLLRDHUP; errors and hang-ups
 * always come).  -1 with errno when epoll refuses. */
int loop_watch(struct loop *l, struct loop_watch *w, int fd, uint32_t events, loop_watch_fn *cb, void *arg);
/* Change what a watched descriptor waits for (0: nothing for now). */
int loop_rewatch(struct loop *l, struct loop_watch *w, uint32_t events);
/* Stop watching (before the descriptor is closed).  Not watched: no-op. */
void loop_unwatch(struct loop *l, struct loop_watch *w);
static inline bool loop_watched(const struct loop_watch *w)
{
	return w->fd >= 0;
}
/* Init a watch as not watched (so loop_unwatch on it is a no-op). */
static inline void loop_watch_init(struct loop_watch *w)
{
	w->fd = -1;
}

/* Call `cb` once, `in_ms` from now (0: at the loop's next turn, after the
 * callback that armed it returns).  Re-arming moves it. */
void loop_timer_set(struct loop *l, struct loop_timer *t, int64_t in_ms, loop_timer_fn *cb, void *arg);
void loop_timer_cancel(struct loop *l, struct loop_timer *t);

/* Milliseconds until the first timer is due (0: due now), -1: none. */
int64_t loop_next_ms(const struct loop *l);

/* Wait for one event or the first due timer, at most max_ms (-1: no bound
 * of the caller's), and run what came: the event's callback, then every
 * timer that is due.  Returns 1 when a descriptor was ready, 0 when not,
 * -1 on an epoll error (errno). */
int loop_once(struct loop *l, int64_t max_ms);

#endif
