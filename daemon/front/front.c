/*
 * front.c - the front process (see front.h): check it holds no privilege,
 * build the filter, lock itself down, serve HTTPS from one event loop
 * (loop.h) until SIGTERM, then let the last replies leave.
 */
#include "front.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <linux/filter.h>
#include <microhttpd.h>

#include "connguard.h"
#include "peeruid.h"
#include "log.h"
#include "loop.h"
#include "privsep.h"
#include "procstatus.h"
#include "runflow.h"
#include "scrub.h"
#include "lockdown.h"
#include "scrub_vault.h"
#include "tls.h"

/* Handshake, headers and a verified certificate must come within this many
 * seconds of connecting, however slowly the bytes trickle (connguard.h). */
#define UNVERIFIED_DEADLINE_S 10

/* The front never holds root: root dropped it to its own uid, emptied the
 * bounding set and set no_new_privs before the exec.  Check rather than
 * trust: a front started any other way refuses to serve. */
static int check_unprivileged(uid_t uid)
{
	uid_t r, e, s;
	char buf[PROCSTATUS_MAX];
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid || r == 0 ||
	    procstatus_read(0, buf, sizeof(buf)) < 0)
		return -1;
	static const char *const masks[] = {"CapPrm", "CapEff", "CapBnd", "CapAmb"};
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		const char *v = procstatus_find(buf, masks[i]);
		if (!v || strspn(v, "0") != 16 || (v[16] != '\n' && v[16] != '\0'))
			return -1;
	}
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : -1;
}

/* The launcher reopened the audit log (SIGHUP): switch to the new file.
 * dup3 replaces the descriptor atomically under the proxy's threads. */
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

static bool stopping;

static void on_signal(struct loop_watch *w, uint32_t revents)
{
	struct signalfd_siginfo si;
	(void)revents;
	(void)!read(w->fd, &si, sizeof(si));
	stopping = true;
}

static void on_ctl(struct loop_watch *w, uint32_t revents)
{
	if (revents & EPOLLIN)
		take_audit_fd(w->arg);
	else
		stopping = true; /* the launcher is gone */
}

/* libmicrohttpd's epoll descriptor only wakes the loop: every turn ends
 * with MHD_run (turn()). */
static void on_mhd(struct loop_watch *w, uint32_t revents)
{
	(void)w;
	(void)revents;
}

static void on_cut(unsigned n, bool crowded)
{
	static unsigned long crowded_cuts;
	if (!crowded) {
		log_info("cut %u connection(s) that showed no verified certificate within %d s", n,
		         UNVERIFIED_DEADLINE_S);
		return;
	}
	crowded_cuts++;
	if ((crowded_cuts & (crowded_cuts - 1)) == 0) /* the 1st, 2nd, 4th, ...: named, not logged whole */
		log_info("cut the oldest connection that showed no verified certificate yet, for a newer one: "
		         "three quarters of limits.connections wait for one already (%lu such cuts so far)",
		         crowded_cuts);
}

static unsigned connections(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i ? i->num_connections : 0;
}

/* One turn: an event, a due timer, or libmicrohttpd's own timeout; then
 * libmicrohttpd's work.  In this external mode a resumed connection is
 * only seen by the next MHD_run, so every turn ends with one (its epoll
 * descriptor is polled with a zero timeout: cheap when nothing waits).
 * At the connection limit libmicrohttpd takes the listening socket out of
 * its epoll set and puts it back only at the start of a later MHD_run:
 * when this one closed connections, run once more, or nothing would wake
 * the loop to accept again (a flood that filled the limit would leave the
 * listening socket out for good). */
static void turn(struct front *f, struct MHD_Daemon *d, int64_t max_ms)
{
	MHD_UNSIGNED_LONG_LONG t;
	int64_t wait = max_ms;
	if (MHD_get_timeout(d, &t) == MHD_YES && (wait < 0 || (int64_t)t < wait))
		wait = t > INT32_MAX ? INT32_MAX : (int64_t)t;
	(void)loop_once(f->loop, wait);
	unsigned before = connections(d);
	MHD_run(d);
	if (connections(d) < before)
		MHD_run(d);
}

/* Turn until `ms` passed, or (`until_idle`) no run holds a slot. */
static void turn_for(struct front *f, struct MHD_Daemon *d, int64_t ms, bool until_idle)
{
	int64_t end = loop_now_ms() + ms;
	for (int64_t now = loop_now_ms(); now < end && !(until_idle && f->runs == 0); now = loop_now_ms())
		turn(f, d, end - now);
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
	/* No netlink socket is made after the lockdown. */
	f->peer_diag = peeruid_open();
	if (f->peer_diag < 0)
		log_warn("the front cannot read the socket table (sock_diag: %s): a flood of connections from one "
		         "local account is cut oldest first, whoever holds them",
		         strerror(errno));
	/* Before any thread exists, so every thread inherits both locks. */
	if (lockdown_front(err, sizeof(err)) < 0) {
		log_warn("the front could not lock itself down: %s", err);
		return 1;
	}
	/* Strangers hold at most three quarters of the connection limit, so
	 * libmicrohttpd keeps accepting (connguard.h). */
	unsigned limit = f->cfg->connection_limit;
	f->guard = connguard_new(f->loop, UNVERIFIED_DEADLINE_S, limit - limit / 4, on_cut);
	if (!f->guard) {
		log_warn("the front is out of memory");
		return 1;
	}
	/* Made here, kept in memory only (tls.h): a restart voids every ticket. */
	f->tickets = tls_tickets_new();
	if (!f->tickets) {
		log_warn("the front could not make its session ticket key (GnuTLS's random generator failed)");
		return 1;
	}
	f->recent = tls_recent_new();
	if (!f->recent) {
		log_warn("the front is out of memory");
		return 1;
	}
	struct MHD_Daemon *d = http_start(f);
	const union MHD_DaemonInfo *di = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!di) {
		log_warn("the HTTPS server did not start (check the TLS certificate and key)");
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	struct loop_watch w_mhd, w_sig, w_ctl;
	if (sfd < 0 || loop_watch(f->loop, &w_mhd, di->epoll_fd, EPOLLIN, on_mhd, d) < 0 ||
	    loop_watch(f->loop, &w_sig, sfd, EPOLLIN, on_signal, f) < 0 ||
	    loop_watch(f->loop, &w_ctl, f->ctl, EPOLLIN, on_ctl, f) < 0) {
		log_warn("the front's event loop could not start: %s", strerror(errno));
		return 1;
	}
	char one = 1;
	(void)!write(ready_fd, &one, 1);
	close(ready_fd);

	while (!stopping)
		turn(f, d, -1);

	/* The launcher stopped every run before telling us: what waits for a
	 * person or a slot gets a 503, the runs' replies get a second to come
	 * (503s from the launcher), the rest a 503 of ours; then a moment for
	 * the last replies to leave.  No connection may stay suspended when
	 * libmicrohttpd stops. */
	MHD_quiesce_daemon(d);
	loop_unwatch(f->loop, &w_ctl);
	runflow_stop_all(f, false);
	turn_for(f, d, 1000, true);
	runflow_stop_all(f, true);
	turn_for(f, d, 100, false);
	MHD_stop_daemon(d);
	tls_tickets_free(f->tickets);
	tls_recent_free(f->recent);
	connguard_free(f->guard);
	return 0;
}
