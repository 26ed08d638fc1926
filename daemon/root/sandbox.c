/*
 * sandbox.c - the sandbox child, step by step (see sandbox.h).
 *
 * We are the init (pid 1) of a fresh pid namespace, in fresh mount, ipc, uts
 * and net namespaces, still root.  Each step below says why it is where it
 * is.  A failing step reports {step, errno} on the status pipe and exits:
 * the supervisor turns that into a clear error, never a weaker run.  The
 * steps after the switch to the run's uid (the last locks, the job, the
 * command) are asrun/sandbox_run.c: they no longer run as root.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "mount.h"
#include "ns.h"



static const char *const step_names[STEP_COUNT] = {
	[STEP_PDEATHSIG] = "tie the sandbox's life to its supervisor",
	[STEP_WAIT_CGROUP] = "wait for the run's cgroup",
	[STEP_CGROUP_NS] = "enter a new cgroup namespace",
	[STEP_HOSTNAME] = "set the hostname",
	[STEP_LOOPBACK] = "bring up loopback",
	[STEP_MOUNTS] = "build the file system view",
	[STEP_CMDLINE] = "hide the daemon's command line",
	[STEP_CAPS] = "drop the capability bounding set",
	[STEP_IDS] = "switch to the run's uid and gid",
	[STEP_DUMPABLE] = "make the sandbox's init undumpable",
	[STEP_NO_NEW_PRIVS] = "set no_new_privs",
	[STEP_LANDLOCK] = "apply Landlock",
	[STEP_SECCOMP] = "load the seccomp filter",
	[STEP_JOB] = "read the job",
	[STEP_FORK] = "start the command",
};

const char *sandbox_step_name(int step)
{
	return step >= 0 && step < STEP_COUNT ? step_names[step] : "unknown step";
}

noreturn void sandbox_fail(const struct sandbox_spec *s, int step)
{
	struct sandbox_status st = {.kind = SANDBOX_STATUS_SETUP_FAILED, .step = step, .err = errno};
	/* The two steps that make many calls name the one that failed. */
	if (step == STEP_MOUNTS || step == STEP_LANDLOCK)
		snprintf(st.what, sizeof(st.what), "%s", errmsg_op());
	(void)!write(s->status_fd, &st, sizeof(st));
	_exit(1);
}

/* The init runs in the supervisor's memory, a fork of the launcher, without
 * an exec (initclone.c): /proc/1/cmdline, which any process may read
 * whatever its dumpable flag, would show the daemon's command line and
 * config path.  Point the argument area at an empty string (prctl(2)
 * PR_SET_MM, needs CAP_SYS_RESOURCE: we are still root); where the kernel
 * lacks CONFIG_CHECKPOINT_RESTORE, zero the area itself instead, found in
 * /proc/self/stat (proc(5) fields 48 and 49, arg_start and arg_end).  The
 * memory is the supervisor's: its command line goes blank as well (ps shows
 * it by its name, sharnessd, with no arguments). */
static int hide_cmdline(void)
{
	static char empty[8];
	unsigned long a = (unsigned long)empty;

	if (prctl(PR_SET_MM, PR_SET_MM_ARG_START, a, 0, 0) == 0 && prctl(PR_SET_MM, PR_SET_MM_ARG_END, a, 0, 0) == 0)
		return 0;
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the comm field may hold spaces */
	unsigned long start = 0, end = 0;
	for (int field = 2; p && field < 49; field++) {
		p = strchr(p + 1, ' ');
		if (p && field + 1 == 48)
			start = strtoul(p + 1, NULL, 10);
		if (p && field + 1 == 49)
			end = strtoul(p + 1, NULL, 10);
	}
	if (start == 0 || end <= start) {
		errno = EINVAL;
		return -1;
	}
	memset((void *)start, 0, end - start);
	return 0;
}

static int drop_bounding_set(void)
{
	/* PR_CAPBSET_DROP needs CAP_SETPCAP, so it must come before setresuid;
	 * afterwards even a setuid-root file could not regain a capability. */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

static int switch_ids(uid_t uid)
{
	/* setresuid from 0 to non-zero ids clears the permitted and effective
	 * capability sets (capabilities(7), "Effect of user ID changes"). */
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		return -1;
	if (getuid() != uid || geteuid() != uid || getgid() != uid) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

noreturn void sandbox_child(const struct sandbox_spec *s)
{
	char c;
	sigset_t none;

	/* The launcher blocks signals it reads from a signalfd; the mask
	 * survives fork and execve, so clear it before anything else. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* If the supervisor dies, the init dies, and with it the namespace.
	 * (getppid() is 0 here: the parent is outside our pid namespace.) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		sandbox_fail(s, STEP_PDEATHSIG);
	/* The supervisor attaches us to the run's cgroup, then sends one byte:
	 * nothing of the run may start outside its pids limit.  EOF without
	 * the byte means the supervisor died before PDEATHSIG was armed. */
	if (read(s->sync_fd, &c, 1) != 1)
		sandbox_fail(s, STEP_WAIT_CGROUP);
	/* After the attach, so the run sees its own cgroup as the root. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		sandbox_fail(s, STEP_CGROUP_NS);
	if (sethostname(SANDBOX_HOSTNAME, strlen(SANDBOX_HOSTNAME)) < 0)
		sandbox_fail(s, STEP_HOSTNAME);
	if (ns_loopback_up() < 0)
		sandbox_fail(s, STEP_LOOPBACK);
	/* Needs root in the mount namespace; private /proc needs the new pid ns. */
	if (mount_build(s) < 0)
		sandbox_fail(s, STEP_MOUNTS);
	if (hide_cmdline() < 0)
		sandbox_fail(s, STEP_CMDLINE);
	/* No core files (they would land in the workspace), and no core_pattern
	 * pipe helper (`|`: systemd-coredump, apport; root, outside the run's
	 * cgroup, fed what the run's crash hands it): such a helper ignores
	 * the limit but for the value 1 (fs/coredump.c), and a file core needs
	 * a page.  The seccomp filter keeps the run from lowering it to 0.  A
	 * socket pattern (`@`, Linux 6.16+) ignores every limit: start-up and
	 * --doctor warn of it. */
	struct rlimit nocore = {1, 1};
	if (setrlimit(RLIMIT_CORE, &nocore) < 0 || drop_bounding_set() < 0)
		sandbox_fail(s, STEP_CAPS);
	if (switch_ids(s->uid) < 0)
		sandbox_fail(s, STEP_IDS);
	/* A uid change clears the parent-death signal (prctl(2)): arm it again,
	 * then make sure the supervisor did not die in between (it holds the
	 * sync pipe's write end until the run is over: POLLHUP = gone). */
	struct pollfd alive = {.fd = s->sync_fd, .events = POLLIN};
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&alive, 1, 0) != 0)
		sandbox_fail(s, STEP_PDEATHSIG);
	close(s->sync_fd);
	sandbox_as_run(s); /* the run's uid from here: asrun/sandbox_run.c */
}
