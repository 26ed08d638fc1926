/*
 * watch.c - a run's life once its supervisor is the run's uid.
 *
 * root/supervise.c built the sandbox, checked the request and dropped to
 * the run's uid (become_run says why nothing here needs more).  From
 * here: the job goes to the sandbox's init and the command's pipes to the
 * front; then one poll loop enforces the timeout and the disk bounds,
 * answers the run's seccomp notifications (notify.c) and its file actor's
 * answers, and notices the init's exit record, the front giving up and
 * the daemon stopping.  At the end what is left is killed, the usage read
 * and the exit record sent; the launcher removes the cgroup after we exit.
 *
 * Trust: runs as the run's uid.  What the run says (its status record,
 * its calls' arguments in notify.c) is bounded and copied before use.
 */
#include "watch.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "job.h"
#include "log.h"
#include "notify.h"
#include "runcg.h"
#include "sandbox.h"
#include "supervise.h"
#include "usage.h"
#include "utf8.h"

#define DENIALS_LOGGED 5 /* per run: a loop of refused connects is not a flood of log lines */
#define REPLY_WAIT_MS 500 /* after a kill, before the reply: SPEC §6 wants it within 1 s of the deadline */

static uint64_t us_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000000 + (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000);
}

static uint64_t ms_since(const struct timespec *t0)
{
	return us_since(t0) / 1000;
}

/*
 * The disk a writable run may consume (SPEC §15.2, issue 12).  No quota
 * works on every file system the workspace may live on, so the supervisor
 * watches statvfs(2) of the workspace's file system every DISK_TICK_MS
 * while the run lives and kills it (as a timeout does) once it has
 * consumed more than limits.disk_max_bytes or limits.disk_max_inodes since
 * it started, or once its writing has taken the free space or inodes below
 * limits.disk_reserve_* (the audit log and the next run need room).  The
 * count is the file system's, so a concurrent writer counts too: the bound
 * is on the file system, never looser than the run's own share.  The slack
 * is what the run writes in one tick; fallocate, which reserves gigabytes in
 * one call, is EOPNOTSUPP in the run's seccomp filter for that reason.
 */
#define DISK_TICK_MS 50

/* Every file system a run may write to on the host: the workspace's and
 * each of the profile's write_paths (one entry per device). */
struct disk_watch {
	bool on;
	size_t n;
	struct disk_fs {
		const char *path;
		int fd;
		dev_t dev;
		uint64_t bfree0, ffree0; /* at the run's start, in bytes and inodes */
		uint64_t bavail0, favail0; /* the same, for non-root: against the reserve */
		bool has_inodes;
	} fs[1 + PROFILE_LIST_MAX];
};

static int disk_stat(int fd, uint64_t *bfree, uint64_t *bavail, uint64_t *ffree, uint64_t *favail,
                     bool *has_inodes)
{
	struct statvfs v;
	if (fstatvfs(fd, &v) < 0)
		return -1;
	*bfree = (uint64_t)v.f_bfree * v.f_frsize;
	*bavail = (uint64_t)v.f_bavail * v.f_frsize;
	*ffree = v.f_ffree;
	*favail = v.f_favail;
	/* btrfs and an unbounded tmpfs report no inode count at all */
	*has_inodes = v.f_files != 0;
	return 0;
}

static void disk_add(struct disk_watch *w, const struct watch_disk *d)
{
	struct stat st;
	if (w->n >= sizeof(w->fs) / sizeof(w->fs[0]) || fstat(d->fd, &st) < 0)
		return;
	for (size_t i = 0; i < w->n; i++)
		if (w->fs[i].dev == st.st_dev)
			return;
	struct disk_fs *f = &w->fs[w->n];
	if (disk_stat(d->fd, &f->bfree0, &f->bavail0, &f->ffree0, &f->favail0, &f->has_inodes) < 0)
		return;
	f->path = d->path;
	f->fd = d->fd;
	f->dev = st.st_dev;
	w->n++;
}

static void disk_start(const struct watch *r, struct disk_watch *w)
{
	w->n = 0;
	for (size_t i = 0; i < r->n_disk; i++)
		disk_add(w, &r->disk[i]);
	w->on = w->n > 0;
}

/* Which file system, for the reply's one sentence of 256 bytes. */
static void fs_name(const struct watch *r, const struct disk_fs *f, char *where, size_t len)
{
	if (f->path == r->workspace)
		snprintf(where, len, "the workspace's file system");
	else
		snprintf(where, len, "the file system of %.*s", (int)utf8_cut(f->path, strlen(f->path), 40), f->path);
}

/* 1 and `msg` set when a file system the run may write was below a
 * reserve at its start (disk_start's look): it would write there before
 * the first tick (up to megabytes a run, and a loop of runs on and on:
 * review s37 lifecycle L1), so it does not start. */
static int disk_below_reserve(const struct watch *r, const struct disk_watch *w, char *msg, size_t len)
{
	const struct config *c = r->cfg;
	for (size_t i = 0; w->on && i < w->n; i++) {
		uint64_t bavail = w->fs[i].bavail0, favail = w->fs[i].favail0;
		bool bytes = bavail < c->disk_reserve_bytes;
		if (!bytes && !(w->fs[i].has_inodes && favail < c->disk_reserve_inodes))
			continue;
		char where[64];
		fs_name(r, &w->fs[i], where, sizeof(where));
		snprintf(msg, len, "The run was not started: only %llu %s are free on %s, below %s (%llu); free space "
		         "there, or use a profile that does not write there.",
		         (unsigned long long)(bytes ? bavail : favail), bytes ? "bytes" : "inodes", where,
		         bytes ? "limits.disk_reserve_bytes" : "limits.disk_reserve_inodes",
		         (unsigned long long)(bytes ? c->disk_reserve_bytes : c->disk_reserve_inodes));
		return 1;
	}
	return 0;
}

/* 1 and `msg` set when the run went past a bound on one file system. */
static int disk_over_fs(const struct watch *r, const struct disk_fs *f, char *msg, size_t len)
{
	const struct config *c = r->cfg;
	uint64_t bfree, bavail, ffree, favail;
	bool has_inodes;

	if (disk_stat(f->fd, &bfree, &bavail, &ffree, &favail, &has_inodes) < 0)
		return 0;
	uint64_t bytes = f->bfree0 > bfree ? f->bfree0 - bfree : 0;
	uint64_t inodes = has_inodes && f->ffree0 > ffree ? f->ffree0 - ffree : 0;
	const char *what = NULL;
	uint64_t used = 0, bound = 0;
	if (bytes > c->disk_max_bytes)
		what = "limits.disk_max_bytes", used = bytes, bound = c->disk_max_bytes;
	else if (inodes > c->disk_max_inodes)
		what = "limits.disk_max_inodes", used = inodes, bound = c->disk_max_inodes;
	else if (bytes > 0 && bavail < c->disk_reserve_bytes)
		what = "limits.disk_reserve_bytes", used = bavail, bound = c->disk_reserve_bytes;
	else if (inodes > 0 && has_inodes && favail < c->disk_reserve_inodes)
		what = "limits.disk_reserve_inodes", used = favail, bound = c->disk_reserve_inodes;
	if (!what)
		return 0;
	char where[64];
	fs_name(r, f, where, sizeof(where));
	const char *unit = strstr(what, "inodes") ? "inodes" : "bytes";
	if (strstr(what, "reserve"))
		snprintf(msg, len, "The run was stopped: its writes left only %llu %s free on %s, below %s (%llu); "
		         "free space there (what it wrote is still there).",
		         (unsigned long long)used, unit, where, what, (unsigned long long)bound);
	else
		snprintf(msg, len, "The run was stopped: it consumed %llu %s of %s, more than %s (%llu); what it "
		         "wrote is still there; remove it, or raise the limit.",
		         (unsigned long long)used, unit, where, what, (unsigned long long)bound);
	return 1;
}

static int disk_over(const struct watch *r, const struct disk_watch *w, char *msg, size_t len)
{
	for (size_t i = 0; w->on && i < w->n; i++)
		if (disk_over_fs(r, &w->fs[i], msg, len))
			return 1;
	return 0;
}


/* The job to the init and the command's pipes (and the proxy's door) to
 * the front: the run starts. */
static void hand_over(struct watch *w)
{
	struct sandbox_ready *sb = w->sb;
	size_t job_len;
	char *job = job_build(w->p, w->req, w->cwd, w->cmd, w->env, &job_len);
	int sent = job ? fdio_write_all(sb->job_w, job, job_len) : -1;
	free(job);
	fdio_close(&sb->job_w);
	if (sent < 0) {
		privsep_send_error(w->chan, PRIVSEP_ERR_SETUP, "%s",
		                   job ? "The sandbox did not take its job." : "The run's supervisor is out of memory.");
		_exit(supervise_stop(sb) < 0 ? 3 : 0);
	}
	if (!w->req->has_stdin)
		fdio_close(&sb->in_w);
	struct privsep_started started = {.uid = w->uid, .has_stdin = w->req->has_stdin, .has_proxy = sb->listener >= 0};
	privsep_header_init(&started.h, PRIVSEP_STARTED);
	int fds[4] = {sb->out_r, sb->err_r, sb->in_w, sb->listener};
	privsep_send_nowait(w->chan, &started, sizeof(started), fds, 4);
	fdio_close(&sb->out_r);
	fdio_close(&sb->err_r);
	fdio_close(&sb->in_w);
	fdio_close(&sb->listener);
}

/* The operator's log names the lock, never the call's path or address:
 * the run chose them and may have put a secret there; the reply and the
 * audit line carry it, through the front's filter.  The daemon's own
 * failures are whole: their text is ours, and says what to grant. */
static void log_refusal(const char *run_id, const struct notify_run *nr)
{
	static const char *const what[] = {
	    [PRIVSEP_DENIAL_UNIX] = "a connect to a unix socket not the run's",
	    [PRIVSEP_DENIAL_TCP] = "a TCP connect other than to the proxy",
	    [PRIVSEP_DENIAL_GIT] = "a write that would create or change a .git",
	    [PRIVSEP_DENIAL_MODE] = "a setuid, setgid or world-writable mode",
	    [PRIVSEP_DENIAL_GIT_RUNS] = "a write to a path the person's git runs",
	    [PRIVSEP_DENIAL_AGENT] = "a write to an AI agent's configuration",
	};
	uint32_t k = nr->denied_kind;
	if (k == PRIVSEP_DENIAL_DAEMON) {
		log_info("run %s: refused %s", run_id, nr->denied);
		return;
	}
	log_info("run %s: refused %s (the reply's denials name it)", run_id,
	         k < sizeof(what) / sizeof(what[0]) && what[k] ? what[k] : "a call");
}

/* The exit record's exit, signal or setup failure, from the init's last
 * status (have_status: it sent one). */
static void exit_fields(struct privsep_exit *ex, bool have_status, struct sandbox_status *sst, const char *run_id)
{
	if (have_status && sst->kind == SANDBOX_STATUS_SETUP_FAILED) {
		ex->error = PRIVSEP_ERR_SETUP;
		supervise_failure(ex->message, sizeof(ex->message), sst);
		log_warn("run %s: %s", run_id, ex->message);
	} else if (have_status && sst->kind == SANDBOX_STATUS_EXIT && !ex->timed_out && !ex->disk_limited) {
		if (WIFEXITED(sst->wstatus)) {
			ex->exit_code = WEXITSTATUS(sst->wstatus);
		} else {
			ex->exit_code = -1;
			ex->signal = WTERMSIG(sst->wstatus);
		}
	} else if (!ex->error) {
		/* The init died without a word: it was killed (timeout, abort). */
		ex->exit_code = -1;
		ex->signal = SIGKILL;
	}
}

/* The front shut its side of the channel while the sandbox was built or
 * rebuilt (the client hung up, a DELETE): the command is not started, so
 * nothing of a run nobody waits for happens, and the slot the front frees
 * at the channel's EOF comes back sooner. */
static bool front_left(int chan)
{
	struct pollfd pfd = {.fd = chan, .events = POLLRDHUP};
	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

noreturn void watch_run(struct watch *w)
{
	struct sandbox_ready *sb = w->sb;
	struct privsep_exit ex;
	struct disk_watch disk = {0};
	uint64_t checked_us = us_since(&w->t0);

	if (front_left(w->chan)) {
		log_info("run %s: the front gave up on the run before it started; not starting it", w->req->run_id);
		_exit(supervise_stop(sb) < 0 ? 3 : 0);
	}
	disk_start(w, &disk);
	if (disk_below_reserve(w, &disk, ex.message, sizeof(ex.message))) {
		log_info("run %s: %s", w->req->run_id, ex.message);
		privsep_send_error(w->chan, PRIVSEP_ERR_DISK, "%s", ex.message);
		_exit(supervise_stop(sb) < 0 ? 3 : 0);
	}
	hand_over(w);
	uint64_t started_us = us_since(&w->t0);
	struct usage_files usage;
	usage_open(sb->cg, &usage); /* while the command starts */

	memset(&ex, 0, sizeof(ex));
	uint64_t deadline = (uint64_t)w->req->timeout_s * 1000;
	struct notify_run nr = {.uid = w->uid, .actor = sb->actor, .actor_err = sb->actor_err,
	                        .tcp_port = w->p->network == PROFILE_NETWORK_PROXY ? PRIVSEP_PROXY_PORT : 0};
	sb->actor.pid = 0; /* the run's now: notify_stop ends it */
	bool have_status = false;
	uint64_t disk_next = 0; /* ms since t0 of the next disk look */
	struct sandbox_status sst = {0};
	for (;;) {
		uint64_t now = ms_since(&w->t0);
		int wait_ms = now >= deadline ? 0 : (int)(deadline - now);
		if (disk.on && wait_ms > DISK_TICK_MS)
			wait_ms = DISK_TICK_MS;
		struct pollfd pfd[5] = {{.fd = sb->status_r, .events = POLLIN},
		                        {.fd = w->chan, .events = POLLRDHUP},
		                        {.fd = w->sfd, .events = POLLIN},
		                        {.fd = sb->notify, .events = POLLIN},
		                        {.fd = nr.actor.pid > 0 ? nr.actor.sock : -1, .events = POLLIN}};
		int n = poll(pfd, 5, wait_ms);
		if (n < 0 && errno == EINTR)
			continue;
		/* The deadline and the disk, first and whatever else happened: a
		 * run that writes sends a notification per call (actor.c), so the
		 * poll may never time out while it runs. */
		uint64_t t_now = ms_since(&w->t0);
		if (t_now >= deadline && !(n > 0 && pfd[0].revents)) {
			ex.timed_out = 1;
			supervise_kill(sb);
			break;
		}
		if (disk.on && t_now >= disk_next) {
			disk_next = t_now + DISK_TICK_MS;
			if (disk_over(w, &disk, ex.message, sizeof(ex.message))) {
				ex.disk_limited = 1;
				log_info("run %s: %s", w->req->run_id, ex.message);
				supervise_kill(sb);
				break;
			}
		}
		if (n > 0 && pfd[4].revents) {
			/* The actor's answer to a write of the run (notify.c). */
			unsigned denied = nr.n_denied;
			if (!(pfd[4].revents & POLLIN) || sb->notify < 0 || notify_actor_answer(sb->notify, &nr) < 0) {
				/* Calls it held would wait forever: fail closed. */
				notify_reap(&nr);
				snprintf(ex.message, sizeof(ex.message),
				         "The run's file actor ended unexpectedly; the run was stopped.");
				ex.error = PRIVSEP_ERR_SETUP;
				log_warn("run %s: %s", w->req->run_id, ex.message);
				supervise_kill(sb);
				break;
			}
			if (nr.n_denied != denied && nr.n_denied <= DENIALS_LOGGED)
				log_refusal(w->req->run_id, &nr);
			if (!pfd[0].revents && !pfd[1].revents && !pfd[2].revents && !pfd[3].revents)
				continue;
		}
		if (n > 0 && pfd[3].revents && !pfd[0].revents && !pfd[1].revents && !pfd[2].revents) {
			/* (the actor's fd is handled above) */
			/* A umask() or connect() of the run (notify.c); a dead
			 * listener (POLLHUP: no process of the run is left) is
			 * dropped. */
			unsigned denied = nr.n_denied;
			if (!(pfd[3].revents & POLLIN) || notify_answer(sb->notify, &nr) < 0)
				fdio_close(&sb->notify);
			if (nr.n_denied != denied && nr.n_denied <= DENIALS_LOGGED)
				log_refusal(w->req->run_id, &nr);
			continue;
		}
		if (n == 0)
			continue;
		if (pfd[0].revents) {
			ssize_t got = read(sb->status_r, &sst, sizeof(sst));
			have_status = got == (ssize_t)sizeof(sst);
			break;
		}
		if (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			log_info("run %s: the front gave up on the run; killing it", w->req->run_id);
			supervise_kill(sb);
			break;
		}
		if (pfd[2].revents) {
			ex.error = PRIVSEP_ERR_CAPACITY;
			snprintf(ex.message, sizeof(ex.message), "The daemon is shutting down; the run was stopped.");
			supervise_kill(sb);
			break;
		}
	}
	notify_stop(&nr);
	exit_fields(&ex, have_status, &sst, w->req->run_id);
	uint64_t exited_us = us_since(&w->t0);
	/* When the init reported the exit itself, it had already killed and
	 * reaped every other process of the run (sandbox_run.c): the reply may
	 * go now, and the init, waiting to be ended, is stopped after it.
	 * Otherwise (timeout, abort, a failure) the run is stopped first. */
	bool reported = have_status && sst.kind == SANDBOX_STATUS_EXIT && !ex.timed_out && !ex.disk_limited;
	bool stopped = reported;
	if (!reported) {
		notify_reap(&nr);
		/* The reply waits for the killed run's end at most REPLY_WAIT_MS:
		 * a process the kernel holds in an uninterruptible wait held it
		 * 45 s past a 2 s timeout (review s37 lifecycle H2).  Its cleanup
		 * then goes on after the reply, the uid taken until it is done. */
		if (supervise_end_init(sb, REPLY_WAIT_MS)) {
			ex.cleanup_failed = supervise_stop(sb) < 0;
			stopped = true;
		}
	}
	usage_read(&usage, &ex.usage);
	privsep_header_init(&ex.h, PRIVSEP_EXIT);
	ex.ms = ms_since(&w->t0);
	ex.n_denied = nr.n_denied;
	memcpy(ex.denied, nr.first, sizeof(ex.denied));
	privsep_send_nowait(w->chan, &ex, sizeof(ex), NULL, 0);
	if (reported) {
		notify_reap(&nr);
		/* Alone in its pid namespace, the init waits to be ended
		 * (sandbox_run.c); its end ends the namespace. */
		kill(sb->init, SIGKILL);
		while (waitpid(sb->init, NULL, 0) < 0 && errno == EINTR)
			;
		sb->init = -1;
		ex.cleanup_failed = supervise_stop(sb) < 0;
	}
	if (!stopped)
		ex.cleanup_failed = supervise_stop(sb) < 0;
	runcg_release(sb->cg);
	if (ex.cleanup_failed)
		log_warn("run %s: a process outlived the run; uid %u is quarantined", w->req->run_id, w->uid);
	log_debug("run %s: checked %lu us, started %lu, exited %lu, empty %lu", w->req->run_id,
	          (unsigned long)checked_us, (unsigned long)started_us, (unsigned long)exited_us,
	          (unsigned long)us_since(&w->t0));
	_exit(ex.cleanup_failed ? 3 : 0);
}
