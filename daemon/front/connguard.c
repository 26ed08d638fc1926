/*
 * connguard.c - see connguard.h.
 *
 * Trust: the descriptors and times come from libmicrohttpd and the clock;
 * nothing here reads what a client sent.
 */
#include "connguard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct connguard_entry {
	int fd;
	struct timespec started;
	atomic_bool verified;
	bool cut; /* shut down once; the entry stays until libmicrohttpd is done */
	struct connguard_entry *prev, *next;
};

struct connguard {
	pthread_mutex_t lock;
	struct connguard_entry head; /* circular list; head is a sentinel */
	unsigned deadline_s;
};

struct connguard *connguard_new(unsigned deadline_s)
{
	struct connguard *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	g->head.prev = g->head.next = &g->head;
	g->deadline_s = deadline_s;
	return g;
}

void connguard_free(struct connguard *g)
{
	if (!g)
		return;
	/* Only after libmicrohttpd has stopped: every entry was removed. */
	pthread_mutex_destroy(&g->lock);
	free(g);
}

struct connguard_entry *connguard_add(struct connguard *g, int fd)
{
	struct connguard_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = fd;
	clock_gettime(CLOCK_MONOTONIC, &e->started);
	atomic_init(&e->verified, false);
	pthread_mutex_lock(&g->lock);
	e->next = &g->head;
	e->prev = g->head.prev;
	g->head.prev->next = e;
	g->head.prev = e;
	pthread_mutex_unlock(&g->lock);
	return e;
}

void connguard_verified(struct connguard_entry *e)
{
	if (e)
		atomic_store(&e->verified, true);
}

void connguard_remove(struct connguard *g, struct connguard_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&g->lock);
	e->prev->next = e->next;
	e->next->prev = e->prev;
	pthread_mutex_unlock(&g->lock);
	free(e);
}

unsigned connguard_sweep(struct connguard *g)
{
	struct timespec now;
	unsigned cut = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&g->lock);
	for (struct connguard_entry *e = g->head.next; e != &g->head; e = e->next) {
		if (e->cut || atomic_load(&e->verified) || now.tv_sec - e->started.tv_sec < (time_t)g->deadline_s)
			continue;
		/* The socket is still open: its entry is removed before it is
		 * closed, and we hold the lock that removal takes. */
		shutdown(e->fd, SHUT_RDWR);
		e->cut = true;
		cut++;
	}
	pthread_mutex_unlock(&g->lock);
	return cut;
}
