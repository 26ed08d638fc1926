/*
 * supervise.c - one run's life, in its own child of the launcher (root).
 *
 * First the sandbox is prepared: the cgroup, the pipes, the idmap user
 * namespace, the cloned sandbox child (which builds its view and applies
 * every lock, then waits for its job), and for proxy profiles the proxy's
 * listening socket inside the run's network namespace.  This may happen
 * before any request exists (config `prewarm`): the sandbox then waits,
 * used once or never.  When the launcher hands over a request we re-check
 * its payload byte by byte and its cwd, rebuild the sandbox if the
 * workspace changed under it, and then drop to the run's uid
 * (become_run): asrun/watch.c sends the job, hands the pipes to the front,
 * enforces the timeout, kills, and reports the exit record, with no
 * privilege.  The launcher removes the cgroup after we exit.
 *
 * Trust: privileged until become_run; the payload comes from the front
 * and is re-validated here before anything is built from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "initclone.h"
#include "launcher.h"
#include "log.h"
#include "mount.h"
#include "check.h"
#include "ns.h"
#include "runcg.h"
#include "sandbox.h"
#include "supervise.h"
#include "watch.h"
#include "seccomp.h"

#define CLEANUP_WAIT_MS 2000
#define SETUP_WAIT_MS 30000 /* a sandbox's own setup: mounts, Landlock, seccomp */
#define VIEW_FDS (2 + PROFILE_LIST_MAX) /* the workspace, .git, the exec subpaths */

struct run {
	const struct launcher *l;
	const struct privsep_run *req;
	const struct profile *p;
	const char *workspace;
	size_t ws_id;             /* its index in cfg and launcher.h (as opened at start) */
	struct sandbox_ready sb;
	int chan;                /* to the front, once a request came; -1 before */
	uid_t uid;
	char *payload;           /* cmd | cwd | env, each NUL-terminated copy below */
	char *cmd, *cwd_req, *env;
	char cwd[PATH_MAX];
	struct timespec t0;    /* the request's arrival: ms and the timeout count from here */
	int view_fd[VIEW_FDS]; /* what view_facts saw, held open: see there */
	size_t n_view_fd;
};

static noreturn void teardown_exit(struct run *r);

/* The workspace by its path, no symlink on the way, and only while that is
 * the directory opened at start: a path swapped since (a parent replaced by
 * a symlink, the directory moved or made anew: a nested workspace's run or
 * a user owning a parent can) must never make root mount or idmap another
 * tree.  -1 otherwise. */
static int open_workspace(const struct run *r)
{
	return mount_open_workspace(r->workspace, &r->l->workspace_st[r->ws_id]);
}

/* Refuse the request: nothing of it ran; the prepared sandbox goes too. */
static noreturn void refuse(struct run *r, enum privsep_error e, const char *msg)
{
	privsep_send_error(r->chan, e, "%s", msg);
	teardown_exit(r);
}

/* Copy the payload out of the front's memfd first, then check the copy: the
 * front could change the memfd after we looked (TOCTOU). */
static void read_payload(struct run *r, int fd)
{
	const struct privsep_run *q = r->req;
	size_t total = (size_t)q->cmd_len + q->cwd_len + q->env_len;
	char msg[128];
	const char *why = check_payload_fd(fd, total);
	if (why) {
		snprintf(msg, sizeof(msg), "The launcher refused the request: %s.", why);
		refuse(r, PRIVSEP_ERR_INVALID, msg);
	}
	/* Three NULs so cmd, cwd and env each end in their own terminator. */
	r->payload = calloc(1, total + 3);
	if (!r->payload)
		refuse(r, PRIVSEP_ERR_SETUP, "The launcher is out of memory.");
	size_t off = 0;
	while (off < total) {
		ssize_t n = pread(fd, r->payload + off, total - off, (off_t)off);
		if (n <= 0)
			refuse(r, PRIVSEP_ERR_INVALID, "The launcher refused the request: short payload.");
		off += (size_t)n;
	}
	close(fd);
	char *p = r->payload;
	memmove(p + q->cmd_len + 1, p + q->cmd_len, (size_t)q->cwd_len + q->env_len + 1);
	p[q->cmd_len] = '\0';
	r->cmd = p;
	r->cwd_req = p + q->cmd_len + 1;
	memmove(r->cwd_req + q->cwd_len + 1, r->cwd_req + q->cwd_len, (size_t)q->env_len + 1);
	r->cwd_req[q->cwd_len] = '\0';
	r->env = r->cwd_req + q->cwd_len + 1;
	r->env[q->env_len] = '\0';
}

static void check_request(struct run *r)
{
	const char *why = check_payload(r->req, r->cmd, r->cwd_req, r->env);
	if (why) {
		char msg[128];
		snprintf(msg, sizeof(msg), "The launcher refused the request: %s.", why);
		refuse(r, PRIVSEP_ERR_INVALID, msg);
	}
	/* The cwd must resolve beneath the workspace, symlinks included.  It is
	 * resolved from the workspace down (openat2 RESOLVE_BENEATH), never by
	 * walking host paths as root, so a planted link cannot probe the host;
	 * the sandbox then enters the same lexical path in its own view. */
	size_t wl = strlen(r->workspace);
	char msg[256];
	snprintf(msg, sizeof(msg), "cwd does not resolve to a directory inside workspace %s.", r->workspace);
	char cwd[sizeof(r->cwd)];
	if (!check_cwd(r->cwd_req, r->workspace, cwd, sizeof(cwd)))
		refuse(r, PRIVSEP_ERR_CWD, msg);
	memcpy(r->cwd, cwd, sizeof(cwd));
	const char *rel = r->cwd[wl] ? r->cwd + wl + 1 : ".";
	int wsfd = open_workspace(r);
	if (wsfd < 0) {
		snprintf(msg, sizeof(msg), "The workspace %s is not the directory sharnessd started with (moved, "
		         "made anew or a symlink): restart sharnessd.", r->workspace);
		refuse(r, PRIVSEP_ERR_SETUP, msg);
	}
	int fd = mount_open_beneath(wsfd, rel, 0);
	struct stat st;
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	if (fd >= 0)
		close(fd);
	close(wsfd);
	if (!ok)
		refuse(r, PRIVSEP_ERR_CWD, msg);
}

/* The egress proxy's door inside the run: a listening socket on
 * 127.0.0.1:PRIVSEP_PROXY_PORT in the sandbox's own network namespace,
 * made here (root) by entering that namespace for a moment.  Its fd goes to
 * the front, which accepts on it and dials out from the host namespace
 * after checking the allowlist; the sandbox never gets a route out. */
static int proxy_listener(pid_t init)
{
	char path[64];
	int fd = -1, own, theirs, one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(PRIVSEP_PROXY_PORT),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", init);
	theirs = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0 || theirs < 0 || setns(theirs, CLONE_NEWNET) < 0)
		goto out;
	/* 127.0.0.1 exists once lo is up; the child brings it up again later. */
	if (ns_loopback_up() == 0) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		                bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)) {
			close(fd);
			fd = -1;
		}
	}
	/* Back home; if that failed we must not go on in the run's netns. */
	if (setns(own, CLONE_NEWNET) < 0)
		_exit(3);
out:
	if (own >= 0)
		close(own);
	if (theirs >= 0)
		close(theirs);
	return fd;
}

void supervise_kill(struct sandbox_ready *sb)
{
	/* Killing the pid namespace's init makes the kernel kill every process
	 * in it; the cgroup kill also catches anything mid-fork. */
	if (sb->cg)
		runcg_kill(sb->cg);
	if (sb->init > 0)
		kill(sb->init, SIGKILL);
}

bool supervise_end_init(struct sandbox_ready *sb, int ms)
{
	if (sb->init <= 0)
		return true;
	supervise_kill(sb);
	for (int waited = 0;; waited += 5) {
		pid_t got = waitpid(sb->init, NULL, WNOHANG);
		if (got == sb->init || (got < 0 && errno == ECHILD)) {
			sb->init = -1;
			return true;
		}
		if (waited >= ms)
			return false;
		struct timespec tick = {.tv_nsec = 5 * 1000 * 1000};
		nanosleep(&tick, NULL);
	}
}

/* Kill what is left, reap the init, and wait until the cgroup is empty.
 * Returns 0 once nothing of the run lives on. */
int supervise_stop(struct sandbox_ready *sb)
{
	int rc = 0;
	/* An init that reported the command's exit was ended by watch.c; its
	 * pid namespace died with it (every process in it is killed before
	 * the init is reaped).  Any other is killed with the whole cgroup. */
	if (sb->init > 0 && waitpid(sb->init, NULL, WNOHANG) == 0)
		supervise_kill(sb);
	if (sb->init > 0)
		while (waitpid(sb->init, NULL, 0) < 0 && errno == EINTR)
			;
	sb->init = -1;
	actor_stop(&sb->actor);
	fdio_close(&sb->out_r);
	fdio_close(&sb->err_r);
	fdio_close(&sb->in_w);
	fdio_close(&sb->status_r);
	fdio_close(&sb->job_w);
	fdio_close(&sb->listener);
	fdio_close(&sb->notify);
	fdio_close(&sb->sync_w);
	if (sb->cg && runcg_wait_empty(sb->cg, CLEANUP_WAIT_MS) < 0) {
		runcg_kill(sb->cg);
		rc = runcg_wait_empty(sb->cg, CLEANUP_WAIT_MS);
	}
	return rc;
}

/* Remove the (empty) cgroup.  0 when it is gone. */
static int remove_cgroup(struct sandbox_ready *sb)
{
	int rc = sb->cg ? runcg_destroy(sb->cg) : 0;
	sb->cg = NULL;
	return rc;
}

/* supervise_stop and remove_cgroup: 0 only when both worked, which proves
 * nothing of the uid lives on. */
static int teardown(struct sandbox_ready *sb)
{
	int stopped = supervise_stop(sb);
	return remove_cgroup(sb) < 0 || stopped < 0 ? -1 : 0;
}

static noreturn void teardown_exit(struct run *r)
{
	_exit(teardown(&r->sb) < 0 ? 3 : 0);
}

/* The facts about the workspace the view is built from: the directory itself
 * and its owner (the idmap), and whether .git, the exec subpaths and the
 * shared git directory exist (read-only binds, exec grants).  A sandbox prepared ahead of its request
 * is used only if these are unchanged; otherwise it is rebuilt, so a
 * prepared sandbox is never weaker than a fresh one.
 *
 * Device and inode numbers alone do not prove "unchanged": a directory
 * removed and made again often gets its old inode number back (ext4 hands
 * freed ones out again), while the binds and Landlock's grants hold the
 * removed one (toolchains.sh once found its new build/ not executable).
 * So prepare() keeps each of them open (`hold`), and view_changed() also
 * asks whether the one held is still linked. */
static void view_facts(struct run *r, char *out, size_t len, bool hold)
{
	struct stat st;
	size_t off = 0;
	int wsfd = open_workspace(r);

	out[0] = '\0';
	for (size_t i = 0; wsfd >= 0 && i < 2 + r->p->n_workspace_exec && off < len; i++) {
		const char *rel = i == 0 ? "." : i == 1 ? ".git" : r->p->workspace_exec[i - 2];
		int fd = openat(wsfd, rel, O_PATH | O_CLOEXEC | (i ? O_NOFOLLOW : 0));
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (i == 0)
			off += (size_t)snprintf(out + off, len - off, "%lx:%lx:%u:%u", (unsigned long)st.st_dev,
			                        (unsigned long)st.st_ino, st.st_uid, st.st_gid);
		else
			off += (size_t)snprintf(out + off, len - off, " %zu:%lx:%lx:%o", i - 1, (unsigned long)st.st_dev,
			                        (unsigned long)st.st_ino, st.st_mode);
		if (hold && r->n_view_fd < VIEW_FDS)
			r->view_fd[r->n_view_fd++] = fd;
		else
			close(fd);
	}
	fdio_close(&wsfd);
	/* The shared git directory, bound only while it is start-up's (mount.c). */
	const char *git = r->l->cfg->git_dirs[r->ws_id];
	int gitfd = git ? mount_open_workspace(git, &r->l->git_dir_st[r->ws_id]) : -1;
	if (gitfd >= 0 && off < len)
		snprintf(out + off, len - off, " git");
	fdio_close(&gitfd);
}

static void view_release(struct run *r)
{
	for (size_t i = 0; i < r->n_view_fd; i++)
		close(r->view_fd[i]);
	r->n_view_fd = 0;
}

/* What the init starts from: copies, since it runs beside us in our memory
 * (initclone.c) while we go on and change our own. */
struct init_args {
	struct sandbox_spec spec;
	int close_fds[6 + VIEW_FDS]; /* our ends of its pipes, the view's host paths */
	size_t n_close;
};

static int init_entry(void *arg)
{
	const struct init_args *a = arg;
	for (size_t i = 0; i < a->n_close; i++)
		close(a->close_fds[i]);
	sandbox_child(&a->spec);
}

/* Anything the prepared view was built from replaced or removed since. */
static bool view_changed(struct run *r)
{
	char now[sizeof(r->sb.view)];
	struct stat st;
	view_facts(r, now, sizeof(now), false);
	bool changed = strcmp(now, r->sb.view) != 0;
	for (size_t i = 0; i < r->n_view_fd && !changed; i++)
		changed = fstat(r->view_fd[i], &st) < 0 || st.st_nlink == 0;
	return changed;
}

/* A profile that makes its exec subpaths (workspace_exec_create, one
 * component each: checked when it loads) gets the missing ones as empty
 * directories of the workspace's owner, so that a first `cargo test` or
 * `make` in a fresh checkout can run what it builds there.  Made when a
 * request comes, never for a sandbox prepared ahead (a workspace nobody
 * tests in gets no empty build/), and before view_facts: a prepared
 * sandbox that lacks them is rebuilt, like any other change.  mkdirat
 * in the workspace directory itself follows no link, and the chown goes
 * through the new directory's own fd: a name swapped in between for a link
 * (hard links too, where fs.protected_hardlinks is 0) is never chowned. */
static void make_exec_dirs(const struct run *r)
{
	if (!r->p->workspace_exec_create)
		return;
	int wsfd = open_workspace(r);
	struct stat wst;
	if (wsfd < 0 || fstat(wsfd, &wst) < 0) {
		if (wsfd >= 0)
			close(wsfd);
		return;
	}
	for (size_t i = 0; i < r->p->n_workspace_exec; i++) {
		const char *d = r->p->workspace_exec[i];
		if (mkdirat(wsfd, d, 0755) < 0)
			continue;
		int fd = openat(wsfd, d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fchown(fd, wst.st_uid, wst.st_gid) < 0)
			(void)unlinkat(wsfd, d, AT_REMOVEDIR); /* never root's in their tree */
		if (fd >= 0)
			close(fd);
	}
	close(wsfd);
}

/* Wait until the sandbox has every lock on (or failed), and take its seccomp
 * listener (seccomp.c: umask is answered here, while the run lives).  A
 * setup failure is kept in sb->error as before; the status pipe then has
 * nothing more to say until the exit. */
static void take_listener(struct sandbox_ready *sb)
{
	struct sandbox_status st;
	struct pollfd p = {.fd = sb->status_r, .events = POLLIN};
	int n;
	while ((n = poll(&p, 1, SETUP_WAIT_MS)) < 0 && errno == EINTR)
		;
	/* The ready message carries the listener (SCM_RIGHTS, sandbox.c). */
	int fd = -1;
	ssize_t got = n == 1 ? privsep_recv(sb->status_r, &st, sizeof(st), &fd, 1) : -1;
	if (got == (ssize_t)sizeof(st) && st.kind == SANDBOX_STATUS_SETUP_FAILED) {
		if (fd >= 0)
			close(fd);
		supervise_failure(sb->error, sizeof(sb->error), &st);
		return;
	}
	if (got != (ssize_t)sizeof(st) || st.kind != SANDBOX_STATUS_READY || fd < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(sb->error, sizeof(sb->error), "The sandbox did not report ready%s.",
		         n == 0 ? " in time" : got > 0 && fd < 0 ? " with its seccomp listener" : "");
		return;
	}
	sb->notify = fd;
}

/* Build the sandbox up to the point where it waits for its job.  On
 * failure sb->error says what failed; teardown() still cleans up. */
static void prepare(struct run *r)
{
	struct sandbox_ready *sb = &r->sb;
	int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1}, status[2] = {-1, -1};
	int sync[2] = {-1, -1}, job[2] = {-1, -1}, userns = -1, wsfd = -1;
	char name[64], why[160];
	struct stat wst;

	view_release(r);
	view_facts(r, sb->view, sizeof(sb->view), true);
	snprintf(name, sizeof(name), "run-%u", r->uid);
	sb->cg = runcg_create(name, r->p->pids_max, r->p->memory_max, why, sizeof(why));
	if (!sb->cg) {
		snprintf(sb->error, sizeof(sb->error), "%s", why);
		return;
	}
	/* The command's pipes belong to its uid: `> /dev/stderr` reopens one
	 * through /proc/self/fd, which checks the pipe's owner and mode (0600).
	 * A pipe takes its owner from the fs uid that makes it: no CAP_CHOWN
	 * (which the unit does not grant) for a fchown afterwards. */
	setfsuid(r->uid);
	setfsgid(r->uid);
	int piped = pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0 && pipe2(in, O_CLOEXEC) == 0;
	setfsuid(0);
	setfsgid(0);
	/* A changed fs uid made us undumpable (commit_creds), and children we
	 * fork inherit it: ns.c opens the idmap child's /proc/PID/ns/user,
	 * which an undumpable child refuses without CAP_SYS_PTRACE.  We are
	 * root again: dumpable as before. */
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	/* A workspace swapped since start (ESTALE) is named to the request
	 * by check_request. */
	if (!piped || (wsfd = open_workspace(r)) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, status) < 0 || pipe2(sync, O_CLOEXEC) < 0 || pipe2(job, O_CLOEXEC) < 0 ||
	    fstat(wsfd, &wst) < 0 || (userns = ns_idmap_userns(wst.st_uid, wst.st_gid, r->uid)) < 0) {
		snprintf(sb->error, sizeof(sb->error), "The sandbox could not be prepared: %s.", strerror(errno));
		goto out;
	}
	struct sandbox_spec spec = {
		.uid = r->uid, .profile = r->p, .workspace = r->workspace, .workspace_st = wst, .userns_fd = userns,
		.git_dir = r->l->cfg->git_dirs[r->ws_id], .git_dir_st = &r->l->git_dir_st[r->ws_id],
		.newroot = r->l->newroot, .stdin_fd = in[0], .stdout_fd = out[1], .stderr_fd = err[1],
		.status_fd = status[1], .sync_fd = sync[0], .job_fd = job[0], .seccomp = &r->l->seccomp,
		.proxy_port = r->p->network == PROFILE_NETWORK_PROXY ? PRIVSEP_PROXY_PORT : 0,
	};
	/* The child gets its namespaces at birth (it is pid 1 of the new pid
	 * namespace) and runs in our memory (initclone.c says why and how).
	 * Static: it reads its arguments after we returned. */
	static struct init_args ia;
	ia = (struct init_args){
	    .spec = spec, .close_fds = {out[0], err[0], in[1], status[0], sync[1], job[1]}, .n_close = 6};
	for (size_t i = 0; i < r->n_view_fd; i++) /* host paths: nothing of the sandbox's to hold */
		ia.close_fds[ia.n_close++] = r->view_fd[i];
	pid_t init = initclone(init_entry, &ia, NS_SANDBOX_FLAGS);
	if (init < 0) {
		snprintf(sb->error, sizeof(sb->error), "The sandbox could not be cloned: %s.", strerror(errno));
		goto out;
	}
	sb->init = init;
	sb->out_r = out[0];
	sb->err_r = err[0];
	sb->in_w = in[1];
	sb->status_r = status[0];
	sb->sync_w = sync[1];
	sb->job_w = job[1];
	out[0] = err[0] = in[1] = status[0] = sync[1] = job[1] = -1;
	if (runcg_attach(sb->cg, init) < 0) {
		snprintf(sb->error, sizeof(sb->error), "The run could not join its cgroup: %s.", strerror(errno));
		goto out;
	}
	if (r->p->network == PROFILE_NETWORK_PROXY && (sb->listener = proxy_listener(init)) < 0) {
		snprintf(sb->error, sizeof(sb->error), "The run's egress proxy could not listen: %s.", strerror(errno));
		goto out;
	}
	/* Attached: the child may go on.  We keep sync_w open until we exit,
	 * so the child can tell we are alive. */
	char go = 1;
	(void)!write(sb->sync_w, &go, 1);
	take_listener(sb);
	/* The actor that makes the run's writes and unix connects (actor.c)
	 * is started now, off the request's path, dropped into the run; it
	 * execs at the run's first request for it.  If it cannot start here,
	 * it never does (we drop our privilege first): the run's writes and
	 * unix connects fail closed, and name why (notify.c). */
	if (!sb->error[0] && actor_start(&sb->actor, init, &spec, r->l->actor_exe) < 0)
		sb->actor_err = errno;
	/* In the run's cgroup, like every process of the run's uid: its limits,
	 * its kill and the proof that the cgroup is empty cover it too. */
	if (sb->actor.pid > 0 && runcg_attach(sb->cg, sb->actor.pid) < 0)
		snprintf(sb->error, sizeof(sb->error), "The run's file actor could not join its cgroup: %s.",
		         strerror(errno));
out:
	fdio_close(&userns);
	fdio_close(&wsfd);
	for (int i = 0; i < 2; i++) {
		fdio_close(&out[i]);
		fdio_close(&err[i]);
		fdio_close(&in[i]);
		fdio_close(&status[i]);
		fdio_close(&sync[i]);
		fdio_close(&job[i]);
	}
}

void supervise_failure(char *out, size_t len, struct sandbox_status *sst)
{
	sst->what[sizeof(sst->what) - 1] = '\0'; /* from the child: terminate it ourselves */
	if (sst->what[0])
		snprintf(out, len, "The sandbox could not be built: %s failed (%s): %s.", sandbox_step_name(sst->step),
		         sst->what, strerror(sst->err));
	else
		snprintf(out, len, "The sandbox could not be built: %s failed: %s.", sandbox_step_name(sst->step),
		         strerror(sst->err));
}

/* A status message that arrived before any job: a setup step failed. */
static void note_early_status(struct run *r)
{
	struct sandbox_status sst;
	ssize_t n = read(r->sb.status_r, &sst, sizeof(sst));
	if (n == (ssize_t)sizeof(sst) && sst.kind == SANDBOX_STATUS_SETUP_FAILED)
		supervise_failure(r->sb.error, sizeof(r->sb.error), &sst);
	else if (!r->sb.error[0]) /* else take_listener already said why */
		snprintf(r->sb.error, sizeof(r->sb.error), "The sandbox ended before its command was given.");
	log_warn("%s", r->sb.error);
	fdio_close(&r->sb.status_r);
}

/* Wait for the one request this sandbox is for.  Returns the run channel,
 * or -1 when none will come (SIGTERM, the launcher is gone). */
static int wait_for_request(struct run *r, int job_sock, int sfd, struct privsep_run *req, int *payload)
{
	for (;;) {
		struct pollfd p[3] = {{.fd = job_sock, .events = POLLIN},
		                      {.fd = sfd, .events = POLLIN},
		                      {.fd = r->sb.status_r, .events = POLLIN}};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents)
			return -1;
		if (p[2].revents)
			note_early_status(r); /* keep waiting: the request gets the error */
		if (p[0].revents) {
			int fds[2];
			ssize_t n = privsep_recv(job_sock, req, sizeof(*req), fds, 2);
			if (n != (ssize_t)sizeof(*req) || fds[0] < 0 || fds[1] < 0) {
				if (fds[0] >= 0)
					close(fds[0]);
				if (fds[1] >= 0)
					close(fds[1]);
				return -1;
			}
			*payload = fds[1];
			return fds[0];
		}
	}
}

/* The file systems a run may write to on the host, for the disk watch
 * (asrun/watch.c): the workspace's and each write path's, opened here,
 * as root, since the run's uid may not reach them by path. */
static void open_disks(const struct run *r, struct watch *w)
{
	const char *paths[1 + PROFILE_LIST_MAX];
	size_t n = 0;
	if (r->p->workspace_write)
		paths[n++] = r->workspace;
	for (size_t i = 0; i < r->p->n_write_paths && n < sizeof(paths) / sizeof(paths[0]); i++)
		paths[n++] = r->p->write_paths[i];
	for (size_t i = 0; i < n; i++) {
		int fd = paths[i] == r->workspace ? open_workspace(r) : open(paths[i], O_PATH | O_CLOEXEC);
		if (fd >= 0)
			w->disk[w->n_disk++] = (struct watch_disk){.path = paths[i], .fd = fd};
	}
}

/*
 * Become the run: the run's uid and gid, no groups, no capability left,
 * no_new_privs, not dumpable.  Everything after this (asrun/watch.c: the
 * timeout, the disk watch, the seccomp notifications, reading the run's
 * memory for them, the kill and the usage) needs no privilege: the run's
 * processes are our descendants and of our uid, so we may read them
 * (ptrace access mode, Yama scope 1 at most: start-up checks it); the
 * cgroup's kill file was opened by root (runcg.c); the launcher removes
 * the cgroup once we exit.  The run cannot reach us back: we live outside
 * its pid namespace, where it can name no process of ours.
 */
static void become_run(struct run *r, pid_t launcher)
{
	uid_t u = r->uid;
	struct __user_cap_header_struct ch = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct cd[2] = {0};
	if (setgroups(0, NULL) < 0 || setresgid(u, u, u) < 0 || setresuid(u, u, u) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    syscall(SYS_capget, &ch, cd) < 0 || cd[0].permitted || cd[1].permitted || cd[0].effective ||
	    cd[1].effective) {
		log_warn("run %s: the supervisor could not drop to uid %u: %s", r->req->run_id, u, strerror(errno));
		refuse(r, PRIVSEP_ERR_SETUP, "The run's supervisor could not drop to the run's uid.");
	}
	/* A change of uid clears the parent-death signal: again, and the
	 * launcher may have died in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != launcher)
		refuse(r, PRIVSEP_ERR_CAPACITY, "The daemon is shutting down; the run was stopped.");
}

noreturn void supervise_run(const struct launcher *l, uint32_t profile_id, uint32_t workspace_id, uid_t uid,
                            int job_sock, bool ahead)
{
	struct run r = {.l = l, .chan = -1, .uid = uid};
	struct privsep_run req;
	sigset_t mask;
	pid_t launcher = getppid();
	int payload = -1;

	log_set_prefix("run");
	r.sb = SANDBOX_NONE;
	/* If the launcher dies, we stop the run and clean up. */
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	r.p = &l->profiles->v[profile_id];
	r.workspace = l->cfg->workspaces[workspace_id];
	r.ws_id = workspace_id;

	prepare(&r);
	r.chan = wait_for_request(&r, job_sock, sfd, &req, &payload);
	close(job_sock);
	if (r.chan < 0)
		teardown_exit(&r);
	/* Built ahead at the lowest priority (launcher.h): the launcher set
	 * the group back when it sent the request, as far as it may (all of
	 * it with CAP_SYS_NICE; only what is still root with a nice limit),
	 * and a process forked in that moment may have missed it.  So the
	 * whole group (init, actor) once more, now as root and again as the
	 * run's uid (become_run), before the command starts. */
	if (ahead)
		(void)setpriority(PRIO_PGRP, 0, l->nice);
	clock_gettime(CLOCK_MONOTONIC, &r.t0);
	r.req = &req;
	/* The launcher routes by (profile, workspace); it checked the rest. */
	if (req.profile_id != profile_id || req.workspace_id != workspace_id)
		refuse(&r, PRIVSEP_ERR_INVALID, "The launcher refused the request: it reached the wrong sandbox.");
	read_payload(&r, payload);
	check_request(&r);
	make_exec_dirs(&r);
	if (view_changed(&r)) {
		/* The workspace changed under the prepared sandbox: build anew. */
		if (teardown(&r.sb) < 0)
			refuse(&r, PRIVSEP_ERR_SETUP, "The prepared sandbox could not be removed.");
		r.sb = SANDBOX_NONE;
		prepare(&r);
	}
	view_release(&r);
	if (r.sb.error[0])
		refuse(&r, PRIVSEP_ERR_SETUP, r.sb.error);
	struct watch w = {.cfg = l->cfg, .p = r.p, .workspace = r.workspace, .req = &req, .uid = uid,
	                  .chan = r.chan, .sfd = sfd, .t0 = r.t0, .sb = &r.sb, .cwd = r.cwd, .cmd = r.cmd, .env = r.env};
	open_disks(&r, &w);
	become_run(&r, launcher);
	if (ahead && setpriority(PRIO_PGRP, 0, l->nice) < 0)
		log_warn("run %s: its sandbox, built ahead, keeps niceness %d: %s", req.run_id, LAUNCHER_AHEAD_NICE,
		         strerror(errno));
	watch_run(&w);
}
