/*
 * actor.c - makes a run's writes that could touch a .git, for the run.
 *
 * Why (SPEC §15.2, issue 12): git runs core.fsmonitor, hooks and filters of
 * any repository it is pointed at, and IDEs and shell prompts point it at
 * every repository they find.  A run that could plant `vendor/lib/.git` (or
 * a gitfile `.git` naming a directory it filled, or a symlink) or change an
 * existing nested repository's config would run code as the person, later,
 * outside the sandbox.  The kernel has no lock by name, and seccomp cannot
 * read a path; checking the path the run passed and then letting the call
 * go on is racy (another thread rewrites the string in between).  So every
 * call that can create, change or remove a directory entry or open a file
 * for writing stops at the run's seccomp listener (seccomp.c), and the
 * supervisor hands it here (notify.c).
 *
 * The actor is one process per run, forked from the supervisor (still
 * root) while it prepares the sandbox, in the run's own view and network
 * namespace and with no more rights than the run: chroot into the run's root (its mounts: read-only binds, noexec,
 * nosuid), the run's uid and gid, no capabilities, no_new_privs.  Not the
 * run's Landlock domain: a domain of its own would stop it from reopening
 * the run's /proc/PID/fd entries (`> /dev/stdout`: Landlock scopes ptrace
 * access to descendants), and for writes the mounts already hold what
 * Landlock holds for a run (read-only everywhere but the workspace of a
 * writable profile, /tmp, /dev/shm and the write paths).  Nor the seccomp
 * filter: it makes nothing but the calls below.  The run cannot
 * see or signal it (it lives outside the run's pid namespace).  For each
 * call it resolves the parent directory once (openat, as the kernel would,
 * symlinks followed), asks the kernel where that directory really is
 * (readlink of its /proc/self/fd entry) and then acts on that directory
 * descriptor: what was checked is what is acted on.  Refused:
 *
 *   - a new entry whose name git would take for a repository: `.git`
 *     (any case, trailing dots and spaces, the 8.3 alias `GIT~1`: what git
 *     itself refuses on case-insensitive file systems) - EPERM;
 *   - anything inside a directory of that name: opening a file there for
 *     writing, creating, removing, renaming, linking, truncating or
 *     chmod-ing - EROFS, as the top-level .git (a read-only bind) answers;
 *   - moving or removing such a directory or gitfile itself - EROFS.
 *
 * One rule of the run's Landlock domain the mounts do not hold: a FIFO or
 * socket file opens for writing even on a read-only mount.  So an existing
 * one is opened for writing only in the run's private /tmp and /dev/shm,
 * a writable workspace or a write path (in_writable) - else EACCES, as
 * Landlock answers: no analyse run writes into a build run's FIFO.
 *
 * An open for writing that follows a symlink is checked where it lands: the
 * file is opened O_PATH first, its real path checked, then reopened through
 * /proc/self/fd (the same inode, no second lookup).  A creation never
 * follows a symlink planted in between (O_EXCL | O_NOFOLLOW, then again);
 * a dangling symlink is followed by hand, so its target is checked too.
 *
 * Not guarded: the run's private /tmp and /dev/shm (gone with the run;
 * test suites make throw-away repositories there).  Kept as they are: bare
 * repositories (a directory with HEAD, objects/ and refs/ that is not named
 * .git: git uses one only when the person runs git inside it, which their
 * `safe.bareRepository=explicit` refuses), timestamps and ownership (no
 * code runs from them).
 *
 * This file is the root half: it forks the actor and drops it (chroot,
 * uid, no_new_privs) before anything of the run is read; the half that
 * serves the requests, as the run, is asrun/actor_serve.c.
 *
 * Trust: root; the actor's one word of readiness is the only thing read
 * here.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actor.h"
#include "actor_serve.h"
#include "profile.h"
#include "sandbox.h"

#define ACTOR_START_MS 2000

/* Close every descriptor from 3 up but `a` and `b`. */
static void keep_only(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	if (lo > 3)
		syscall(SYS_close_range, 3, lo - 1, 0);
	if (hi > lo + 1)
		syscall(SYS_close_range, lo + 1, hi - 1, 0);
	syscall(SYS_close_range, hi + 1, ~0U, 0);
}

int actor_start(struct actor *a, pid_t target, const struct sandbox_spec *spec)
{
	char path[64];
	int sp[2];
	snprintf(path, sizeof(path), "/proc/%d/root", (int)target);
	int rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)target);
	int netfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rootfd < 0 || netfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		if (rootfd >= 0)
			close(rootfd);
		if (netfd >= 0)
			close(netfd);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(rootfd);
		close(netfd);
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		close(sp[0]);
		/* The run's network namespace: its unix sockets are listed
		 * there (connect_run.c), and abstract names resolve there. */
		int in_net = setns(netfd, CLONE_NEWNET);
		/* Nothing of the supervisor's but these two: a prepared sandbox's
		 * stdin pipe held open here would never reach EOF. */
		keep_only(sp[1], rootfd);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		uid_t uid = spec->uid;
		(void)prctl(PR_SET_NAME, "sharness-actor", 0, 0, 0); /* apart from the waiting init in ps */
		int hostproc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int ready = 0;
		if (in_net < 0 || hostproc < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || fchdir(rootfd) < 0 ||
		    chroot(".") < 0 || chdir("/") < 0 || setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
		    setresuid(uid, uid, uid) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
			ready = errno ? errno : EPERM;
		/* One word first: why not (chroot needs CAP_SYS_CHROOT); the
		 * serving half sends the 0 once it is set up. */
		if (ready) {
			(void)!send(sp[1], &ready, sizeof(ready), MSG_NOSIGNAL);
			_exit(1);
		}
		close(rootfd);
		actor_serve(sp[1], hostproc, spec); /* as the run from here */
	}
	close(rootfd);
	close(netfd);
	close(sp[1]);
	int ready = EIO;
	struct pollfd p = {.fd = sp[0], .events = POLLIN};
	if (poll(&p, 1, ACTOR_START_MS) != 1 || recv(sp[0], &ready, sizeof(ready), 0) != (ssize_t)sizeof(ready))
		ready = EIO;
	if (ready) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(sp[0]);
		errno = ready;
		return -1;
	}
	a->pid = pid;
	a->sock = sp[0];
	return 0;
}

void actor_stop(struct actor *a)
{
	if (a->pid <= 0)
		return;
	kill(a->pid, SIGKILL);
	while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(a->sock);
	a->pid = 0;
}
