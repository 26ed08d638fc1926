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
 * The actor is one process per run, made by the supervisor (still root)
 * while it prepares the sandbox, in the run's own view and network
 * namespace and with no more rights than the run: chroot into the run's
 * root (its mounts: read-only binds, noexec, nosuid), the run's uid and
 * gid, no capabilities, no_new_privs.  Not the
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
 *   - moving or removing such a directory or gitfile itself - EROFS;
 *   - the same in a directory git takes for a repository by any name
 *     (HEAD, and objects/ and refs/ or a commondir: the `.bare` a gitfile
 *     names, a bare repository), and making the last of those marks - EROFS,
 *     EPERM;
 *   - a path a repository's own config names in its working tree, the
 *     workspace's or a nested one's (core.hooksPath, an included config, a
 *     command git runs by itself, a hook symlinked out of .git:
 *     asrun/gitpaths.c), or a new entry other than a directory on the way
 *     to one - EACCES.
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
 * test suites make throw-away repositories there).  Kept as they are:
 * timestamps and ownership (no code runs from them).
 *
 * This file is the root half: it makes the actor and drops it (chroot,
 * uid, no_new_privs) before anything of the run is read; the half that
 * serves the requests, as the run, is the executable sharness-actor
 * (asrun/actor_main.c, actor_serve.c).
 *
 * Made lazily, for speed (SPEC 15.5): a fork of the supervisor, its
 * copy-on-write faults on both sides and its teardown were a sixth of a
 * `true` run's CPU, and most commands (`ls`, `grep`, `git log`) never
 * write.  So the actor starts as a clone in the supervisor's memory
 * (initclone.c: a C library thread state of its own, no allocation),
 * drops there, and waits for the first request without reading it; only
 * then does it exec sharness-actor, a static executable (no loader to
 * resolve in the run's root), from a descriptor start-up opened (a file
 * as trusted as we are, frontexec.c).  From the exec on, it has a memory
 * of its own, before it reads anything of the run.  While it waits it
 * runs nothing of the run's and the run cannot reach it (outside the
 * run's pid namespace, not dumpable); an exec that fails ends it, and the
 * run's writes fail with the actor's end (notify.c).
 *
 * Trust: root; the actor's one word of readiness is the only thing read
 * here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "fdio.h"
#include "initclone.h"
#include "profile.h"
#include "sandbox.h"

#define ACTOR_START_MS 2000

/* The waiting actor's arguments: it reads them in our memory after
 * actor_start returned, and execs with them (asrun/actor_main.c). */
static struct waiter {
	int fds[4]; /* the socket, the host's /proc, the run's root and network namespace */
	int exe;
	uid_t uid;
	char uid_s[16], workspace[PATH_MAX];
	char *argv[PROFILE_LIST_MAX + 5];
} w;

/* In our memory (initclone.c), as root: drop into the run, say so, wait. */
static int waiter_main(void *arg)
{
	const struct waiter *a = arg;
	uid_t uid = a->uid;
	(void)prctl(PR_SET_NAME, "sharness-actor", 0, 0, 0); /* apart from the waiting init in ps */
	/* Nothing of the supervisor's but these (a prepared sandbox's stdin
	 * pipe held open here would never reach EOF): 3 the socket, 4 the
	 * host's /proc, 5 and 6 the run's root and network namespace, 7 the
	 * executable.  The network namespace: the run's unix sockets are
	 * listed there (connect_run.c), and abstract names resolve there. */
	int exe = fdio_place(a->fds, 4, a->exe), ready = 0;
	/* The ids by the bare calls: the C library's would act on every thread
	 * of the supervisor (whose memory we share), not on us. */
	if (exe < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || setns(6, CLONE_NEWNET) < 0 ||
	    fchdir(5) < 0 || chroot(".") < 0 || chdir("/") < 0 || syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, uid, uid, uid) < 0 || syscall(SYS_setresuid, uid, uid, uid) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		ready = errno ? errno : EPERM;
	close(5);
	close(6);
	/* One word: 0, or why not (chroot needs CAP_SYS_CHROOT). */
	if (send(3, &ready, sizeof(ready), MSG_NOSIGNAL) != (ssize_t)sizeof(ready) || ready)
		_exit(1);
	struct pollfd p = {.fd = 3, .events = POLLIN};
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	if (!(p.revents & POLLIN))
		_exit(0); /* the run ended without a request */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	static char *const envp[] = {NULL};
	syscall(SYS_execveat, exe, "", a->argv, envp, AT_EMPTY_PATH);
	_exit(127);
}

int actor_start(struct actor *a, pid_t target, const struct sandbox_spec *spec, int exe)
{
	char path[64];
	int sp[2] = {-1, -1};
	snprintf(path, sizeof(path), "/proc/%d/root", (int)target);
	int rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)target);
	int netfd = open(path, O_RDONLY | O_CLOEXEC);
	int hostproc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0;
	w = (struct waiter){.fds = {-1, hostproc, rootfd, netfd}, .exe = exe, .uid = spec->uid};
	snprintf(w.uid_s, sizeof(w.uid_s), "%u", (unsigned)spec->uid);
	snprintf(w.workspace, sizeof(w.workspace), "%s", spec->workspace);
	w.argv[n++] = "sharness-actor";
	w.argv[n++] = w.uid_s;
	w.argv[n++] = spec->profile->workspace_write ? "1" : "0";
	w.argv[n++] = w.workspace;
	for (size_t i = 0; i < spec->profile->n_write_paths; i++) /* the profiles stay as loaded */
		w.argv[n++] = spec->profile->write_paths[i];
	pid_t pid = -1;
	if (rootfd >= 0 && netfd >= 0 && hostproc >= 0 &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0) {
		w.fds[0] = sp[1];
		pid = initclone(waiter_main, &w, 0);
	}
	int e = errno;
	fdio_close(&rootfd);
	fdio_close(&netfd);
	fdio_close(&hostproc);
	fdio_close(&sp[1]);
	if (pid < 0) {
		fdio_close(&sp[0]);
		errno = e;
		return -1;
	}
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
