/*
 * actor.h - a process per run that makes the run's writes that could touch a
 * .git, as the run, after checking them (actor.c says why and how).
 *
 * Trust: the actor runs as the run; the supervisor, as root, starts it
 * here, and talks to it over a socketpair once it has dropped to the run's
 * uid itself (asrun/actor_msg.h has the messages); what serves them is an
 * executable of its own (asrun/actor_main.c).  It stands in the run's
 * root and network namespace, so it also makes the run's connects to unix
 * sockets.
 */
#ifndef SHARNESS_ACTOR_H
#define SHARNESS_ACTOR_H

#include <sys/types.h>

struct sandbox_spec;

struct actor {
	pid_t pid;        /* 0: not started */
	int sock;
};

/* Start the actor in the view of `target` (a process of the run), to exec
 * `exe` (sharness-actor) at the run's first request for it. */
int actor_start(struct actor *a, pid_t target, const struct sandbox_spec *spec, int exe);

/* Kill and reap the actor, if one was started. */
void actor_stop(struct actor *a);

#endif
