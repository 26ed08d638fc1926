/*
 * front.c - the front process (see front.h): check it holds no privilege,
 * build the filter, lock itself down, serve HTTPS until SIGTERM.
 */
#include "front.h"

#include <errno.h>
#include <stdio.h>
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
#include "lockdown.h"
#include "scrub_vault.h"

/* Handshake, headers and a verified certificate must come within this many
 * seconds of connecting, however slowly the bytes trickle (connguard.h). */
#define UNVERIFIED_DEADLINE_S 10

/* The front never holds root: root dropped it to its own uid, emptied the
 * bounding set and set no_new_privs before the exec.  Check rather than
 * trust: a front started any other way refuses to serve. */
static int check_unprivileged(uid_t uid)
{
	uid_t r, e, s;
	char buf[4096];
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid || r == 0)
		return -1;
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	static const char *const zero[] = {"\nCapPrm:\t0000000000000000", "\nCapEff:\t0000000000000000",
	                                   "\nCapBnd:\t0000000000000000", "\nCapAmb:\t0000000000000000", NULL};
	for (size_t i = 0; zero[i]; i++)
		if (!strstr(buf, zero[i]))
			return -1;
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : -1;
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

int front_main(struct front *f, struct scrub_sources *src, int ready_fd)
{
	char err[256];
	sigset_t mask;

	log_set_prefix("front");
	if (check_unprivileged(f->uid) < 0) {
		log_warn("the front must run as uid %u with no capability and no_new_privs; sharnessd starts it so",
		         f->uid);
		return 1;
	}
	/* The parent-death signal survives the exec; the launcher may still
	 * have died before it was armed. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != f->launcher_pid)
		return 1;
	/* The secret filter is built here, from the descriptors root opened
	 * (the files are root's): the launcher never holds it, because
	 * Vectorscan keeps copies of short needles in memory nobody can wipe. */
	struct scrub_rules *scrub = scrub_rules_from(src, err, sizeof(err));
	scrub_sources_close(src); /* nothing of root's stays open here */
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
	/* Before any thread exists, so every thread inherits both locks. */
	if (lockdown_front(err, sizeof(err)) < 0) {
		log_warn("the front could not lock itself down: %s", err);
		return 1;
	}
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
