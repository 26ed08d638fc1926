/*
 * front.c - the front process (see front.h): drop to its own uid, lock
 * itself down, serve HTTPS until SIGTERM.
 */
#include "front.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <linux/filter.h>
#include <microhttpd.h>

#include "log.h"
#include "seccomp.h"

static int drop_privileges(uid_t uid)
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

int front_main(struct front *f, int ready_fd)
{
	struct sock_fprog filter;
	char err[256];
	sigset_t mask;
	int sig;

	log_set_prefix("front");
	/* Nothing the front holds needs root: its inputs were read before the
	 * fork, and the launcher does everything privileged. */
	if (drop_privileges(f->uid) < 0) {
		log_warn("the front could not drop privileges to uid %u: %s", f->uid, strerror(errno));
		return 1;
	}
	/* Before any thread exists, so every thread inherits the filter. */
	if (seccomp_build_front(&filter, err, sizeof(err)) < 0 || seccomp_apply(&filter) < 0) {
		log_warn("the front could not load its seccomp filter: %s", err);
		return 1;
	}
	seccomp_prog_free(&filter);
	struct MHD_Daemon *d = http_start(f);
	if (!d) {
		log_warn("the HTTPS server did not start (check the TLS certificate and key)");
		return 1;
	}
	char one = 1;
	(void)!write(ready_fd, &one, 1);
	close(ready_fd);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	for (;;) {
		if (sigwait(&mask, &sig) != 0)
			continue;
		if (sig == SIGTERM || sig == SIGINT)
			break;
	}
	/* Waits for the connection threads; their runs are being stopped by
	 * the launcher, which got the same signal. */
	MHD_stop_daemon(d);
	return 0;
}
