/*
 * frontexec.c - see frontexec.h.
 *
 * The front is never a copy of root: a fork that drops to the front's uid
 * and execs a fresh image (OpenBSD's proc_exec()).  The executable is
 * opened by root once and executed from that descriptor (execveat with
 * AT_EMPTY_PATH), so the front's uid needs no search right on the path
 * (a checkout under /root) and nobody can swap the file in between.
 */
#include "frontexec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "handover.h"

/* Where our other executables may be, relative to our own: beside it (the
 * build tree) or in PREFIX/libexec/sharness (installed). */
static const char *const places[] = {"", "/../libexec/sharness"};

int frontexec_open(const char *name, char *path, size_t len, char *err, size_t errlen)
{
	char exe[PATH_MAX];
	struct stat self, st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || stat("/proc/self/exe", &self) < 0) {
		snprintf(err, errlen, "cannot find our own executable: %s", strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	const char *dir = dirname(exe);
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		snprintf(path, len, "%s%s/%s", dir, places[i], name);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		/* Root starts it (the front, a run's file actor): it must be as
		 * trusted as we are. */
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != self.st_uid) ||
		    (st.st_mode & (S_IWGRP | S_IWOTH)) || !(st.st_mode & S_IXOTH)) {
			close(fd);
			snprintf(err, errlen,
			         "%s must be a regular file owned by root, executable by all and writable by its owner "
			         "only; reinstall sharness",
			         path);
			return -1;
		}
		return fd;
	}
	snprintf(err, errlen,
		 "%s is neither beside %s/sharnessd nor in %s/../libexec/sharness; "
		 "install them all (make install, or the package)",
		 name, dir, dir);
	return -1;
}

static int drop_to(uid_t uid)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		return -1;
	if (geteuid() == 0 || getuid() != uid)
		return errno = EPERM, -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

pid_t frontexec_spawn(int exe_fd, const struct frontexec_fds *f, uid_t uid)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	const int fds[HANDOVER_FD_COUNT - 3] = {f->ctl, f->ready, f->listen, f->audit, f->doc, f->tls_key, f->secrets};
	static char *const argv[] = {"sharnessd-front", "--front", NULL};
	static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	int exe = fdio_place(fds, HANDOVER_FD_COUNT - 3, exe_fd);
	if (exe < 0 || drop_to(uid) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(126);
	/* The blocked set (SIGTERM, SIGINT, SIGHUP, SIGCHLD: the front reads
	 * them with signalfd) and SIGPIPE ignored carry over the exec. */
	syscall(SYS_execveat, exe, "", argv, envp, AT_EMPTY_PATH);
	/* Only this process is left to say why (the parent is single-threaded:
	 * stdio is safe here). */
	fprintf(stderr, "sharnessd: cannot exec the front as uid %u: %s\n", (unsigned)uid, strerror(errno));
	_exit(127);
}
