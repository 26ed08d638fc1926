/*
 * loop.c - see loop.h.
 */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct loop {
	int epfd;
	struct loop_timer head; /* circular list of armed timers, earliest first; head is a sentinel */
};

int64_t loop_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct loop *loop_new(void)
{
	struct loop *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	l->head.prev = l->head.next = &l->head;
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	close(l->epfd);
	free(l);
}

int loop_watch(struct loop *l, struct loop_watch *w, int fd, uint32_t events, loop_watch_fn *cb, void *arg)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};
	w->cb = cb;
	w->arg = arg;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		w->fd = -1;
		return -1;
	}
	w->fd = fd;
	return 0;
}

int loop_rewatch(struct loop *l, struct loop_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};
	return w->fd < 0 ? -1 : epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev);
}

void loop_unwatch(struct loop *l, struct loop_watch *w)
{
	if (w->fd < 0)
		return;
	(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->fd = -1;
}

void loop_timer_cancel(struct loop *l, struct loop_timer *t)
{
	(void)l;
	if (!t->armed)
		return;
	t->prev->next = t->next;
	t->next->prev = t->prev;
	t->armed = false;
}

void loop_timer_set(struct loop *l, struct loop_timer *t, int64_t in_ms, loop_timer_fn *cb, void *arg)
{
	loop_timer_cancel(l, t);
	t->due_ms = loop_now_ms() + (in_ms > 0 ? in_ms : 0);
	t->cb = cb;
	t->arg = arg;
	/* From the end: most timers are armed for about the same span, so the
	 * new one usually goes last. */
	struct loop_timer *at = l->head.prev;
	while (at != &l->head && at->due_ms > t->due_ms)
		at = at->prev;
	t->prev = at;
	t->next = at->next;
	at->next->prev = t;
	at->next = t;
	t->armed = true;
}

int64_t loop_next_ms(const struct loop *l)
{
	if (l->head.next == &l->head)
		return -1;
	int64_t left = l->head.next->due_ms - loop_now_ms();
	return left > 0 ? left : 0;
}

static void run_due_timers(struct loop *l)
{
	int64_t now = loop_now_ms();
	/* Timers armed by these callbacks for "now" run in this pass too. */
	while (l->head.next != &l->head && l->head.next->due_ms <= now) {
		struct loop_timer *t = l->head.next;
		loop_timer_cancel(l, t);
		t->cb(t);
	}
}

int loop_once(struct loop *l, int64_t max_ms)
{
	int64_t wait = loop_next_ms(l);
	if (max_ms >= 0 && (wait < 0 || max_ms < wait))
		wait = max_ms;
	struct epoll_event ev;
	int n = epoll_wait(l->epfd, &ev, 1, wait > 86400000 ? 86400000 : (int)wait);
	if (n < 0 && errno != EINTR)
		return -1;
	if (n == 1) {
		struct loop_watch *w = ev.data.ptr;
		w->cb(w, ev.events);
	}
	run_due_timers(l);
	return n == 1 ? 1 : 0;
}
