/*
 * initclone.c - see initclone.h.
 *
 * Why share memory: a fork copies the page tables of the supervisor (itself
 * a fork of the daemon), then every page either side writes is copied once
 * more, and the copy is torn down when the init exits.  On a machine where
 * each page fault and page-table write costs microseconds (a hypervisor's
 * guest), that was a twelfth of a run's CPU.  With CLONE_VM the init has
 * none of it: it runs in the supervisor's memory, like a thread, but as its
 * own process (pid 1 of its namespaces, its own fd table, credentials,
 * Landlock domain and seccomp filter, rlimits and signals).
 *
 * What makes that safe:
 *   - The C library keeps per-thread state (errno, malloc's cache, the
 *     thread's own locks) where the thread pointer says.  A bare clone
 *     keeps its parent's, and two processes would write one errno.  So a
 *     donor thread makes the clone: the init inherits the donor's thread
 *     pointer, and the donor never runs C library code again (it waits in
 *     pause() for the supervisor's exit).  Being a thread of ours, it also
 *     tells the C library that this process has more than one thread, so
 *     malloc and stdio take their locks.  The init still never allocates
 *     (asrun/sandbox_run.c): a process killed while holding the heap's lock
 *     would leave it held for the supervisor.
 *   - The init's stack is the lower part of the donor's, below a guard
 *     page: the stack the C library and the sanitizers know for the donor
 *     is where the init runs.
 *   - The init runs nothing of the run's: the command is exec'd (a memory
 *     of its own), the init reads only the supervisor's job and the kernel's
 *     wait statuses, and the run cannot read or attach to it (not dumpable,
 *     sandbox_run.c; pid 1 of the run's namespace ignores the run's
 *     signals).  It could reach the supervisor's memory before, as a copy;
 *     now what it writes, the supervisor sees: both are this program.
 *   - The donor sets no_new_privs before the clone: become_run (supervise.c)
 *     sets it on the supervisor's own thread only, and a thread without it
 *     could exec a set-user-ID program for a supervisor taken over later.
 *     The uid change reaches the donor with the rest (the C library's
 *     set*id calls act on every thread).
 *   - The init's parent is the donor thread: its parent-death signal
 *     (sandbox.c) comes when the donor ends, which is when the supervisor
 *     does.  The supervisor waits for the init as for any child (a thread
 *     group's threads share their children).
 *
 * A cost kept: the pages the init touches are charged to the memory cgroup
 * of the supervisor's process, not the run's (a memory's charges follow its
 * owner), so a run's peak memory no longer counts its init (its stack and
 * the job, at most about 1 MiB, bounded by this program, not by the run).
 */
#include "initclone.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define GUARD_BYTES 4096
#define DONOR_STACK (1024 * 1024) /* the init's part and the donor's */
#define DONOR_OWN (64 * 1024)     /* the donor's part, at the top */

/* One clone at a time per supervisor (the init, then the file actor's
 * waiting half, actor.c; a rebuilt sandbox's after the first were reaped);
 * static, since the donor outlives this call, but read by it only until
 * it posts `done`: each call has a donor of its own. */
static struct donor {
	int (*fn)(void *);
	void *arg;
	int flags;
	char *init_stack_top;
	pid_t pid;
	int err;
	sem_t done;
} donor;

static void *donor_main(void *p)
{
	struct donor *d = p;
	sigset_t all;

	/* The init clears its mask first thing (sandbox.c). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		d->pid = -1;
		d->err = errno;
	} else {
		d->pid = clone(d->fn, d->init_stack_top, d->flags | CLONE_VM | SIGCHLD, d->arg);
		d->err = d->pid < 0 ? errno : 0;
	}
	sem_post(&d->done);
	for (;;)
		pause(); /* the C library's set*id signal wakes us: back to sleep */
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

/* The C library binds some of its calls into the dynamic linker lazily
 * (allocate_stack's, for the new thread's TLS): a supervisor's first thread
 * paid a dozen page faults in the linker's symbol tables for it, each run. */
void initclone_warm_up(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);
}

pid_t initclone(int (*fn)(void *), void *arg, int ns_flags)
{
	pthread_attr_t attr;
	pthread_t t;
	int e;

	char *mem = mmap(NULL, GUARD_BYTES + DONOR_STACK, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return -1;
	if (mprotect(mem, GUARD_BYTES, PROT_NONE) < 0) {
		e = errno;
		munmap(mem, GUARD_BYTES + DONOR_STACK);
		errno = e;
		return -1;
	}
	char *stack = mem + GUARD_BYTES;
	donor = (struct donor){.fn = fn, .arg = arg, .flags = ns_flags, .pid = -1};
	donor.init_stack_top = (char *)((uintptr_t)(stack + DONOR_STACK - DONOR_OWN) & ~(uintptr_t)15);
	e = sem_init(&donor.done, 0, 0) < 0 ? errno : pthread_attr_init(&attr);
	if (e == 0) {
		e = pthread_attr_setstack(&attr, stack, DONOR_STACK);
		if (e == 0)
			e = pthread_create(&t, &attr, donor_main, &donor);
		pthread_attr_destroy(&attr);
	}
	if (e != 0) {
		munmap(mem, GUARD_BYTES + DONOR_STACK);
		errno = e;
		return -1;
	}
	pthread_detach(t);
	while (sem_wait(&donor.done) < 0 && errno == EINTR)
		;
	errno = donor.err;
	return donor.pid;
}
