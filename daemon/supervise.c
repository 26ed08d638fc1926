/*
 * supervise.c - one run's life, in its own child of the launcher (root):
 * read and re-check the payload, make the cgroup, the pipes and the idmap
 * namespace, clone the sandbox child, hand the pipes to the front, enforce
 * the timeout, kill and tear everything down, report the exit record.
 *
 * Trust: privileged; the payload comes from the front and is re-validated
 * here byte by byte before anything is built from it.
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher.h"
#include "log.h"
#include "ns.h"
#include "runcg.h"
#include "sandbox.h"

#define ENVP_MAX (16 + PROFILE_LIST_MAX + RUN_ENV_COUNT_MAX)
#define STR_(x) #x
#define STR(x) STR_(x)
#define PROXY_PORT_STR STR(PRIVSEP_PROXY_PORT)
#define CLEANUP_WAIT_MS 2000

struct run {
	const struct launcher *l;
	const struct privsep_run *req;
	const struct profile *p;
	int chan;
	uid_t uid;
	char *payload;          /* cmd | cwd | env, each NUL-terminated copy below */
	char *cmd, *cwd_req, *env;
	char cwd[PATH_MAX];
	const char *workspace;
	char *envp[ENVP_MAX + 1];
	char envbuf[4][64];
	struct timespec t0;
	uint64_t us[8];         /* phase timings for --verbose */
};

enum phase { PH_CHECKED, PH_CGROUP, PH_USERNS, PH_STARTED, PH_EXITED, PH_EMPTY, PH_REMOVED, PH_COUNT };

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

static noreturn void refuse(struct run *r, enum privsep_error e, const char *msg)
{
	privsep_send_error(r->chan, e, "%s", msg);
	_exit(0); /* nothing was started: the uid is clean */
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

static bool env_name_ok(const char *s, size_t len)
{
	char name[256];
	if (len == 0 || len >= sizeof(name))
		return false;
	memcpy(name, s, len);
	name[len] = '\0';
	return profile_env_name_valid(name) && !profile_env_name_dangerous(name);
}

static void check_payload(struct run *r)
{
	const struct privsep_run *q = r->req;

	if (memchr(r->cmd, '\0', q->cmd_len))
		refuse(r, PRIVSEP_ERR_INVALID, "The launcher refused the request: cmd holds a NUL byte.");
	if (memchr(r->cwd_req, '\0', q->cwd_len) || r->cwd_req[0] != '/')
		refuse(r, PRIVSEP_ERR_INVALID, "The launcher refused the request: cwd is not an absolute path.");
	/* env: exactly env_count "NAME=VALUE\0" entries filling env_len. */
	size_t off = 0, n = 0;
	while (off < q->env_len) {
		const char *e = r->env + off;
		size_t len = strnlen(e, q->env_len - off);
		const char *eq = memchr(e, '=', len);
		if (off + len >= q->env_len || !eq || !env_name_ok(e, (size_t)(eq - e)))
			refuse(r, PRIVSEP_ERR_INVALID, "The launcher refused the request: a bad env entry.");
		off += len + 1;
		n++;
	}
	if (n != q->env_count)
		refuse(r, PRIVSEP_ERR_INVALID, "The launcher refused the request: env count mismatch.");
	/* Symlinks followed: the resolved cwd must be inside the workspace. */
	r->workspace = r->l->cfg->workspaces[q->workspace_id];
	size_t wl = strlen(r->workspace);
	if (!realpath(r->cwd_req, r->cwd) ||
	    !(strncmp(r->cwd, r->workspace, wl) == 0 && (r->cwd[wl] == '\0' || r->cwd[wl] == '/' || wl == 1))) {
		char msg[256];
		snprintf(msg, sizeof(msg), "cwd does not resolve to a directory inside workspace %s.", r->workspace);
		refuse(r, PRIVSEP_ERR_CWD, msg);
	}
	struct stat st;
	if (stat(r->cwd, &st) < 0 || !S_ISDIR(st.st_mode))
		refuse(r, PRIVSEP_ERR_CWD, "cwd is not a directory.");
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

static void send_exit(struct run *r, struct privsep_exit *ex)
{
	privsep_header_init(&ex->h, PRIVSEP_EXIT);
	ex->ms = ms_since(&r->t0);
	privsep_send(r->chan, ex, sizeof(*ex), NULL, 0);
}

static void kill_run(struct run_cgroup *cg, pid_t init)
{
	/* Killing the pid namespace's init makes the kernel kill every process
	 * in it; the cgroup kill also catches anything mid-fork. */
	runcg_kill(cg);
	kill(init, SIGKILL);
}

noreturn void supervise_run(const struct launcher *l, const struct privsep_run *req, int chan,
                            int payload_fd, uid_t uid)
{
	struct run r = {.l = l, .req = req, .chan = chan, .uid = uid};
	struct privsep_exit ex;
	char err[256], name[64];
	int out[2], errp[2], in[2] = {-1, -1}, status[2], sync[2];
	sigset_t mask;

	clock_gettime(CLOCK_MONOTONIC, &r.t0);
	log_set_prefix("run");
	/* If the launcher dies, we stop the run and clean up. */
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	r.p = &l->profiles->v[req->profile_id];
	read_payload(&r, payload_fd);
	check_payload(&r);
	build_env(&r);
	stamp(&r, PH_CHECKED);

	snprintf(name, sizeof(name), "run-%s", req->run_id);
	struct run_cgroup *cg = runcg_create(name, r.p->pids_max, r.p->memory_max, err, sizeof(err));
	if (!cg) {
		log_warn("run %s: %s", req->run_id, err);
		refuse(&r, PRIVSEP_ERR_SETUP, err);
	}
	stamp(&r, PH_CGROUP);
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0 ||
	    pipe2(sync, O_CLOEXEC) < 0 || (req->has_stdin && pipe2(in, O_CLOEXEC) < 0))
		goto setup_failed_errno;
	if (!req->has_stdin && (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		goto setup_failed_errno;
	struct stat wst;
	if (stat(r.workspace, &wst) < 0)
		goto setup_failed_errno;
	int userns = ns_idmap_userns(wst.st_uid, wst.st_gid, uid);
	if (userns < 0)
		goto setup_failed_errno;
	stamp(&r, PH_USERNS);

	struct sandbox_spec spec = {
		.uid = uid, .profile = r.p, .workspace = r.workspace, .cwd = r.cwd,
		.userns_fd = userns, .newroot = l->newroot, .envp = r.envp, .cmd = r.cmd,
		.stdin_fd = in[0], .stdout_fd = out[1], .stderr_fd = errp[1],
		.status_fd = status[1], .sync_fd = sync[0], .seccomp = &l->seccomp,
		.proxy_port = r.p->network == PROFILE_NETWORK_PROXY ? PRIVSEP_PROXY_PORT : 0,
	};
	/* A raw clone: the child gets its namespaces at birth (it is pid 1 of
	 * the new pid namespace) and continues like fork. */
	pid_t init = (pid_t)syscall(SYS_clone, NS_SANDBOX_FLAGS | SIGCHLD, NULL, NULL, NULL, NULL);
	if (init < 0)
		goto setup_failed_errno;
	if (init == 0) {
		close(chan);
		close(out[0]);
		close(errp[0]);
		close(status[0]);
		close(sync[1]);
		if (in[1] >= 0)
			close(in[1]);
		sandbox_child(&spec);
	}
	close(userns);
	close(sync[0]);
	sync[0] = -1;
	close(status[1]);
	close(out[1]);
	close(errp[1]);
	close(in[0]);
	memset(&ex, 0, sizeof(ex));
	if (runcg_attach(cg, init) < 0) {
		ex.error = PRIVSEP_ERR_SETUP;
		snprintf(ex.message, sizeof(ex.message), "The run could not join its cgroup: %s.", strerror(errno));
		kill(init, SIGKILL);
		close(sync[1]);
		goto wait_init;
	}
	int listener = -1;
	if (r.p->network == PROFILE_NETWORK_PROXY && (listener = proxy_listener(init)) < 0) {
		ex.error = PRIVSEP_ERR_SETUP;
		snprintf(ex.message, sizeof(ex.message), "The run's egress proxy could not listen: %s.", strerror(errno));
		kill(init, SIGKILL);
		close(sync[1]);
		goto wait_init;
	}
	char go = 1;
	/* Attached: the child may go on.  We keep the write end open until we
	 * exit, so the child can tell we are alive. */
	(void)!write(sync[1], &go, 1);

	struct privsep_started started = {.uid = uid, .has_stdin = in[1] >= 0, .has_proxy = listener >= 0};
	privsep_header_init(&started.h, PRIVSEP_STARTED);
	int fds[4] = {out[0], errp[0], in[1], listener};
	privsep_send(chan, &started, sizeof(started), fds, 4);
	if (listener >= 0)
		close(listener);
	close(out[0]);
	close(errp[0]);
	if (in[1] >= 0)
		close(in[1]);
	stamp(&r, PH_STARTED);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	uint64_t deadline = (uint64_t)req->timeout_s * 1000;
	bool have_status = false;
	struct sandbox_status sst = {0};
	for (;;) {
		uint64_t now = ms_since(&r.t0);
		int wait_ms = now >= deadline ? 0 : (int)(deadline - now);
		struct pollfd pfd[3] = {{.fd = status[0], .events = POLLIN},
		                        {.fd = chan, .events = POLLRDHUP},
		                        {.fd = sfd, .events = POLLIN}};
		int n = poll(pfd, 3, wait_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			ex.timed_out = 1;
			kill_run(cg, init);
			break;
		}
		if (pfd[0].revents) {
			ssize_t got = read(status[0], &sst, sizeof(sst));
			have_status = got == (ssize_t)sizeof(sst);
			break;
		}
		if (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			log_info("run %s: the front gave up on the run; killing it", req->run_id);
			kill_run(cg, init);
			break;
		}
		if (pfd[2].revents) {
			ex.error = PRIVSEP_ERR_CAPACITY;
			snprintf(ex.message, sizeof(ex.message), "The daemon is shutting down; the run was stopped.");
			kill_run(cg, init);
			break;
		}
	}
	if (have_status && sst.kind == SANDBOX_STATUS_SETUP_FAILED) {
		ex.error = PRIVSEP_ERR_SETUP;
		snprintf(ex.message, sizeof(ex.message), "The sandbox could not be built: %s failed: %s.",
		         sandbox_step_name(sst.step), strerror(sst.err));
		log_warn("run %s: %s", req->run_id, ex.message);
	} else if (have_status && sst.kind == SANDBOX_STATUS_EXIT && !ex.timed_out) {
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
wait_init:
	stamp(&r, PH_EXITED);
	kill_run(cg, init);
	while (waitpid(init, NULL, 0) < 0 && errno == EINTR)
		;
	/* Only an empty, removed cgroup proves nothing of the uid lives on. */
	if (runcg_wait_empty(cg, CLEANUP_WAIT_MS) < 0) {
		runcg_kill(cg);
		runcg_wait_empty(cg, CLEANUP_WAIT_MS);
	}
	stamp(&r, PH_EMPTY);
	if (runcg_destroy(cg) < 0) {
		ex.cleanup_failed = 1;
		log_warn("run %s: its cgroup could not be removed", req->run_id);
	}
	stamp(&r, PH_REMOVED);
	log_debug("run %s: checked %lu us, cgroup %lu, userns %lu, started %lu, exited %lu, empty %lu, removed %lu",
	          req->run_id, (unsigned long)r.us[PH_CHECKED], (unsigned long)r.us[PH_CGROUP],
	          (unsigned long)r.us[PH_USERNS], (unsigned long)r.us[PH_STARTED], (unsigned long)r.us[PH_EXITED],
	          (unsigned long)r.us[PH_EMPTY], (unsigned long)r.us[PH_REMOVED]);
	send_exit(&r, &ex);
	_exit(ex.cleanup_failed ? 3 : 0);

setup_failed_errno:
	snprintf(err, sizeof(err), "The sandbox could not be prepared: %s.", strerror(errno));
	log_warn("run %s: %s", req->run_id, err);
	runcg_destroy(cg);
	refuse(&r, PRIVSEP_ERR_SETUP, err);
}
