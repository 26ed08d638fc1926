/*
 * front.c - the front process (see front.h): drop to its own uid, lock
 * itself down, serve HTTPS until SIGTERM.
 */
#include "front.h"

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <linux/filter.h>
#include <microhttpd.h>

#include "connguard.h"
#include "log.h"
#include "privsep.h"
#include "scrub.h"
#include "seccomp.h"

/* Handshake, headers and a verified certificate must come within this many
 * seconds of connecting, however slowly the bytes trickle (connguard.h). */
#define UNVERIFIED_DEADLINE_S 10

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

/* The launcher reopened the audit log (SIGHUP): switch to the new file.
 * dup2 replaces the descriptor atomically under the writer threads. */
static void take_audit_fd(struct front *f)
{
	struct privsep_header h;
	int fd = -1;
	ssize_t n = privsep_recv(f->ctl, &h, sizeof(h), &fd, 1);
	if (n == (ssize_t)sizeof(h) && privsep_header_check(&h, PRIVSEP_AUDIT_FD) == 0 && fd >= 0)
		dup3(fd, f->audit_fd, O_CLOEXEC);
	if (fd >= 0)
		close(fd);
}

int front_main(struct front *f, int ready_fd)
{
	struct sock_fprog filter;
	char err[256];
	sigset_t mask;

	log_set_prefix("front");
	/* The secret filter is built here, still as root (the secrets file and
	 * the key are root's), so that the launcher never holds it: Vectorscan
	 * keeps copies of short needles in memory nobody can wipe. */
	struct scrub_rules *scrub = scrub_rules_new(f->cfg->secrets_file, f->cfg->tls_key, err, sizeof(err));
	if (!scrub) {
		log_warn("%s", err);
		return 1;
	}
	if (scrub_vault_count(scrub) != f->vault_keys) {
		log_warn("the secrets file changed while the daemon started (%zu keys, then %zu); start it again",
		         f->vault_keys, scrub_vault_count(scrub));
		return 1;
	}
	f->scrub = scrub;
	/* Nothing else the front holds needs root: its inputs were read before
	 * the fork, and the launcher does everything privileged. */
	if (drop_privileges(f->uid) < 0) {
		log_warn("the front could not drop privileges to uid %u: %s", f->uid, strerror(errno));
		return 1;
	}
	/* The uid change cleared the parent-death signal (prctl(2)): arm it
	 * again, then check the launcher did not die in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != f->launcher_pid)
		return 1;
	/* Before any thread exists, so every thread inherits the filter. */
	if (seccomp_build_front(&filter, err, sizeof(err)) < 0 || seccomp_apply(&filter) < 0) {
		log_warn("the front could not load its seccomp filter: %s", err);
		return 1;
	}
	seccomp_prog_free(&filter);
	f->guard = connguard_new(UNVERIFIED_DEADLINE_S);
	if (!f->guard) {
		log_warn("the front is out of memory");
		return 1;
	}
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
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	for (;;) {
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = f->ctl, .events = POLLIN}};
		int n = poll(p, 2, 1000);
		unsigned cut = connguard_sweep(f->guard);
		if (cut)
			log_info("cut %u connection(s) that showed no verified certificate within %d s", cut,
			         UNVERIFIED_DEADLINE_S);
		if (n <= 0)
			continue;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			take_audit_fd(f);
		else if (p[1].revents)
			break; /* the launcher is gone */
	}
	/* The launcher stopped every run before telling us; let the last
	 * replies (503) leave before the connections are shut down. */
	MHD_quiesce_daemon(d);
	for (int i = 0; i < 50 && atomic_load(&f->runs) > 0; i++)
		usleep(20000);
	usleep(100000);
	MHD_stop_daemon(d);
	connguard_free(f->guard);
	return 0;
}
