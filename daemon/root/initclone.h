/*
 * initclone.h - starting the sandbox's init (and the file actor until it
 * execs, actor.c) in the supervisor's memory.
 *
 * Trust: privileged (the supervisor, while it prepares a sandbox).
 */
#ifndef SHARNESS_INITCLONE_H
#define SHARNESS_INITCLONE_H

#include <sys/types.h>

/* Clone `fn(arg)` as a new process in the namespaces `ns_flags` asks for,
 * sharing our memory (CLONE_VM) and running on a C library thread state of
 * its own, with no_new_privs set; the child must never return from `fn`
 * and never allocate.  `arg` must outlive the child.  The child's pid, or
 * -1 with errno set. */
pid_t initclone(int (*fn)(void *), void *arg, int ns_flags);

/* Once, in the launcher before it forks supervisors: start and join a
 * thread, so the C library's own symbols that a thread's start needs are
 * bound here and every supervisor inherits them bound. */
void initclone_warm_up(void);

#endif
