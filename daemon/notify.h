/*
 * notify.h - the supervisor's answers to a run's seccomp notifications
 * (umask and connect; notify.c says why each is answered here).
 *
 * Trust: privileged (the supervisor).
 */
#ifndef SHARNESS_NOTIFY_H
#define SHARNESS_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct notify_run {
	uid_t uid;          /* the run's uid: the only listener it may connect to */
	uint16_t tcp_port;  /* the proxy's port, 0 when the profile has no network */
	unsigned n_denied;  /* connects refused so far */
	char denied[200];   /* the last of them, for the log */
};

/* Answer one pending notification on `listener`.  0, or -1 when nothing
 * could be read (the listener is dead: every process of the run is gone). */
int notify_answer(int listener, struct notify_run *run);

/* Does this process have CAP_SYS_PTRACE, which making a run's connect
 * needs (process_vm_readv, pidfd_getfd)?  Without it connects fail closed. */
bool notify_can_connect(void);

#endif
