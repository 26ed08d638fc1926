/*
 * connect_run.h - a run's connect(2) to a unix socket, made as the run
 * (connect_run.c), and what it answers root/notify.c.
 */
#ifndef SHARNESS_CONNECT_RUN_H
#define SHARNESS_CONNECT_RUN_H

#include <stdnoreturn.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* What the helper says: the connect's errno, or `internal` (an errno) and
 * the step that failed when the helper itself could not do its work.  A
 * string literal's address survives fork: `step` points into our image. */
struct connect_reply {
	int err;
	int internal;
	const char *step;
};

/* In the forked helper, already in the run's view and uid: connect a new
 * socket of `type` to `addr` if it is the run's own, and send the answer
 * (and the socket) over `back`. */
noreturn void connect_run(int back, uid_t uid, int type, const struct sockaddr_un *addr, socklen_t len);

#endif
