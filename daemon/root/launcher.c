/*
 * launcher.c - the privileged event loop (see launcher.h).
 *
 * Single-threaded: poll on the control socket and a signalfd.  Per run it
 * checks the fixed message, takes a uid, and forks a supervisor that owns the
 * run from then on.  The uid comes back only when the supervisor exits
 * cleanly, i.e. after the run's cgroup was found empty and removed; a
 * supervisor that could not prove that quarantines the uid.
 */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auditfile.h"
#include "check.h"
#include "fdio.h"
#include "initclone.h"
#include "log.h"
#include "monotime.h"
#include "runcg.h"
#include "uidpool.h"

#define SUPERVISORS_MAX 1024

struct supervisor {
	pid_t pid;
	uid_t uid;
	int job_sock;          /* where its one request goes; -1 once sent */
	char run_id[RUN_ID_LEN + 1]; /* once sent: for the log of its end */
	uint32_t profile_id, workspace_id;
	bool ahead;            /* built before its request, at LAUNCHER_AHEAD_NICE */
	int64_t refill_at;     /* once sent: when its replacement is built, unless the run ends first (0: done) */
};

struct state {
	struct launcher *l;
	struct supervisor sv[SUPERVISORS_MAX];
	size_t n;
	pid_t front;
	bool stopping;
	bool front_told; /* SIGTERM sent to the front */
	bool ctl_gone;   /* the front closed the control socket */
	int exit_code;
};

/* A sandbox built `ahead`: its own group (pid 0: ours), at the lowest priority.
 * Both sides of spawn's fork call it, whichever runs first: the launcher
 * so that a boost in on_run always comes after it, the child because
 * niceness is a thread's, and a thread made before the launcher's call
 * (the init's donor, initclone.c) kept 0, and so did the init it cloned.
 * A child's call after on_run's boost is undone by supervise_run, which
 * boosts the group again once its request is in. */
static void lower_ahead(bool ahead, pid_t pid)
{
	if (ahead && (setpgid(pid, pid) < 0 || setpriority(PRIO_PROCESS, (id_t)pid, LAUNCHER_AHEAD_NICE) < 0))
		log_debug("a sandbox built ahead keeps its priority: %s", strerror(errno));
}

/* Fork a supervisor that prepares a sandbox for (profile, workspace) and
 * then waits for one request; `ahead`: none waits yet, build it at the lowest priority (launcher.h).
 * Returns its slot, or NULL (no uid, no slot, no fork). */
static struct supervisor *spawn(struct state *st, int ctl, uint32_t profile_id, uint32_t workspace_id, bool ahead)
{
	int sp[2];
	uid_t uid;

	if (st->n >= SUPERVISORS_MAX || uidpool_take(st->l->uids, &uid) < 0)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		uidpool_release(st->l->uids, uid);
		return NULL;
	}
	pid_t pid = fork();
	if (pid < 0) {
		uidpool_release(st->l->uids, uid);
		close(sp[0]);
		close(sp[1]);
		return NULL;
	}
	if (pid == 0) {
		/* Nothing of the launcher's but stdio, our own request socket (3)
		 * and the file actor's executable (4): not the control socket,
		 * not other runs' sockets or channels. */
		(void)ctl;
		lower_ahead(ahead, 0);
		if (fdio_place(&sp[1], 1, st->l->actor_exe) != 4 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
			_exit(3);
		st->l->actor_exe = 4;
		supervise_run(st->l, profile_id, workspace_id, uid, 3, ahead);
	}
	close(sp[1]);
	lower_ahead(ahead, pid);
	struct supervisor *sv = &st->sv[st->n++];
	*sv = (struct supervisor){.pid = pid, .uid = uid, .job_sock = sp[0], .profile_id = profile_id,
	                          .workspace_id = workspace_id, .ahead = ahead};
	return sv;
}

/* Keep `prewarm` sandboxes waiting for each profile on the first workspace. */
static void refill(struct state *st, int ctl, uint32_t profile_id)
{
	unsigned waiting = 0;
	for (size_t i = 0; i < st->n; i++)
		waiting += st->sv[i].job_sock >= 0 && st->sv[i].profile_id == profile_id && st->sv[i].workspace_id == 0;
	while (!st->stopping && waiting++ < st->l->cfg->prewarm)
		if (!spawn(st, ctl, profile_id, 0, st->l->ahead_low))
			break;
}

/* Builds the replacements of runs older than LAUNCHER_REFILL_MS (a run's
 * end builds its own: reap); returns the ms until the next is due, or -1. */
static int refill_due(struct state *st, int ctl)
{
	int64_t now = monotime_ms(), next = -1;
	for (size_t i = 0; i < st->n; i++) {
		if (!st->sv[i].refill_at)
			continue;
		if (st->sv[i].refill_at <= now) {
			st->sv[i].refill_at = 0;
			refill(st, ctl, st->sv[i].profile_id);
		} else if (next < 0 || st->sv[i].refill_at - now < next) {
			next = st->sv[i].refill_at - now;
		}
	}
	return (int)next;
}

static unsigned busy(const struct state *st)
{
	unsigned n = 0;
	for (size_t i = 0; i < st->n; i++)
		n += st->sv[i].job_sock < 0;
	return n;
}

static void on_run(struct state *st, int ctl)
{
	struct privsep_run req;
	int fds[2];
	const char *why = NULL;
	struct supervisor *sv = NULL;

	ssize_t r = privsep_recv(ctl, &req, sizeof(req), fds, 2);
	if (r < 0)
		log_warn("dropped a malformed message from the front: %s", strerror(errno));
	if (r == 0) {
		/* The end of the stream: the front exits (it never closes the
		 * socket before), or shut it and lives on, of no more use, which a
		 * poll would report again at once.  Read no more; once it is
		 * gone, reap() stops every run, as on any exit of the front. */
		st->ctl_gone = true;
		kill(st->front, SIGKILL);
	}
	if (r <= 0)
		return;
	int chan = fds[0], payload = fds[1];
	if (chan < 0)
		goto out;
	if ((why = check_chan(chan, st->l->front_uid)) != NULL) {
		log_warn("refused a run request from the front: %s", why);
		goto out; /* no answer: root writes to no other socket */
	}
	if (payload < 0 || r != (ssize_t)sizeof(req))
		why = "malformed message";
	else
		why = check_run(st->l->profiles, st->l->cfg->n_workspaces, &req); /* check.c argues it */
	if (why) {
		log_warn("refused a run request from the front: %s", why);
		privsep_send_error(chan, PRIVSEP_ERR_INVALID, "The launcher refused the request: %s.", why);
		goto out;
	}
	if (st->stopping) {
		privsep_send_error(chan, PRIVSEP_ERR_CAPACITY, "The daemon is shutting down; retry later.");
		goto out;
	}
	/* The front admits at most max_runs and frees a slot at the run's
	 * channel's EOF (its supervisor exited), bounded at 5 s; we count a
	 * supervisor until it is reaped.  So our own bound, kept against a
	 * front that would lie, leaves room for those. */
	if (busy(st) >= 2 * st->l->cfg->max_runs) {
		privsep_send_error(chan, PRIVSEP_ERR_CAPACITY,
		                   "All %u run slots are busy; retry in a moment.", st->l->cfg->max_runs);
		goto out;
	}
	/* A sandbox prepared for exactly this profile and workspace, else a new one. */
	for (size_t i = 0; i < st->n && !sv; i++)
		if (st->sv[i].job_sock >= 0 && st->sv[i].profile_id == req.profile_id &&
		    st->sv[i].workspace_id == req.workspace_id)
			sv = &st->sv[i];
	if (!sv)
		sv = spawn(st, ctl, req.profile_id, req.workspace_id, false);
	if (!sv) {
		privsep_send_error(chan, PRIVSEP_ERR_CAPACITY,
		                   "No uid or process slot is free for a new run; retry in a moment.");
		goto out;
	}
	/* A sandbox built ahead may still be building, at the lowest
	 * priority: from now on a request waits for it (supervise_run). */
	if (sv->ahead && setpriority(PRIO_PGRP, (id_t)sv->pid, st->l->nice) < 0)
		log_debug("a sandbox built ahead is set back by its supervisor: %s", strerror(errno));
	int pass[2] = {chan, payload};
	if (privsep_send(sv->job_sock, &req, sizeof(req), pass, 2) < 0)
		privsep_send_error(chan, PRIVSEP_ERR_SETUP, "The run's supervisor is gone; retry.");
	close(sv->job_sock);
	sv->job_sock = -1;
	memcpy(sv->run_id, req.run_id, sizeof(sv->run_id)); /* checked: check_run */
	sv->refill_at = monotime_ms() + LAUNCHER_REFILL_MS;
out:
	if (chan >= 0)
		close(chan);
	if (payload >= 0)
		close(payload);
}

/* SIGHUP: log rotation.  The front cannot open files (it has dropped to
 * its own uid and the log is root's), so we open and hand it the fd. */
static void reopen_audit(struct state *st, int ctl)
{
	struct privsep_header h;
	int fd = audit_open(st->l->cfg->audit_log);
	if (fd < 0) {
		log_warn("cannot reopen the audit log %s: %s", st->l->cfg->audit_log, strerror(errno));
		return;
	}
	privsep_header_init(&h, PRIVSEP_AUDIT_FD);
	/* Never blocking: a front that stops reading must not stall root. */
	if (privsep_send_nowait(ctl, &h, sizeof(h), &fd, 1) < 0)
		log_warn("cannot pass the reopened audit log to the front: %s", strerror(errno));
	else
		log_info("reopened the audit log %s", st->l->cfg->audit_log);
	close(fd);
}

static void signal_all(struct state *st, int sig)
{
	for (size_t i = 0; i < st->n; i++)
		kill(st->sv[i].pid, sig);
}

/* A request waiting on the control socket goes first: removing a cgroup
 * can take milliseconds (v1 memory), and the next run should not wait for
 * the last one's. */
static void serve_waiting(struct state *st, int ctl)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	if (st->front > 0 && !st->ctl_gone && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
		on_run(st, ctl);
}

static void reap(struct state *st, int ctl)
{
	int ws;
	pid_t pid;
	while (serve_waiting(st, ctl), (pid = waitpid(-1, &ws, WNOHANG)) > 0) {
		if (pid == st->front) {
			st->front = -1;
			if (!st->stopping) {
				log_warn("the front exited (status 0x%x); stopping every run and exiting", ws);
				st->exit_code = 1;
			}
			st->stopping = true;
			signal_all(st, SIGTERM);
			continue;
		}
		for (size_t i = 0; i < st->n; i++) {
			if (st->sv[i].pid != pid)
				continue;
			/* The supervisor ran as the run's uid at the end, which may
			 * not remove a cgroup: we do, once it is gone. */
			char name[32];
			snprintf(name, sizeof(name), "run-%u", st->sv[i].uid);
			if (runcg_remove(name) < 0) {
				log_warn("run %s: its cgroup %s could not be removed (%s); uid %u is quarantined",
				         st->sv[i].run_id[0] ? st->sv[i].run_id : "(none yet)", name, strerror(errno),
				         st->sv[i].uid);
				uidpool_quarantine(st->l->uids, st->sv[i].uid);
			} else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
				uidpool_release(st->l->uids, st->sv[i].uid);
			} else {
				/* We cannot prove no process of this uid survives. */
				log_warn("run supervisor %d ended with status 0x%x; uid %u is quarantined", pid, ws,
				         st->sv[i].uid);
				uidpool_quarantine(st->l->uids, st->sv[i].uid);
			}
			if (st->sv[i].job_sock >= 0)
				close(st->sv[i].job_sock);
			struct supervisor gone = st->sv[i];
			st->sv[i] = st->sv[--st->n];
			if (gone.refill_at) /* its run ended first: the replacement is built now */
				refill(st, ctl, gone.profile_id);
			break;
		}
	}
}

int launcher_serve(struct launcher *l, int ctl, pid_t front_pid)
{
	struct state *st = calloc(1, sizeof(*st));
	sigset_t mask;
	if (!st)
		return 1;
	st->l = l;
	st->front = front_pid;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		log_warn("signalfd: %s", strerror(errno));
		free(st);
		return 1;
	}
	initclone_warm_up();
	for (uint32_t p = 0; p < l->profiles->n; p++)
		refill(st, ctl, p);
	while (st->front > 0 || st->n > 0) {
		/* While the front lives, keep reading it even when stopping: every
		 * request must get an answer (503), or its thread would wait on
		 * its run channel forever.  A front told to stop gets 5 s. */
		struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN},
		                        {.fd = st->front > 0 && !st->ctl_gone ? ctl : -1, .events = POLLIN}};
		int due = refill_due(st, ctl);
		int n = poll(pfd, 2, st->front_told ? 5000 : due);
		if (n == 0 && st->front_told && st->front > 0) {
			log_warn("the front did not stop within 5 s of SIGTERM; killing it");
			kill(st->front, SIGKILL);
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("poll: %s", strerror(errno));
			break;
		}
		bool signalled = pfd[0].revents & POLLIN;
		if (signalled) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
					if (!st->stopping)
						log_info("shutting down: stopping %u run(s) and %zu waiting sandbox(es)",
						         busy(st), st->n - busy(st));
					/* Runs first, so their requests still get an
					 * answer (503); the front when none is left. */
					st->stopping = true;
					signal_all(st, SIGTERM);
				} else if (si.ssi_signo == SIGHUP && st->front > 0) {
					reopen_audit(st, ctl);
				}
			}
		}
		/* The polled request before reaping: reap() serves the next ones
		 * itself, so the poll's word on ctl is stale after it. */
		if (pfd[1].revents) /* a request, or the end of the stream (POLLHUP): on_run */
			on_run(st, ctl);
		if (signalled) {
			reap(st, ctl);
			if (st->stopping && st->n == 0 && st->front > 0 && !st->front_told) {
				kill(st->front, SIGTERM);
				st->front_told = true;
			}
		}
	}
	int code = st->exit_code;
	close(sfd);
	free(st);
	return code;
}
