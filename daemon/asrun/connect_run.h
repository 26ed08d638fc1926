/*
 * connect_run.h - a run's connect(2) to a unix socket, made as the run by
 * its file actor (connect_run.c), and what it answers.
 */
#ifndef SHARNESS_CONNECT_RUN_H
#define SHARNESS_CONNECT_RUN_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* The connect's errno, or `internal` (an errno) and the step that failed
 * when the actor itself could not do its work (`step`: a literal). */
struct connect_reply {
	int err;
	int internal;
	const char *step;
};

/* In the actor, already in the run's view, network namespace and uid, in
 * the caller's working directory: connect a new socket of `type` to `addr`
 * if its listener is the run's own.  Returns the socket, or -1 with
 * rep->err set. */
int connect_run(uid_t uid, int type, const struct sockaddr_un *addr, socklen_t len, struct connect_reply *rep);

#endif
