/*
 * runcg.c - one cgroup per run: pids.max and the memory limit, SIGKILL of
 * every process of the run, removal afterwards.  Start-up found the mounts
 * (start/cgsetup.c, with libcgroup); a run's cgroup is plain file-system
 * calls on the directories that names: mkdir, writes of the limits and of
 * the init's pid into cgroup.procs, rmdir (make_dirs says why not
 * libcgroup's calls).
 *
 * Layouts (research/ecosystem.md §2):
 *   v1      every controller on its own v1 hierarchy.  Runs live in
 *           <own cgroup of that controller>/<parent>/<name>; kill is a
 *           freeze + SIGKILL loop over cgroup.procs.
 *   hybrid  as v1 for the limits, plus a same-named cgroup in the
 *           controller-less v2 mount (/sys/fs/cgroup/unified): it gives
 *           cgroup.kill (atomic, races forks, Linux >= 5.14) and
 *           cgroup.events (populated 0 = empty) for free.
 *   v2      one unified hierarchy.  Under systemd (Delegate=yes) our own
 *           cgroup is the delegation point; the no-internal-process rule
 *           means the daemon first moves itself to <own>/daemon, then runs
 *           go to <own>/runs/<name> with +pids +memory enabled on the way.
 *
 * The parents are named relative to each hierarchy's root, not to the
 * caller's cgroup: start-up built them from /proc/self/cgroup.
 *
 * The functions are called from per-run forked supervisors, so nothing here
 * relies on memory shared between processes: the cgroup filesystem is the
 * only shared state.  Module state is written once by runcg_init() before
 * any fork and only read afterwards.
 *
 * Trust: privileged.  Run names come from the launcher and are still
 * checked to be one plain path component.
 */
#include "errmsg.h"
#include "fdio.h"
#include "monotime.h"
#include "runcg.h"
#include "runcg_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KILL_ROUNDS 400 /* v1 kill loop bound: 400 rounds, ~1 s at most */

struct runcg_state S;

int cg_pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

bool cg_name_ok(const char *name)
{
	size_t i, len = strlen(name);

	if (len == 0 || len > NAME_MAX_LEN || name[0] == '.')
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* This process's cgroup for `ctrl` from /proc/self/cgroup ("N:a,b:/path");
 * ctrl NULL asks for the v2 line ("0::/path").  out gets the path without
 * the leading '/' ("" for the root). */
int cg_own_cgroup(pid_t pid, const char *ctrl, char *out, size_t outlen)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	errno = ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *nl;
		bool match = false;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c2 = '\0';
		if (!ctrl) {
			match = c1[1] == '\0' && strncmp(line, "0:", 2) == 0;
		} else {
			char *tok, *save = NULL;
			for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, ctrl) == 0)
					match = true;
		}
		if (!match)
			continue;
		if ((nl = strchr(c2 + 1, '\n')))
			*nl = '\0';
		while (*++c2 == '/')
			;
		if (cg_pathf(out, outlen, "%s", c2) == 0)
			rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

/* Fill cg's paths for `name` without touching the kernel.  Field by field,
 * not a memset: only the pages the paths use are touched (RUN_DIR_MAX). */
int cg_paths(struct run_cgroup *cg, const char *name)
{
	cg->kill_fd = cg->freeze_fd = cg->dir_fd[0] = cg->dir_fd[1] = cg->dir_fd[2] = cg->dir_fd[3] = -1;
	cg->mem_dir[0] = cg->frz_dir[0] = cg->v2_dir[0] = '\0';
	snprintf(cg->name, sizeof(cg->name), "%s", name);
	if (cg_pathf(cg->procs_dir, sizeof(cg->procs_dir), "%s/%s/%s", S.pids.mnt, S.pids.parent, name) < 0 ||
	    cg_pathf(cg->pids_rel, sizeof(cg->pids_rel), "/%s/%s", S.pids.parent, name) < 0)
		return -1;
	if (S.mem.on &&
	    cg_pathf(cg->mem_dir, sizeof(cg->mem_dir), "%s/%s/%s", S.mem.mnt, S.mem.parent, name) < 0)
		return -1;
	if (S.frz.on &&
	    cg_pathf(cg->frz_dir, sizeof(cg->frz_dir), "%s/%s/%s", S.frz.mnt, S.frz.parent, name) < 0)
		return -1;
	if (S.track.on &&
	    cg_pathf(cg->v2_dir, sizeof(cg->v2_dir), "%s/%s/%s", S.track.mnt, S.track.parent, name) < 0)
		return -1;
	cg->own_v2_dir = S.layout == LAYOUT_HYBRID;
	return 0;
}

const struct hier *cg_dir_too_long(void)
{
	const struct hier *hs[4] = {&S.pids, &S.mem, &S.frz, &S.track};

	for (int i = 0; i < 4; i++)
		if (hs[i]->on && strlen(hs[i]->mnt) + 1 + strlen(hs[i]->parent) > RUNS_DIR_MAX)
			return hs[i];
	return NULL;
}

/* The run's directory in each hierarchy it lives in, each once (v2: one
 * for both controllers), a hybrid host's unified one first: once the init
 * is in that one, cgroup.kill reaches it whatever happens next.  Returns
 * how many. */
static int run_dirs(const struct run_cgroup *cg, const char *dirs[4])
{
	int n = 0;

	if (cg->own_v2_dir)
		dirs[n++] = cg->v2_dir;
	dirs[n++] = cg->procs_dir;
	if (cg->mem_dir[0] && strcmp(cg->mem_dir, cg->procs_dir) != 0)
		dirs[n++] = cg->mem_dir;
	if (cg->frz_dir[0])
		dirs[n++] = cg->frz_dir;
	return n;
}

int cg_open(const struct run_cgroup *cg, const char *dir, const char *file, int flags)
{
	const char *dirs[4];
	char path[PATH_MAX + 64];
	int n = run_dirs(cg, dirs);

	if (!dir[0]) {
		errno = ENOENT; /* the run has no cgroup in that hierarchy */
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (strcmp(dir, dirs[i]) == 0 && cg->dir_fd[i] >= 0)
			return openat(cg->dir_fd[i], file, flags | O_CLOEXEC);
	return cg_pathf(path, sizeof(path), "%s/%s", dir, file) < 0 ? -1 : open(path, flags | O_CLOEXEC);
}

int cg_read_u64(const struct run_cgroup *cg, const char *dir, const char *file, uint64_t *out)
{
	char buf[64], *end;

	if (fdio_read_fd(cg_open(cg, dir, file, O_RDONLY), buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	*out = strtoull(buf, &end, 10);
	if (errno || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int cg_mkdir_ok(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* One limit file of a run cgroup made by make_dirs. */
static int put_u64(const struct run_cgroup *cg, const char *dir, const char *file, uint64_t v)
{
	char val[32];

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	return fdio_write_fd(cg_open(cg, dir, file, O_WRONLY), val);
}

/* The run's directories by plain mkdir and not cgroup_create_cgroup:
 * libcgroup 2.0.2 reads /proc/mounts before every mkdir and every value it
 * writes (five times a run here, and the file grows with every mount of the
 * box), walks mkdir down from "/" and, on v2, rewrites each ancestor's
 * subtree_control.  Start-up made the parents and enabled the controllers
 * once.  Its attach and delete, for the same reason, are not used either:
 * a struct cgroup and a struct cgroup_controller of several KiB each per
 * hierarchy, a FILE per attach, in a supervisor forked from the launcher,
 * where every page written is a page copied.  *made is set once anything
 * exists to remove. */
static int make_dirs(struct run_cgroup *cg, bool *made)
{
	const char *dirs[4];
	int n = run_dirs(cg, dirs);

	for (int i = 0; i < n; i++) {
		if (cg_mkdir_ok(dirs[i]) < 0)
			return -1;
		*made = true;
		/* Held for cg_open.  The init inherits it, as the kill file: it
		 * runs none of the run's code, and the command gets fds 0-2
		 * only (asrun/sandbox_run.c). */
		if ((cg->dir_fd[i] = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return -1;
	}
	return 0;
}

/* rmdir of each of the run's directories: a plain rmdir removes only an
 * empty cgroup (EBUSY otherwise), where libcgroup's default delete would
 * move leftovers into the parent, i.e. quietly set an escaped process free
 * of the run's limits.  Every one is tried; 0, or -1 with the first error
 * that is not ENOENT. */
static int remove_dirs(const struct run_cgroup *cg)
{
	const char *dirs[4];
	int n = run_dirs(cg, dirs), e = 0;

	for (int i = 0; i < n; i++)
		if (rmdir(dirs[i]) < 0 && errno != ENOENT && e == 0)
			e = errno;
	errno = e;
	return e ? -1 : 0;
}

struct run_cgroup *runcg_create(const char *name, unsigned pids_max, uint64_t memory_max, char *err,
                                size_t errlen)
{
	struct run_cgroup *cg;
	uint64_t got, mem = 0;
	const char *limit = S.layout == LAYOUT_V2 ? "memory.max" : "memory.limit_in_bytes";
	bool created = false;
	int e;

	if (!S.ready) {
		errmsg_set(err, errlen, "cgroup: runcg_init was not called");
		errno = EINVAL;
		return NULL;
	}
	if (!cg_name_ok(name) || pids_max == 0) {
		errmsg_set(err, errlen, "cgroup: bad run cgroup name or pids_max 0");
		errno = EINVAL;
		return NULL;
	}
	if (!(cg = malloc(sizeof(*cg)))) {
		errmsg_set(err, errlen, "cgroup: out of memory");
		return NULL;
	}
	if (cg_paths(cg, name) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot describe %s: %s", name, strerror(errno));
		goto err_free;
	}
	if (make_dirs(cg, &created) < 0) {
		e = errno;
		errmsg_set(err, errlen, "cgroup: cannot create %s: %s", name, strerror(e));
		errno = e;
		goto err_delete;
	}
	if (put_u64(cg, cg->procs_dir, "pids.max", pids_max) < 0)
		goto err_value;
	if (S.mem.on && memory_max > 0) {
		long pg = sysconf(_SC_PAGESIZE);
		bool v2 = S.layout == LAYOUT_V2;

		/* The kernel rounds limits down to whole pages; do it here so
		 * the read-back below compares like with like. */
		mem = memory_max - memory_max % (uint64_t)pg;
		if (mem == 0)
			mem = (uint64_t)pg;
		if (put_u64(cg, cg->mem_dir, limit, mem) < 0)
			goto err_value;
		/* No swap for runs, where swap is accounted (else the file is
		 * missing: ENOENT): v2 swap.max 0; v1 memsw (memory+swap, >= the
		 * limit) equal to the limit. */
		const char *noswap = v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
		if (put_u64(cg, cg->mem_dir, noswap, v2 ? 0 : mem) < 0 && errno != ENOENT)
			goto err_value;
	}
	/* Fail closed: read the limits back instead of trusting that every
	 * value reached the kernel. */
	if (cg_read_u64(cg, cg->procs_dir, "pids.max", &got) < 0 || got != pids_max) {
		errmsg_set(err, errlen, "cgroup: pids.max of %s did not take effect", name);
		errno = EIO;
		goto err_delete;
	}
	if (mem && (cg_read_u64(cg, cg->mem_dir, limit, &got) < 0 || got != mem)) {
		errmsg_set(err, errlen, "cgroup: the memory limit of %s did not take effect", name);
		errno = EIO;
		goto err_delete;
	}
	/* The files that stop the run, opened now: the supervisor that kills
	 * it runs as the run's uid by then (supervise.c), and a cgroup file
	 * checks its writer when it is opened. */
	if ((cg->v2_dir[0] && (cg->kill_fd = cg_open(cg, cg->v2_dir, "cgroup.kill", O_WRONLY)) < 0) ||
	    (cg->frz_dir[0] && (cg->freeze_fd = cg_open(cg, cg->frz_dir, "freezer.state", O_RDWR)) < 0)) {
		e = errno;
		errmsg_set(err, errlen, "cgroup: cannot open the kill file of %s: %s", name, strerror(e));
		errno = e;
		goto err_delete;
	}
	return cg;

err_value:
	e = errno;
	errmsg_set(err, errlen, "cgroup: cannot set a limit value for %s: %s", name, strerror(e));
	errno = e;
err_delete:
	e = errno;
	if (created)
		(void)remove_dirs(cg);
	errno = e;
err_free:
	e = errno;
	runcg_release(cg);
	errno = e;
	return NULL;
}

int runcg_attach(struct run_cgroup *cg, pid_t pid)
{
	char buf[32];
	const char *dirs[4];
	int n;

	if (!cg || pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	/* cgroup.procs, on v1 too: the init is one thread. */
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	n = run_dirs(cg, dirs);
	for (int i = 0; i < n; i++)
		if (fdio_write_fd(cg_open(cg, dirs[i], "cgroup.procs", O_WRONLY), buf) < 0)
			return -1;
	return 0;
}

/* SIGKILL `pid` only if it is (still) in the run: the pidfd pins the process
 * so a recycled pid cannot be hit (pidfd_open(2)). */
static void kill_member(struct run_cgroup *cg, pid_t pid)
{
	char own[PATH_MAX];
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool member;

	if (fd < 0)
		return;
	if (S.layout == LAYOUT_V2)
		member = cg_own_cgroup(pid, NULL, own, sizeof(own)) == 0;
	else
		member = cg_own_cgroup(pid, "pids", own, sizeof(own)) == 0;
	/* own has no leading '/', pids_rel has one. */
	if (member && strcmp(own, cg->pids_rel + 1) == 0)
		syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	close(fd);
}

/* One pass over cgroup.procs; returns how many processes were listed. */
static int kill_pass(struct run_cgroup *cg)
{
	FILE *f;
	int pid, n = 0, fd = cg_open(cg, cg->procs_dir, "cgroup.procs", O_RDONLY);

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return errno == ENOENT ? 0 : -1;
	}
	while (fscanf(f, "%d", &pid) == 1) {
		n++;
		kill_member(cg, pid);
	}
	fclose(f);
	return n;
}

static void freeze(struct run_cgroup *cg, bool on)
{
	const char *state = on ? "FROZEN" : "THAWED";
	char buf[32];
	struct timespec ts = { 0, 200000 };

	if (pwrite(cg->freeze_fd, state, strlen(state), 0) < 0 || !on)
		return;
	/* FREEZING -> FROZEN is asynchronous; 50 ms at most, then go on (a
	 * partly frozen group is still better than none). */
	for (int i = 0; i < 250; i++) {
		ssize_t n = pread(cg->freeze_fd, buf, sizeof(buf) - 1, 0);
		if (n > 0 && strncmp(buf, "FROZEN", 6) == 0)
			return;
		nanosleep(&ts, NULL);
	}
}

int runcg_kill(struct run_cgroup *cg)
{
	struct timespec ts = { 0, 2000000 };
	int round, n;

	if (!cg) {
		errno = EINVAL;
		return -1;
	}
	if (cg->v2_dir[0]) {
		/* cgroup.kill (Linux 5.14, commit 661ee6280) SIGKILLs the whole
		 * subtree and processes forking concurrently.  Start-up's crash
		 * recovery kills cgroups it did not create: by path. */
		int rc = cg->kill_fd >= 0
			     ? (pwrite(cg->kill_fd, "1", 1, 0) == 1 ? 0 : -1)
			     : fdio_write_fd(cg_open(cg, cg->v2_dir, "cgroup.kill", O_WRONLY), "1");
		if (rc < 0)
			return errno == ENOENT || errno == ENODEV ? 0 : -1;
		/* Hybrid: a process attached to the pids cgroup only (attach
		 * half done) is still caught by one pass below. */
		if (cg->own_v2_dir && kill_pass(cg) < 0 && errno != ENOENT)
			return -1;
		return 0;
	}
	for (round = 0; round < KILL_ROUNDS; round++) {
		if (cg->freeze_fd >= 0)
			freeze(cg, true);
		n = kill_pass(cg);
		if (cg->freeze_fd >= 0)
			freeze(cg, false); /* SIGKILL is acted on when thawed */
		if (n <= 0)
			return n;
		nanosleep(&ts, NULL);
	}
	errno = EBUSY;
	return -1;
}

/* 1 when no process is left in any hierarchy of the run. */
static int is_empty(struct run_cgroup *cg)
{
	char buf[256];
	ssize_t n;

	if (cg->v2_dir[0]) {
		if (fdio_read_fd(cg_open(cg, cg->v2_dir, "cgroup.events", O_RDONLY), buf, sizeof(buf)) < 0) {
			if (errno != ENOENT)
				return -1;
		} else if (!strstr(buf, "populated 0")) {
			return 0;
		}
		if (!cg->own_v2_dir)
			return 1;
	}
	/* One read, no FILE: a pid listed is all this asks. */
	if ((n = fdio_read_fd(cg_open(cg, cg->procs_dir, "cgroup.procs", O_RDONLY), buf, sizeof(buf))) < 0)
		return errno == ENOENT ? 1 : -1;
	return n == 0;
}

int runcg_wait_empty(struct run_cgroup *cg, int timeout_ms)
{
	int64_t deadline = monotime_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int fd = -1, r, rc = -1;

	if (!cg) {
		errno = EINVAL;
		return -1;
	}
	/* cgroup.events raises POLLPRI on every change (cgroup-v2.rst). */
	if (cg->v2_dir[0])
		fd = cg_open(cg, cg->v2_dir, "cgroup.events", O_RDONLY);
	for (;;) {
		int64_t left;

		r = is_empty(cg);
		if (r < 0)
			break;
		if (r == 1) {
			rc = 0;
			break;
		}
		left = deadline - monotime_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			break;
		}
		if (left > 20)
			left = 20;
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLPRI };
			char buf[128];
			poll(&p, 1, (int)left);
			/* Re-arm: kernfs notifies after a read from offset 0. */
			if (pread(fd, buf, sizeof(buf), 0) < 0)
				break;
		} else {
			struct timespec ts = { 0, (left > 2 ? 2 : left) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return rc;
}

int runcg_destroy(struct run_cgroup *cg)
{
	int rc, e;

	if (!cg)
		return 0;
	rc = remove_dirs(cg);
	e = errno;
	runcg_release(cg);
	errno = e;
	return rc;
}

void runcg_release(struct run_cgroup *cg)
{
	if (!cg)
		return;
	fdio_close(&cg->kill_fd);
	fdio_close(&cg->freeze_fd);
	for (int i = 0; i < 4; i++)
		fdio_close(&cg->dir_fd[i]);
	free(cg);
}

int runcg_remove(const char *name)
{
	struct run_cgroup cg; /* on the stack: no heap page of the launcher's written */

	if (!cg_name_ok(name)) {
		errno = EINVAL;
		return -1;
	}
	return cg_paths(&cg, name) < 0 ? -1 : remove_dirs(&cg);
}
