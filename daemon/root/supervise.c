/*
 * supervise.c - one run's life, in its own child of the launcher (root).
 *
 * First the sandbox is prepared: the cgroup, the pipes, the idmap user
 * namespace, the cloned sandbox child (which builds its view and applies
 * every lock, then waits for its job), and for proxy profiles the proxy's
 * listening socket inside the run's network namespace.  This may happen
 * before any request exists (config `prewarm`): the sandbox then waits,
 * used once or never.  When the launcher hands over a request we re-check
 * its payload byte by byte, send the job, hand the pipes to the front,
 * enforce the timeout, kill and tear everything down, and report the exit
 * record.
 *
 * Trust: privileged; the payload comes from the front and is re-validated
 * here before anything is built from it.
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
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "launcher.h"
#include "log.h"
#include "mount.h"
#include "notify.h"
#include "check.h"
#include "ns.h"
#include "runcg.h"
#include "sandbox.h"
#include "seccomp.h"

#define ENVP_MAX SANDBOX_ENV_MAX
#define STR_(x) #x
#define STR(x) STR_(x)
#define PROXY_PORT_STR STR(PRIVSEP_PROXY_PORT)
#define CLEANUP_WAIT_MS 2000
#define DENIALS_LOGGED 5 /* per run: a loop of refused connects is not a flood of log lines */
#define SETUP_WAIT_MS 30000 /* a sandbox's own setup: mounts, Landlock, seccomp */

/* What prepare() builds ahead of a request. */
struct sandbox_ready {
	struct run_cgroup *cg;
	pid_t init;
	int out_r, err_r, in_w;  /* the command's pipes, our ends */
	int status_r;            /* struct sandbox_status from the init */
	int sync_w;              /* held open while we live: the init watches it */
	int job_w;               /* the job goes here */
	int listener;            /* proxy profiles: 127.0.0.1:PROXY_PORT in the run's netns */
	int notify;              /* the run's seccomp listener (umask), taken from the init */
	struct actor actor;      /* the run's file actor, started ahead with the sandbox */
	char error[200];         /* set when preparing failed */
	char view[512];          /* what the view was built from (view_facts) */
};

#define SANDBOX_NONE                                                                                    \
	((struct sandbox_ready){.out_r = -1, .err_r = -1, .in_w = -1, .status_r = -1, .sync_w = -1, .job_w = -1, \
	                        .listener = -1, .notify = -1, .init = -1})

struct run {
	const struct launcher *l;
	const struct privsep_run *req;
	const struct profile *p;
	const char *workspace;
	struct sandbox_ready sb;
	int chan;                /* to the front, once a request came; -1 before */
	uid_t uid;
	char *payload;           /* cmd | cwd | env, each NUL-terminated copy below */
	char *cmd, *cwd_req, *env;
	char cwd[PATH_MAX];
	char *envp[ENVP_MAX + 1];
	struct timespec t0;      /* the request's arrival: ms and the timeout count from here */
	uint64_t us[8];          /* phase timings for --verbose */
};

enum phase { PH_CHECKED, PH_JOB, PH_STARTED, PH_EXITED, PH_EMPTY, PH_REMOVED, PH_COUNT };

static void stamp(struct run *r, enum phase ph)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	r->us[ph] = (uint64_t)(t.tv_sec - r->t0.tv_sec) * 1000000 + (uint64_t)((t.tv_nsec - r->t0.tv_nsec) / 1000);
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000 + (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000000);
}

static noreturn void teardown_exit(struct run *r);
struct sandbox_status;
static void sandbox_failure(char *out, size_t len, struct sandbox_status *sst);

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
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != total)
		refuse(r, PRIVSEP_ERR_INVALID, "The launcher refused the request: payload size mismatch.");
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
	int wsfd = open(r->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = wsfd >= 0 ? mount_open_beneath(wsfd, rel, 0) : -1;
	struct stat st;
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	if (fd >= 0)
		close(fd);
	if (wsfd >= 0)
		close(wsfd);
	if (!ok)
		refuse(r, PRIVSEP_ERR_CWD, msg);
}

/* The environment is built from nothing (SPEC §6): the base, then the
 * profile's grants, then the request's (validated) variables. */
static void build_env(struct run *r)
{
	size_t n = 0;
	r->envp[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	r->envp[n++] = "HOME=" SANDBOX_HOME;
	r->envp[n++] = "LANG=C.UTF-8";
	r->envp[n++] = "TZ=UTC";
	/* bash looks its user up in NSS (dlopen of nss_systemd, userdb probes)
	 * to set $SHELL when it is missing: a third of its start-up here. */
	r->envp[n++] = "SHELL=/bin/bash";
	for (size_t i = 0; i < r->p->n_env && n < ENVP_MAX; i++) {
		size_t len = strlen(r->p->env[i].name) + strlen(r->p->env[i].value) + 2;
		char *s = malloc(len);
		if (!s)
			refuse(r, PRIVSEP_ERR_SETUP, "The launcher is out of memory.");
		snprintf(s, len, "%s=%s", r->p->env[i].name, r->p->env[i].value);
		r->envp[n++] = s;
	}
	if (r->p->network == PROFILE_NETWORK_PROXY) {
		static char *const proxy_env[] = {
			"HTTP_PROXY=http://127.0.0.1:" PROXY_PORT_STR, "HTTPS_PROXY=http://127.0.0.1:" PROXY_PORT_STR,
			"http_proxy=http://127.0.0.1:" PROXY_PORT_STR, "https_proxy=http://127.0.0.1:" PROXY_PORT_STR,
			"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"};
		for (size_t i = 0; i < sizeof(proxy_env) / sizeof(proxy_env[0]); i++)
			r->envp[n++] = proxy_env[i];
	}
	for (size_t off = 0; off < r->req->env_len && n < ENVP_MAX; off += strlen(r->env + off) + 1)
		r->envp[n++] = r->env + off;
	r->envp[n] = NULL;
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

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void kill_run(struct sandbox_ready *sb)
{
	/* Killing the pid namespace's init makes the kernel kill every process
	 * in it; the cgroup kill also catches anything mid-fork. */
	if (sb->cg)
		runcg_kill(sb->cg);
	if (sb->init > 0)
		kill(sb->init, SIGKILL);
}

/* Kill what is left, reap the init, and wait until the cgroup is empty.
 * Returns 0 once nothing of the run lives on. */
static int stop_run(struct sandbox_ready *sb)
{
	int rc = 0;
	/* The init exits after the command; its pid namespace dies with it
	 * (every process in it is killed before the init is reaped), so a
	 * kill is needed only when it is still there. */
	if (sb->init > 0 && waitpid(sb->init, NULL, WNOHANG) == 0)
		kill_run(sb);
	if (sb->init > 0)
		while (waitpid(sb->init, NULL, 0) < 0 && errno == EINTR)
			;
	sb->init = -1;
	actor_stop(&sb->actor);
	close_fd(&sb->out_r);
	close_fd(&sb->err_r);
	close_fd(&sb->in_w);
	close_fd(&sb->status_r);
	close_fd(&sb->job_w);
	close_fd(&sb->listener);
	close_fd(&sb->notify);
	close_fd(&sb->sync_w);
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

/* What the run cost, from its cgroup, which still exists: every process of
 * the run is gone (or being killed), and cgroup counters outlive them. */
static void read_usage(struct sandbox_ready *sb, struct privsep_usage *pu)
{
	struct runcg_usage u;
	runcg_usage(sb->cg, &u);
	memset(pu, 0, sizeof(*pu));
	pu->have = (u.have_cpu ? PRIVSEP_USAGE_CPU : 0) | (u.have_peak_memory ? PRIVSEP_USAGE_PEAK_MEMORY : 0) |
	           (u.have_peak_pids ? PRIVSEP_USAGE_PEAK_PIDS : 0) | (u.have_oom_killed ? PRIVSEP_USAGE_OOM : 0) |
	           (u.have_pids_limited ? PRIVSEP_USAGE_PIDS_LIMITED : 0);
	pu->cpu_us = u.cpu_us;
	pu->peak_memory_bytes = u.peak_memory;
	pu->peak_pids = u.peak_pids;
	pu->oom_killed = u.oom_killed;
	pu->pids_limited = u.pids_limited;
}

/* stop_run and remove_cgroup: 0 only when both worked, which proves
 * nothing of the uid lives on. */
static int teardown(struct sandbox_ready *sb)
{
	int stopped = stop_run(sb);
	return remove_cgroup(sb) < 0 || stopped < 0 ? -1 : 0;
}

static noreturn void teardown_exit(struct run *r)
{
	_exit(teardown(&r->sb) < 0 ? 3 : 0);
}

/* The facts about the workspace the view is built from: the directory itself
 * and its owner (the idmap), and whether .git and the exec subpaths exist
 * (read-only binds, exec grants).  A sandbox prepared ahead of its request
 * is used only if these are unchanged; otherwise it is rebuilt, so a
 * prepared sandbox is never weaker than a fresh one. */
static void view_facts(const struct run *r, char *out, size_t len)
{
	struct stat st;
	char path[PATH_MAX];
	size_t off = 0;

	if (stat(r->workspace, &st) == 0)
		off += (size_t)snprintf(out + off, len - off, "%lx:%lx:%u:%u", (unsigned long)st.st_dev,
		                        (unsigned long)st.st_ino, st.st_uid, st.st_gid);
	for (size_t i = 0; i < 1 + r->p->n_workspace_exec && off < len; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->workspace, i < 1 ? ".git" : r->p->workspace_exec[i - 1]);
		if (lstat(path, &st) == 0)
			off += (size_t)snprintf(out + off, len - off, " %zu:%lx:%lx:%o", i, (unsigned long)st.st_dev,
			                        (unsigned long)st.st_ino, st.st_mode);
	}
}

/* A profile that makes its exec subpaths (workspace_exec_create, one
 * component each: checked when it loads) gets the missing ones as empty
 * directories of the workspace's owner, so that a first `cargo test` or
 * `make` in a fresh checkout can run what it builds there.  Made when a
 * request comes, never for a sandbox prepared ahead (a workspace nobody
 * tests in gets no empty build/), and before view_facts: a prepared
 * sandbox that lacks them is rebuilt, like any other change.  mkdirat
 * in the workspace directory itself follows no link, and neither does the
 * chown, should anyone swap the new directory for a link in between. */
static void make_exec_dirs(const struct run *r)
{
	if (!r->p->workspace_exec_create)
		return;
	int wsfd = open(r->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat wst;
	if (wsfd < 0 || fstat(wsfd, &wst) < 0) {
		if (wsfd >= 0)
			close(wsfd);
		return;
	}
	for (size_t i = 0; i < r->p->n_workspace_exec; i++)
		if (mkdirat(wsfd, r->p->workspace_exec[i], 0755) == 0 &&
		    fchownat(wsfd, r->p->workspace_exec[i], wst.st_uid, wst.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
			(void)unlinkat(wsfd, r->p->workspace_exec[i], AT_REMOVEDIR); /* never root's in their tree */
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
		sandbox_failure(sb->error, sizeof(sb->error), &st);
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
	int sync[2] = {-1, -1}, job[2] = {-1, -1}, userns = -1;
	char name[64], why[160];
	struct stat wst;

	view_facts(r, sb->view, sizeof(sb->view));
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
	if (!piped ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, status) < 0 || pipe2(sync, O_CLOEXEC) < 0 || pipe2(job, O_CLOEXEC) < 0 ||
	    stat(r->workspace, &wst) < 0 || (userns = ns_idmap_userns(wst.st_uid, wst.st_gid, r->uid)) < 0) {
		snprintf(sb->error, sizeof(sb->error), "The sandbox could not be prepared: %s.", strerror(errno));
		goto out;
	}
	struct sandbox_spec spec = {
		.uid = r->uid, .profile = r->p, .workspace = r->workspace, .userns_fd = userns,
		.newroot = r->l->newroot, .stdin_fd = in[0], .stdout_fd = out[1], .stderr_fd = err[1],
		.status_fd = status[1], .sync_fd = sync[0], .job_fd = job[0], .seccomp = &r->l->seccomp,
		.proxy_port = r->p->network == PROFILE_NETWORK_PROXY ? PRIVSEP_PROXY_PORT : 0,
	};
	/* A raw clone: the child gets its namespaces at birth (it is pid 1 of
	 * the new pid namespace) and continues like fork. */
	pid_t init = (pid_t)syscall(SYS_clone, NS_SANDBOX_FLAGS | SIGCHLD, NULL, NULL, NULL, NULL);
	if (init < 0) {
		snprintf(sb->error, sizeof(sb->error), "The sandbox could not be cloned: %s.", strerror(errno));
		goto out;
	}
	if (init == 0) {
		close(out[0]);
		close(err[0]);
		close(in[1]);
		close(status[0]);
		close(sync[1]);
		close(job[1]);
		sandbox_child(&spec);
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
	/* Most commands write somewhere (bash opens /dev/tty at start, `2>
	 * /dev/null`): the actor that makes those writes (actor.c) is started
	 * now, off the request's path.  If it cannot start here, the run's
	 * first write tries again and names the failure (notify.c). */
	if (!sb->error[0])
		(void)actor_start(&sb->actor, init, &spec);
out:
	close_fd(&userns);
	for (int i = 0; i < 2; i++) {
		close_fd(&out[i]);
		close_fd(&err[i]);
		close_fd(&in[i]);
		close_fd(&status[i]);
		close_fd(&sync[i]);
		close_fd(&job[i]);
	}
}

/* "The sandbox could not be built: STEP failed (SYSCALL PATH): ERRNO." */
static void sandbox_failure(char *out, size_t len, struct sandbox_status *sst)
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
		sandbox_failure(r->sb.error, sizeof(r->sb.error), &sst);
	else if (!r->sb.error[0]) /* else take_listener already said why */
		snprintf(r->sb.error, sizeof(r->sb.error), "The sandbox ended before its command was given.");
	log_warn("%s", r->sb.error);
	close_fd(&r->sb.status_r);
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

/* Write the job: cwd, cmd and the environment, built from nothing. */
static int send_job(struct run *r)
{
	struct sandbox_job h = {.has_stdin = r->req->has_stdin};
	size_t envc = 0, envlen = 0;
	h.cwd_len = (uint32_t)strlen(r->cwd);
	h.cmd_len = r->req->cmd_len;
	for (; r->envp[envc]; envc++)
		envlen += strlen(r->envp[envc]) + 1;
	h.env_len = (uint32_t)envlen;
	h.env_count = (uint32_t)envc;
	size_t total = sizeof(h) + h.cwd_len + h.cmd_len + envlen;
	char *buf = malloc(total), *p = buf;
	if (!buf)
		return -1;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, r->cwd, h.cwd_len);
	p += h.cwd_len;
	memcpy(p, r->cmd, h.cmd_len);
	p += h.cmd_len;
	for (size_t i = 0; i < envc; i++) {
		size_t len = strlen(r->envp[i]) + 1;
		memcpy(p, r->envp[i], len);
		p += len;
	}
	int rc = fdio_write_all(r->sb.job_w, buf, total);
	free(buf);
	close_fd(&r->sb.job_w);
	return rc;
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
		dev_t dev;
		uint64_t bfree0, ffree0; /* at the run's start, in bytes and inodes */
	} fs[1 + PROFILE_LIST_MAX];
};

static int disk_stat(const char *path, uint64_t *bfree, uint64_t *bavail, uint64_t *ffree, uint64_t *favail,
                     bool *has_inodes)
{
	struct statvfs v;
	if (statvfs(path, &v) < 0)
		return -1;
	*bfree = (uint64_t)v.f_bfree * v.f_frsize;
	*bavail = (uint64_t)v.f_bavail * v.f_frsize;
	*ffree = v.f_ffree;
	*favail = v.f_favail;
	/* btrfs and an unbounded tmpfs report no inode count at all */
	*has_inodes = v.f_files != 0;
	return 0;
}

static void disk_add(struct disk_watch *w, const char *path)
{
	struct stat st;
	uint64_t bavail, favail;
	bool has_inodes;
	if (w->n >= sizeof(w->fs) / sizeof(w->fs[0]) || stat(path, &st) < 0)
		return;
	for (size_t i = 0; i < w->n; i++)
		if (w->fs[i].dev == st.st_dev)
			return;
	struct disk_fs *f = &w->fs[w->n];
	if (disk_stat(path, &f->bfree0, &bavail, &f->ffree0, &favail, &has_inodes) < 0)
		return;
	f->path = path;
	f->dev = st.st_dev;
	w->n++;
}

static void disk_start(const struct run *r, struct disk_watch *w)
{
	w->n = 0;
	if (r->p->workspace_write)
		disk_add(w, r->workspace);
	for (size_t i = 0; i < r->p->n_write_paths; i++)
		disk_add(w, r->p->write_paths[i]);
	w->on = w->n > 0;
}

/* 1 and `msg` set when the run went past a bound on one file system. */
static int disk_over_fs(const struct run *r, const struct disk_fs *f, char *msg, size_t len)
{
	const struct config *c = r->l->cfg;
	uint64_t bfree, bavail, ffree, favail;
	bool has_inodes;

	if (disk_stat(f->path, &bfree, &bavail, &ffree, &favail, &has_inodes) < 0)
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
	char where[64]; /* the reply's message is one sentence of 256 bytes */
	if (f->path == r->workspace)
		snprintf(where, sizeof(where), "the workspace's file system");
	else
		snprintf(where, sizeof(where), "the file system of %.40s", f->path);
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

static int disk_over(const struct run *r, const struct disk_watch *w, char *msg, size_t len)
{
	for (size_t i = 0; w->on && i < w->n; i++)
		if (disk_over_fs(r, &w->fs[i], msg, len))
			return 1;
	return 0;
}

noreturn void supervise_run(const struct launcher *l, uint32_t profile_id, uint32_t workspace_id, uid_t uid,
                            int job_sock)
{
	struct run r = {.l = l, .chan = -1, .uid = uid};
	struct privsep_run req;
	struct privsep_exit ex;
	sigset_t mask;
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

	prepare(&r);
	r.chan = wait_for_request(&r, job_sock, sfd, &req, &payload);
	close(job_sock);
	if (r.chan < 0)
		teardown_exit(&r);
	clock_gettime(CLOCK_MONOTONIC, &r.t0);
	r.req = &req;
	/* The launcher routes by (profile, workspace); it checked the rest. */
	if (req.profile_id != profile_id || req.workspace_id != workspace_id)
		refuse(&r, PRIVSEP_ERR_INVALID, "The launcher refused the request: it reached the wrong sandbox.");
	read_payload(&r, payload);
	check_request(&r);
	build_env(&r);
	char view[sizeof(r.sb.view)];
	make_exec_dirs(&r);
	view_facts(&r, view, sizeof(view));
	if (strcmp(view, r.sb.view) != 0) {
		/* The workspace changed under the prepared sandbox: build anew. */
		if (teardown(&r.sb) < 0)
			refuse(&r, PRIVSEP_ERR_SETUP, "The prepared sandbox could not be removed.");
		r.sb = SANDBOX_NONE;
		prepare(&r);
	}
	stamp(&r, PH_CHECKED);
	if (r.sb.error[0])
		refuse(&r, PRIVSEP_ERR_SETUP, r.sb.error);
	struct disk_watch disk = {0};
	disk_start(&r, &disk);
	if (send_job(&r) < 0)
		refuse(&r, PRIVSEP_ERR_SETUP, "The sandbox did not take its job.");
	stamp(&r, PH_JOB);
	if (!req.has_stdin)
		close_fd(&r.sb.in_w);
	struct privsep_started started = {.uid = uid, .has_stdin = req.has_stdin, .has_proxy = r.sb.listener >= 0};
	privsep_header_init(&started.h, PRIVSEP_STARTED);
	int fds[4] = {r.sb.out_r, r.sb.err_r, r.sb.in_w, r.sb.listener};
	privsep_send_nowait(r.chan, &started, sizeof(started), fds, 4);
	close_fd(&r.sb.out_r);
	close_fd(&r.sb.err_r);
	close_fd(&r.sb.in_w);
	close_fd(&r.sb.listener);
	stamp(&r, PH_STARTED);

	memset(&ex, 0, sizeof(ex));
	uint64_t deadline = (uint64_t)req.timeout_s * 1000;
	/* What the actor needs to stand where the run stands (actor.c). */
	struct sandbox_spec actor_spec = {.uid = uid, .profile = r.p, .workspace = r.workspace,
	                                  .proxy_port = r.p->network == PROFILE_NETWORK_PROXY ? PRIVSEP_PROXY_PORT : 0};
	struct notify_run nr = {.uid = uid, .tcp_port = (uint16_t)actor_spec.proxy_port, .spec = &actor_spec,
	                        .actor = r.sb.actor};
	r.sb.actor.pid = 0; /* the run's now: notify_stop ends it */
	bool have_status = false;
	uint64_t disk_next = 0; /* ms since t0 of the next disk look */
	struct sandbox_status sst = {0};
	for (;;) {
		uint64_t now = ms_since(&r.t0);
		int wait_ms = now >= deadline ? 0 : (int)(deadline - now);
		if (disk.on && wait_ms > DISK_TICK_MS)
			wait_ms = DISK_TICK_MS;
		struct pollfd pfd[5] = {{.fd = r.sb.status_r, .events = POLLIN},
		                        {.fd = r.chan, .events = POLLRDHUP},
		                        {.fd = sfd, .events = POLLIN},
		                        {.fd = r.sb.notify, .events = POLLIN},
		                        {.fd = nr.actor.pid > 0 ? nr.actor.sock : -1, .events = POLLIN}};
		int n = poll(pfd, 5, wait_ms);
		if (n < 0 && errno == EINTR)
			continue;
		/* The deadline and the disk, first and whatever else happened: a
		 * run that writes sends a notification per call (actor.c), so the
		 * poll may never time out while it runs. */
		uint64_t t_now = ms_since(&r.t0);
		if (t_now >= deadline && !(n > 0 && pfd[0].revents)) {
			ex.timed_out = 1;
			kill_run(&r.sb);
			break;
		}
		if (disk.on && t_now >= disk_next) {
			disk_next = t_now + DISK_TICK_MS;
			if (disk_over(&r, &disk, ex.message, sizeof(ex.message))) {
				ex.disk_limited = 1;
				log_info("run %s: %s", req.run_id, ex.message);
				kill_run(&r.sb);
				break;
			}
		}
		if (n > 0 && pfd[4].revents) {
			/* The actor's answer to a write of the run (notify.c). */
			unsigned denied = nr.n_denied;
			if (!(pfd[4].revents & POLLIN) || r.sb.notify < 0 || notify_actor_answer(r.sb.notify, &nr) < 0) {
				/* Calls it held would wait forever: fail closed. */
				notify_stop(&nr);
				snprintf(ex.message, sizeof(ex.message),
				         "The run's file actor ended unexpectedly; the run was stopped.");
				ex.error = PRIVSEP_ERR_SETUP;
				log_warn("run %s: %s", req.run_id, ex.message);
				kill_run(&r.sb);
				break;
			}
			if (nr.n_denied != denied && nr.n_denied <= DENIALS_LOGGED)
				log_info("run %s: refused %s", req.run_id, nr.denied);
			if (!pfd[0].revents && !pfd[1].revents && !pfd[2].revents && !pfd[3].revents)
				continue;
		}
		if (n > 0 && pfd[3].revents && !pfd[0].revents && !pfd[1].revents && !pfd[2].revents) {
			/* (the actor's fd is handled above) */
			/* A umask() or connect() of the run (notify.c); a dead
			 * listener (POLLHUP: no process of the run is left) is
			 * dropped. */
			unsigned denied = nr.n_denied;
			if (!(pfd[3].revents & POLLIN) || notify_answer(r.sb.notify, &nr) < 0)
				close_fd(&r.sb.notify);
			if (nr.n_denied != denied && nr.n_denied <= DENIALS_LOGGED)
				log_info("run %s: refused %s", req.run_id, nr.denied);
			continue;
		}
		if (n == 0)
			continue;
		if (pfd[0].revents) {
			ssize_t got = read(r.sb.status_r, &sst, sizeof(sst));
			have_status = got == (ssize_t)sizeof(sst);
			break;
		}
		if (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			log_info("run %s: the front gave up on the run; killing it", req.run_id);
			kill_run(&r.sb);
			break;
		}
		if (pfd[2].revents) {
			ex.error = PRIVSEP_ERR_CAPACITY;
			snprintf(ex.message, sizeof(ex.message), "The daemon is shutting down; the run was stopped.");
			kill_run(&r.sb);
			break;
		}
	}
	notify_stop(&nr);
	if (have_status && sst.kind == SANDBOX_STATUS_SETUP_FAILED) {
		ex.error = PRIVSEP_ERR_SETUP;
		sandbox_failure(ex.message, sizeof(ex.message), &sst);
		log_warn("run %s: %s", req.run_id, ex.message);
	} else if (have_status && sst.kind == SANDBOX_STATUS_EXIT && !ex.timed_out && !ex.disk_limited) {
		if (WIFEXITED(sst.wstatus)) {
			ex.exit_code = WEXITSTATUS(sst.wstatus);
		} else {
			ex.exit_code = -1;
			ex.signal = WTERMSIG(sst.wstatus);
		}
	} else if (!ex.error) {
		/* The init died without a word: it was killed (timeout, abort). */
		ex.exit_code = -1;
		ex.signal = SIGKILL;
	}
	stamp(&r, PH_EXITED);
	/* When the init reported the exit itself, it had already killed and
	 * reaped every other process of the run (sandbox.c): the reply may go
	 * now, while the init's own exit tears the namespaces down.  Otherwise
	 * (timeout, abort, a failure) the run is stopped first. */
	bool reported = have_status && sst.kind == SANDBOX_STATUS_EXIT && !ex.timed_out && !ex.disk_limited;
	if (!reported)
		ex.cleanup_failed = stop_run(&r.sb) < 0;
	read_usage(&r.sb, &ex.usage);
	privsep_header_init(&ex.h, PRIVSEP_EXIT);
	ex.ms = ms_since(&r.t0);
	ex.n_denied = nr.n_denied;
	memcpy(ex.denied, nr.first, sizeof(ex.denied));
	privsep_send_nowait(r.chan, &ex, sizeof(ex), NULL, 0);
	if (reported && stop_run(&r.sb) < 0)
		ex.cleanup_failed = 1;
	stamp(&r, PH_EMPTY);
	if (remove_cgroup(&r.sb) < 0)
		ex.cleanup_failed = 1;
	stamp(&r, PH_REMOVED);
	if (ex.cleanup_failed)
		log_warn("run %s: a process or the cgroup outlived the run; uid %u is quarantined", req.run_id, uid);
	log_debug("run %s: checked %lu us, job sent %lu, started %lu, exited %lu, empty %lu, removed %lu",
	          req.run_id, (unsigned long)r.us[PH_CHECKED], (unsigned long)r.us[PH_JOB],
	          (unsigned long)r.us[PH_STARTED], (unsigned long)r.us[PH_EXITED], (unsigned long)r.us[PH_EMPTY],
	          (unsigned long)r.us[PH_REMOVED]);
	_exit(ex.cleanup_failed ? 3 : 0);
}
