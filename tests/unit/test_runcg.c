/*
 * test_runcg.c - per-run cgroups on the real kernel: pids.max enforced on
 * real forks, memory limit in the kernel's file, kill of a setsid'd
 * double-forked tree, removal from every hierarchy, stale cleanup, and the
 * pure-v2 delegation step on the real unified hierarchy.  Runs twice where
 * it matters: hybrid (cgroup.kill) and legacy v1 (freezer + kill loop).
 * Needs root.
 */
#include "harness.h"
#include "cgsetup.h"
#include "runcg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char parent[64];
static char err[512];

static int rd(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

static int wr(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Our own cgroup for a v1 controller, without the leading '/'. */
static void own(const char *ctrl, char *out, size_t len)
{
	char line[PATH_MAX];
	FILE *f = fopen("/proc/self/cgroup", "re");

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		*b = '\0';
		if (strcmp(a + 1, ctrl) == 0) {
			b[strcspn(b + 1, "\n") + 1] = '\0';
			snprintf(out, len, "%s", b + 2);
		}
	}
	if (f)
		fclose(f);
}

/* Directory of run `name` in the hierarchy mounted at mnt for ctrl. */
static void cgdir(const char *mnt, const char *ctrl, const char *name, char *out, size_t len)
{
	char o[PATH_MAX];

	own(ctrl, o, sizeof(o));
	if (o[0])
	{
		if (snprintf(out, len, "%s/%s/%s/%s", mnt, o, parent, name) >= (int)len)
			out[0] = '\0';
	} else if (snprintf(out, len, "%s/%s/%s", mnt, parent, name) >= (int)len) {
		out[0] = '\0';
	}
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int count_procs(const char *dir)
{
	char path[PATH_MAX + 16];
	FILE *f;
	int pid, n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fscanf(f, "%d", &pid) == 1)
		n++;
	fclose(f);
	return n;
}

/* Alive = exists and not a zombie. */
static bool alive(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (rd(path, buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[2] != 'Z' && p[2] != 'X';
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* true if pid was reaped within 2 s; otherwise kill it so no test hangs. */
static bool reaped(pid_t pid)
{
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return false;
}

static bool gone_everywhere(const char *name)
{
	char d[PATH_MAX];
	bool ok = true;

	cgdir("/sys/fs/cgroup/pids", "pids", name, d, sizeof(d));
	if (exists(d)) {
		fprintf(stderr, "# still there: %s\n", d);
		ok = false;
	}
	cgdir("/sys/fs/cgroup/memory", "memory", name, d, sizeof(d));
	if (exists(d)) {
		fprintf(stderr, "# still there: %s\n", d);
		ok = false;
	}
	cgdir("/sys/fs/cgroup/freezer", "freezer", name, d, sizeof(d));
	if (exists(d)) {
		fprintf(stderr, "# still there: %s\n", d);
		ok = false;
	}
	cgdir("/sys/fs/cgroup/unified", "", name, d, sizeof(d));
	if (exists(d)) {
		fprintf(stderr, "# still there: %s\n", d);
		ok = false;
	}
	return ok;
}

/* Fork a child that waits on a pipe until attached, then runs fn. */
static pid_t spawn_attached(struct run_cgroup *cg, void (*fn)(int), int outfd)
{
	int go[2];
	pid_t pid;
	char c;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(99);
		fn(outfd);
		_exit(0);
	}
	close(go[0]);
	if (pid > 0 && runcg_attach(cg, pid) < 0) {
		fprintf(stderr, "# attach: %s\n", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	if (pid > 0 && write(go[1], "x", 1) != 1)
		pid = -1;
	close(go[1]);
	return pid;
}

/* In the run: try 20 forks, report ok/EAGAIN/other counts, then wait. */
static void forker(int out)
{
	int res[3] = { 0, 0, 0 };

	for (int i = 0; i < 20; i++) {
		pid_t p = fork();
		if (p == 0) {
			pause();
			_exit(0);
		}
		if (p > 0)
			res[0]++;
		else if (errno == EAGAIN)
			res[1]++;
		else
			res[2]++;
	}
	if (write(out, res, sizeof(res)) != sizeof(res))
		_exit(1);
	for (;;)
		pause();
}

static void check_pids_limit(const char *tag)
{
	struct run_cgroup *cg;
	char name[64], d[PATH_MAX];
	int p[2], res[3] = { -1, -1, -1 };
	pid_t pid;

	snprintf(name, sizeof(name), "run-pids-%s", tag);
	cg = runcg_create(name, 8, 0, err, sizeof(err));
	CHECK(cg != NULL);
	if (!cg) {
		fprintf(stderr, "# %s\n", err);
		return;
	}
	cgdir("/sys/fs/cgroup/pids", "pids", name, d, sizeof(d));
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	pid = spawn_attached(cg, forker, p[1]);
	close(p[1]);
	CHECK(pid > 0);
	CHECK(read(p[0], res, sizeof(res)) == sizeof(res));
	close(p[0]);
	/* 8 = the forker + 7 children; the 13 other forks fail with EAGAIN. */
	CHECK_EQ_INT(res[0], 7);
	CHECK_EQ_INT(res[1], 13);
	CHECK_EQ_INT(res[2], 0);
	CHECK_EQ_INT(count_procs(d), 8);
	CHECK_EQ_INT(runcg_kill(cg), 0);
	CHECK_EQ_INT(runcg_wait_empty(cg, 3000), 0);
	reap_all();
	CHECK_EQ_INT(count_procs(d), 0);
	CHECK_EQ_INT(runcg_destroy(cg), 0);
	CHECK(gone_everywhere(name));
}

/* setsid + double fork: the grandchildren are orphans in a new session;
 * the pids are reported back, then the middle process exits. */
static void daemonizer(int out)
{
	pid_t kids[3];

	setsid();
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			if (fork() > 0)
				_exit(0); /* the middle one goes away */
			setsid();
			for (;;)
				pause();
		}
	}
	/* Tell the parent our pid-level fan-out is done; grandchildren pids
	 * are found through cgroup.procs. */
	for (int i = 0; i < 3; i++)
		waitpid(kids[i], NULL, 0);
	if (write(out, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static void check_kill_tree(const char *tag)
{
	struct run_cgroup *cg;
	char name[64], d[PATH_MAX], path[PATH_MAX + 16];
	pid_t pids[16];
	int p[2], n = 0, pid_in;
	char c;
	FILE *f;

	snprintf(name, sizeof(name), "run-kill-%s", tag);
	cg = runcg_create(name, 32, 0, err, sizeof(err));
	CHECK(cg != NULL);
	if (!cg) {
		fprintf(stderr, "# %s\n", err);
		return;
	}
	cgdir("/sys/fs/cgroup/pids", "pids", name, d, sizeof(d));
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	CHECK(spawn_attached(cg, daemonizer, p[1]) > 0);
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1);
	close(p[0]);
	reap_all();
	/* The daemonizer + 3 orphaned grandchildren (children of us, the
	 * subreaper, or of nobody in particular: all still in the cgroup). */
	snprintf(path, sizeof(path), "%s/cgroup.procs", d);
	f = fopen(path, "re");
	CHECK(f != NULL);
	while (f && n < 16 && fscanf(f, "%d", &pid_in) == 1)
		pids[n++] = pid_in;
	if (f)
		fclose(f);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(runcg_wait_empty(cg, 50), -1);
	CHECK_EQ_INT(errno, ETIMEDOUT);
	CHECK_EQ_INT(runcg_kill(cg), 0);
	CHECK_EQ_INT(runcg_wait_empty(cg, 3000), 0);
	sleep_ms(20);
	reap_all();
	for (int i = 0; i < n; i++)
		CHECK(!alive(pids[i]));
	CHECK_EQ_INT(runcg_destroy(cg), 0);
	CHECK(gone_everywhere(name));
}

static void sleeper(int out)
{
	(void)out;
	for (;;)
		pause();
}

/* A non-empty cgroup is not removed and its process is not moved out. */
static void check_destroy_busy(const char *tag)
{
	struct run_cgroup *cg;
	char name[64], d[PATH_MAX];
	pid_t pid;
	int rc;

	snprintf(name, sizeof(name), "run-busy-%s", tag);
	cg = runcg_create(name, 4, 0, err, sizeof(err));
	CHECK(cg != NULL);
	if (!cg)
		return;
	cgdir("/sys/fs/cgroup/pids", "pids", name, d, sizeof(d));
	pid = spawn_attached(cg, sleeper, -1);
	CHECK(pid > 0);
	rc = runcg_destroy(cg); /* frees cg even on failure */
	CHECK_EQ_INT(rc, -1);
	CHECK_EQ_INT(errno, EBUSY);
	CHECK(exists(d));
	CHECK_EQ_INT(count_procs(d), 1);
	/* The crash-recovery path removes it. */
	CHECK(runcg_cleanup_stale(err, sizeof(err)) >= 1);
	CHECK(!exists(d));
	CHECK(gone_everywhere(name));
	CHECK(reaped(pid));
}

/* A "crashed" supervisor leaves a populated run cgroup behind. */
static void check_stale(const char *tag)
{
	char name[64], d[PATH_MAX];
	int p[2];
	pid_t sup, victim = 0;

	snprintf(name, sizeof(name), "run-stale-%s", tag);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	sup = fork();
	if (sup == 0) {
		struct run_cgroup *cg = runcg_create(name, 4, 0, err, sizeof(err));
		pid_t v;
		if (!cg)
			_exit(2);
		v = spawn_attached(cg, sleeper, -1);
		if (v <= 0 || write(p[1], &v, sizeof(v)) != sizeof(v))
			_exit(3);
		_exit(0); /* no kill, no destroy: the crash */
	}
	close(p[1]);
	CHECK(read(p[0], &victim, sizeof(victim)) == sizeof(victim));
	close(p[0]);
	waitpid(sup, NULL, 0);
	cgdir("/sys/fs/cgroup/pids", "pids", name, d, sizeof(d));
	CHECK(exists(d));
	CHECK(victim > 0 && alive(victim));
	CHECK(runcg_cleanup_stale(err, sizeof(err)) >= 1);
	sleep_ms(20);
	reap_all();
	CHECK(victim > 0 && !alive(victim));
	CHECK(gone_everywhere(name));
	CHECK_EQ_INT(runcg_cleanup_stale(err, sizeof(err)), 0);
}

TEST(init_hybrid)
{
	CHECK_EQ_INT(runcg_init_named(parent, false, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "# %s\n", err);
	CHECK_STR(runcg_version(), "hybrid");
	CHECK(runcg_has_memory());
}

TEST(bad_names)
{
	CHECK(runcg_create("../x", 8, 0, err, sizeof(err)) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	CHECK(runcg_create("a/b", 8, 0, err, sizeof(err)) == NULL);
	CHECK(runcg_create("", 8, 0, err, sizeof(err)) == NULL);
	CHECK(runcg_create("ok", 0, 0, err, sizeof(err)) == NULL);
}

TEST(pids_limit_hybrid) { check_pids_limit("h"); }
TEST(kill_tree_hybrid) { check_kill_tree("h"); }
TEST(destroy_busy_hybrid) { check_destroy_busy("h"); }
TEST(stale_hybrid) { check_stale("h"); }

TEST(unified_tracking)
{
	struct run_cgroup *cg = runcg_create("run-track", 4, 0, err, sizeof(err));
	char d[PATH_MAX], path[PATH_MAX + 32], buf[256], line[PATH_MAX];
	pid_t pid;
	FILE *f;
	bool in_pids = false, in_unified = false;

	CHECK(cg != NULL);
	if (!cg)
		return;
	cgdir("/sys/fs/cgroup/unified", "", "run-track", d, sizeof(d));
	CHECK(exists(d));
	pid = spawn_attached(cg, sleeper, -1);
	CHECK(pid > 0);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, ":pids:") && strstr(line, "/run-track"))
			in_pids = true;
		if (strncmp(line, "0::", 3) == 0 && strstr(line, "/run-track"))
			in_unified = true;
	}
	if (f)
		fclose(f);
	CHECK(in_pids);
	CHECK(in_unified);
	snprintf(path, sizeof(path), "%s/cgroup.events", d);
	CHECK(rd(path, buf, sizeof(buf)) > 0 && strstr(buf, "populated 1"));
	CHECK_EQ_INT(runcg_kill(cg), 0);
	CHECK_EQ_INT(runcg_wait_empty(cg, 3000), 0);
	CHECK(rd(path, buf, sizeof(buf)) > 0 && strstr(buf, "populated 0"));
	CHECK(reaped(pid));
	CHECK_EQ_INT(runcg_destroy(cg), 0);
	CHECK(!exists(d));
}

/* A daemon started from a cgroup so deep that a run's directory would not
 * fit in RUN_DIR_MAX is refused at start-up, naming the directory, instead
 * of failing every run later. */
TEST(dir_too_long)
{
	char deep[PATH_MAX], own_v2[PATH_MAX], path[PATH_MAX + 64], pid[32], made[PATH_MAX + 80];
	size_t base;

	own("", own_v2, sizeof(own_v2));
	base = (size_t)snprintf(deep, sizeof(deep), "/sys/fs/cgroup/unified/%s%s%s", own_v2,
				own_v2[0] ? "/" : "", "sharness-deep");
	CHECK(mkdir(deep, 0755) == 0);
	for (int i = 0; i < 8; i++) {
		snprintf(deep + strlen(deep), sizeof(deep) - strlen(deep), "/%060d", i);
		CHECK(mkdir(deep, 0755) == 0);
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/cgroup.procs", deep);
	CHECK(wr(path, pid) == 0);
	err[0] = '\0';
	CHECK_EQ_INT(runcg_init_named(parent, false, err, sizeof(err)), -1);
	CHECK_EQ_INT(errno, ENAMETOOLONG);
	CHECK(strstr(err, "is too long") != NULL);
	CHECK(strstr(err, "nearer the root than /sys/fs/cgroup/unified/") != NULL);
	CHECK(strstr(err, "sharness-deep/000000000000") != NULL);
	/* Back where we were, and the chain removed, deepest first. */
	snprintf(path, sizeof(path), "/sys/fs/cgroup/unified/%s/cgroup.procs", own_v2);
	CHECK(wr(path, pid) == 0);
	snprintf(made, sizeof(made), "%s/%s", deep, parent);
	CHECK(access(made, F_OK) != 0); /* the refusal removed the parents it had made */
	while (strlen(deep) > base) {
		CHECK(rmdir(deep) == 0);
		*strrchr(deep, '/') = '\0';
	}
	CHECK(rmdir(deep) == 0);
	CHECK_EQ_INT(runcg_init_named(parent, false, err, sizeof(err)), 0);
}

TEST(memory_limit)
{
	uint64_t want = (64ull << 20) + 123; /* not page aligned on purpose */
	struct run_cgroup *cg = runcg_create("run-mem", 8, want, err, sizeof(err));
	char d[PATH_MAX], path[PATH_MAX + 64], buf[64];

	CHECK(cg != NULL);
	if (!cg) {
		fprintf(stderr, "# %s\n", err);
		return;
	}
	cgdir("/sys/fs/cgroup/memory", "memory", "run-mem", d, sizeof(d));
	snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", d);
	CHECK(rd(path, buf, sizeof(buf)) > 0);
	CHECK_EQ_INT(strtoull(buf, NULL, 10), 64ull << 20);
	snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", d);
	if (exists(path)) {
		CHECK(rd(path, buf, sizeof(buf)) > 0);
		CHECK_EQ_INT(strtoull(buf, NULL, 10), 64ull << 20);
	}
	CHECK_EQ_INT(runcg_destroy(cg), 0);
	CHECK(gone_everywhere("run-mem"));
}

/* A process that allocates past the limit is killed by the kernel. */
static void hog(int out)
{
	(void)out;
	for (size_t i = 0; i < 256; i++) {
		char *p = malloc(1 << 20);
		if (!p)
			_exit(3);
		memset(p, 1, 1 << 20);
	}
	_exit(0);
}

TEST(memory_enforced)
{
	struct run_cgroup *cg = runcg_create("run-hog", 8, 32ull << 20, err, sizeof(err));
	int st = 0;
	pid_t pid;

	CHECK(cg != NULL);
	if (!cg)
		return;
	pid = spawn_attached(cg, hog, -1);
	CHECK(pid > 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_EQ_INT(runcg_wait_empty(cg, 1000), 0);
	CHECK_EQ_INT(runcg_destroy(cg), 0);
}

TEST(init_v1)
{
	CHECK_EQ_INT(runcg_init_named(parent, true, err, sizeof(err)), 0);
	CHECK_STR(runcg_version(), "v1");
	CHECK(runcg_has_memory());
}

TEST(pids_limit_v1) { check_pids_limit("v1"); }
TEST(kill_tree_v1) { check_kill_tree("v1"); }
TEST(destroy_busy_v1) { check_destroy_busy("v1"); }
TEST(stale_v1) { check_stale("v1"); }

/* Pure v2's delegation step on the real unified hierarchy.  This box binds
 * pids/memory to v1, so the step is exercised with the controller the
 * unified mount does have (hugetlb on this kernel): the no-internal-process
 * rule is enforced for any domain controller, which is what matters. */
TEST(v2_delegate)
{
	const char *root = "/sys/fs/cgroup/unified";
	char ctl[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 64], buf[512];
	char ctrl[32] = "";
	bool enabled_root = false;
	int p[2], res[2] = { -1, -1 };
	pid_t pid;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (rd(path, buf, sizeof(buf)) <= 1 || sscanf(buf, "%31s", ctrl) != 1) {
		printf("# SKIP v2_delegate: the unified mount offers no controller on this box\n");
		return;
	}
	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", root);
	snprintf(buf, sizeof(buf), "+%s", ctrl);
	if (rd(ctl, path, sizeof(path)) >= 0 && !strstr(path, ctrl)) {
		CHECK(wr(ctl, buf) == 0);
		enabled_root = true;
	}
	snprintf(dir, sizeof(dir), "%s/%s-v2", root, parent);
	CHECK(mkdir(dir, 0755) == 0);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	pid = fork();
	if (pid == 0) {
		char pp[PATH_MAX + 32], me[32];
		int r[2];
		snprintf(pp, sizeof(pp), "%s/cgroup.procs", dir);
		snprintf(me, sizeof(me), "%d", (int)getpid());
		if (wr(pp, me) < 0)
			_exit(2);
		/* Without the move, enabling fails: the rule is real. */
		snprintf(pp, sizeof(pp), "%s/cgroup.subtree_control", dir);
		r[0] = wr(pp, buf) == 0 ? 0 : errno;
		r[1] = runcg_v2_delegate(dir, ctrl, err, sizeof(err));
		if (r[1])
			fprintf(stderr, "# %s\n", err);
		if (write(p[1], r, sizeof(r)) != sizeof(r))
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK(read(p[0], res, sizeof(res)) == sizeof(res));
	close(p[0]);
	CHECK_EQ_INT(res[0], EBUSY);
	CHECK_EQ_INT(res[1], 0);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	CHECK(rd(path, buf, sizeof(buf)) > 0 && strstr(buf, "-v2/daemon\n"));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	CHECK(rd(path, buf, sizeof(buf)) > 0 && strstr(buf, ctrl));
	snprintf(path, sizeof(path), "%s/runs/cgroup.subtree_control", dir);
	CHECK(rd(path, buf, sizeof(buf)) > 0 && strstr(buf, ctrl));
	snprintf(path, sizeof(path), "%s/runs/cgroup.controllers", dir);
	CHECK(rd(path, buf, sizeof(buf)) > 0 && strstr(buf, ctrl));
	/* A run leaf under runs/ takes a process (the parent of leaves holds none). */
	snprintf(path, sizeof(path), "%s/runs/r1", dir);
	CHECK(mkdir(path, 0755) == 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/runs", dir);
	CHECK(rmdir(path) == 0);
	snprintf(path, sizeof(path), "%s/daemon", dir);
	CHECK(rmdir(path) == 0);
	CHECK(rmdir(dir) == 0);
	if (enabled_root) {
		snprintf(buf, sizeof(buf), "-%s", ctrl);
		CHECK(wr(ctl, buf) == 0);
	}
}

static void rm_parent(void)
{
	const char *m[4][2] = { { "/sys/fs/cgroup/pids", "pids" },
	                        { "/sys/fs/cgroup/memory", "memory" },
	                        { "/sys/fs/cgroup/freezer", "freezer" },
	                        { "/sys/fs/cgroup/unified", "" } };
	char d[PATH_MAX], o[PATH_MAX];

	for (int i = 0; i < 4; i++) {
		own(m[i][1], o, sizeof(o));
		int n = o[0] ? snprintf(d, sizeof(d), "%s/%s/%s", m[i][0], o, parent)
		             : snprintf(d, sizeof(d), "%s/%s", m[i][0], parent);
		if (n > 0 && n < (int)sizeof(d))
			rmdir(d);
	}
}

int main(void)
{
	if (geteuid() != 0) {
		printf("not ok - runcg needs root\n");
		return 1;
	}
	/* Orphans of the runs come back to us, so none lingers as a zombie. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(parent, sizeof(parent), "sharness-test-%d", (int)getpid());
	RUN(init_hybrid);
	RUN(bad_names);
	RUN(pids_limit_hybrid);
	RUN(kill_tree_hybrid);
	RUN(unified_tracking);
	RUN(memory_limit);
	RUN(memory_enforced);
	RUN(destroy_busy_hybrid);
	RUN(stale_hybrid);
	RUN(dir_too_long);
	RUN(init_v1);
	RUN(pids_limit_v1);
	RUN(kill_tree_v1);
	RUN(destroy_busy_v1);
	RUN(stale_v1);
	RUN(v2_delegate);
	rm_parent();
	return harness_done();
}
