/*
 * test_seccomp.c - the seccomp module on the real kernel: children load the
 * compiled filters and make the denied calls (the table of
 * tests/probes/probe_syscalls.c), and each result is compared with the errno
 * the filter promises and with what the same call does without the filter.
 *
 * Runs as root or not; every probe call is harmless unfiltered (see the probe).
 */
#include "notify.h"
#include "sandbox_filter.h"
#include "seccomp.h"

#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/seccomp.h>
#include <time.h>

#include "harness.h"

#define PROBE_SYSCALLS_NO_MAIN
#include "../probes/probe_syscalls.c"

extern char **environ;

static struct sock_fprog sandbox_prog;

/* The filter loaded with no user-notification listener, so the calls it
 * sends to one (umask, connect) fail ENOSYS: the daemon loads it with
 * seccomp_apply_listener. */
static int seccomp_apply(const struct sock_fprog *prog)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static void write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t r = write(fd, (const char *)buf + put, len - put);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(99);
		put += (size_t)r;
	}
}

/*
 * Fork; the child (in its own session, so vhangup has no terminal) sets
 * no_new_privs, loads `prog` unless NULL, runs fn(fd) and exits 0.  The
 * parent reads `len` bytes fn wrote into `out` and returns the wait status.
 */
static int in_child(const struct sock_fprog *prog, void (*fn)(int fd), void *out, size_t len)
{
	int p[2], status = -1;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		long long t0;
		close(p[0]);
		setsid();
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(97);
		t0 = now_ns();
		if (prog && seccomp_apply(prog) < 0)
			_exit(98);
		t0 = now_ns() - t0;
		write_full(p[1], &t0, sizeof(t0));
		fn(p[1]);
		_exit(0);
	}
	close(p[1]);
	{
		long long apply_ns = 0;
		/* the apply time; apply_cost prints the mean */
		if (read_full(p[0], &apply_ns, sizeof(apply_ns)) < 0)
			apply_ns = -1;
		if (len && read_full(p[0], out, len) < 0)
			memset(out, 0xff, len);
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static void run_probe_table(int fd)
{
	int res[PROBE_NCALLS];

	for (size_t i = 0; i < PROBE_NCALLS; i++)
		res[i] = probe_call_run(&probe_calls[i]);
	write_full(fd, res, sizeof(res));
}

TEST(build_once)
{
	char err[256] = "";
	long long t0 = now_ns();
	int rc = seccomp_build_sandbox(&sandbox_prog, err, sizeof(err));
	long long t1 = now_ns();

	CHECK_EQ_INT(rc, 0);
	if (rc != 0)
		fprintf(stderr, "# %s\n", err);
	CHECK(sandbox_prog.filter != NULL);
	CHECK(sandbox_prog.len > 10 && sandbox_prog.len <= BPF_MAXINSNS);
	printf("# sandbox filter: %u BPF instructions, built once in %lld us\n", sandbox_prog.len,
	       (t1 - t0) / 1000);

	/* The first instruction loads the arch: native-only filters start with
	 * the arch check (libseccomp's layout, relied on for BADARCH). */
	CHECK(sandbox_prog.filter && sandbox_prog.filter[0].code == (BPF_LD | BPF_W | BPF_ABS));
	CHECK(sandbox_prog.filter && sandbox_prog.filter[0].k == 4 /* offsetof(seccomp_data, arch) */);
}

TEST(free_and_bad_args)
{
	struct sock_fprog p = {0};
	char err[256];

	seccomp_prog_free(NULL);
	seccomp_prog_free(&p);
	seccomp_prog_free(&p);
	errno = 0;
	CHECK_EQ_INT(seccomp_apply_listener(NULL), -1);
	CHECK_EQ_INT(errno, EINVAL);
	errno = 0;
	CHECK_EQ_INT(seccomp_apply_listener(&p), -1);
	CHECK_EQ_INT(errno, EINVAL);
	/* Build + free twice over leaves no dangling pointer. */
	CHECK_EQ_INT(seccomp_build_sandbox(&p, err, sizeof(err)), 0);
	seccomp_prog_free(&p);
	CHECK(p.filter == NULL && p.len == 0);
	seccomp_prog_free(&p);
}

TEST(denied_names_match_probe)
{
	const char *const *names = seccomp_denied_names();
	size_t n = 0;

	CHECK(names != NULL);
	for (; names && names[n]; n++) {
		int found = 0;
		/* "clone(...)" etc. are argument rules, probed under other names */
		if (strchr(names[n], '('))
			continue;
		for (size_t i = 0; i < PROBE_NCALLS; i++)
			if (strcmp(probe_calls[i].name, names[n]) == 0 && probe_calls[i].denied)
				found = 1;
		if (!found)
			fprintf(stderr, "# '%s' is denied but probe_syscalls does not try it\n", names[n]);
		CHECK(found);
	}
	CHECK(n > 60);
	printf("# %zu entries in the deny list\n", n);
}

TEST(sandbox_filter_denies_with_exact_errno)
{
	int filtered[PROBE_NCALLS], natural[PROBE_NCALLS];
	char b1[32], b2[32];
	int st;

	st = in_child(&sandbox_prog, run_probe_table, filtered, sizeof(filtered));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = in_child(NULL, run_probe_table, natural, sizeof(natural));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (size_t i = 0; i < PROBE_NCALLS; i++) {
		const struct probe_call *c = &probe_calls[i];
		if (c->denied && filtered[i] != c->denied) {
			fprintf(stderr, "# %s: filtered %s, expected %s\n", c->name,
			        probe_errname(filtered[i], b1, sizeof(b1)), probe_errname(c->denied, b2, sizeof(b2)));
			CHECK(filtered[i] == c->denied);
		}
		/* Allowed calls behave exactly as without the filter. */
		if (!c->denied && filtered[i] != natural[i]) {
			fprintf(stderr, "# %s: filtered %s, unfiltered %s\n", c->name,
			        probe_errname(filtered[i], b1, sizeof(b1)), probe_errname(natural[i], b2, sizeof(b2)));
			CHECK(filtered[i] == natural[i]);
		}
	}
}

/* SPEC §6: a denied call's errno differs from what it returns naturally, so a
 * probe can tell the filter from a plain failure.  Socket families this
 * kernel lacks return EAFNOSUPPORT either way (nothing to tell apart). */
TEST(denied_errno_differs_from_natural)
{
	int natural[PROBE_NCALLS];
	char b[32];
	int st, same = 0;

	st = in_child(NULL, run_probe_table, natural, sizeof(natural));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (size_t i = 0; i < PROBE_NCALLS; i++) {
		const struct probe_call *c = &probe_calls[i];
		if (!c->denied || natural[i] != c->denied)
			continue;
		if (c->denied == EAFNOSUPPORT) {
			printf("# %s: family not built into this kernel (EAFNOSUPPORT either way)\n", c->name);
			continue;
		}
		/* Without root, EPERM is the natural answer of privileged calls. */
		if (geteuid() != 0 && c->denied == EPERM)
			continue;
		fprintf(stderr, "# %s: unfiltered already returns %s\n", c->name, probe_errname(natural[i], b, sizeof(b)));
		same++;
	}
	CHECK_EQ_INT(same, 0);
}

static void do_x32(int fd)
{
	(void)fd;
	syscall(0x40000000L | __NR_getpid);
	_exit(3); /* still alive: the filter did not kill us */
}

static void do_i386(int fd)
{
	long r;

	(void)fd;
#if defined(__x86_64__)
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory", "rcx", "r8", "r9", "r10", "r11");
#else
	r = 0; /* no i386 entry on this arch */
#endif
	_exit(r > 0 ? 3 : 4);
}

static void do_probe_abi(int fd)
{
	char out[64], b1[32], b2[32];

	memset(out, 0, sizeof(out));
	snprintf(out, sizeof(out), "x32 %s i386 %s", probe_status_name(probe_abi_status("x32"), b1, sizeof(b1)),
	         probe_status_name(probe_abi_status("i386"), b2, sizeof(b2)));
	write_full(fd, out, sizeof(out));
}

TEST(foreign_abi_killed)
{
	int st, ia32;

	st = in_child(&sandbox_prog, do_x32, NULL, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	/* Control: without the filter the x32 call just fails (no x32 ABI). */
	st = in_child(NULL, do_x32, NULL, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);

	/* Control: with IA32 emulation getpid via int 0x80 works unfiltered.
	 * A kernel without it (no i386 entry: a fault before any filter) has
	 * no i386 call to kill, and the filtered call must die the same way
	 * as the unfiltered one (SIGSEGV; SIGABRT where ASan's handler takes
	 * the fault). */
	int ctl = in_child(NULL, do_i386, NULL, 0);
	ia32 = WIFEXITED(ctl) && WEXITSTATUS(ctl) == 3;
	if (!ia32) {
		printf("# i386 control did not run getpid (status %#x): no IA32 emulation\n", ctl);
		CHECK(WIFSIGNALED(ctl));
	}
	st = in_child(&sandbox_prog, do_i386, NULL, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == (ia32 ? SIGSYS : WTERMSIG(ctl)));

	/* The probe's own report of the same, as an e2e test will see it;
	 * without the i386 entry, its unfiltered report says how the call dies. */
	{
		char out[64] = "", plain[64] = "", want[64] = "x32 SIGSYS i386 SIGSYS";
		const char *i386 = NULL;
		if (!ia32) {
			st = in_child(NULL, do_probe_abi, plain, sizeof(plain));
			i386 = strstr(plain, " i386 ");
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && i386 && strncmp(i386, " i386 SIG", 9) == 0);
			if (i386)
				snprintf(want, sizeof(want), "x32 SIGSYS%s", i386);
		}
		st = in_child(&sandbox_prog, do_probe_abi, out, sizeof(out));
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHECK_STR(out, want);
	}
}

static void nothing(int fd)
{
	(void)fd;
}

static void do_exec_bash(int fd)
{
	/* No redirection: opens for writing go to the run's actor, and there is
	 * no listener here (they would be ENOSYS; tested below). */
	char *argv[] = {"/bin/bash", "-c", "l=$(ls /) && x=$(echo hi) && [ \"$x\" = hi ] && exit 7", NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};

	(void)fd;
	execve(argv[0], argv, envp);
	_exit(100 + errno);
}

/* The real flow: filter, then execve a dynamic program that forks. */
TEST(exec_after_filter)
{
	int st = in_child(&sandbox_prog, do_exec_bash, NULL, 0);

	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	st = in_child(&sandbox_prog, nothing, NULL, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Without no_new_privs and without CAP_SYS_ADMIN the kernel refuses the
 * filter: we do not set NNP behind the caller's back. */
static void do_apply_without_nnp(int fd)
{
	int r[2];

	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
		r[0] = -2;
		r[1] = errno;
	} else {
		r[0] = seccomp_apply(&sandbox_prog);
		r[1] = errno;
	}
	write_full(fd, r, sizeof(r));
}

TEST(apply_needs_nnp)
{
	int r[2] = {0, 0};
	int p[2];
	pid_t pid;
	int st = -1;

	if (geteuid() != 0) {
		printf("# not root: cannot drop to nobody for this check\n");
		return;
	}
	/* in_child sets NNP, so do this one by hand. */
	CHECK_EQ_INT(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		do_apply_without_nnp(p[1]);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ_INT(read_full(p[0], r, sizeof(r)), 0);
	close(p[0]);
	waitpid(pid, &st, 0);
	CHECK_EQ_INT(r[0], -1);
	CHECK_EQ_INT(r[1], EACCES);
}

static void *noop_thread(void *arg)
{
	return arg;
}

/* The sandbox filter keeps fork and threads (a build runs make -j). */
static void do_fork_threads(int fd)
{
	int res[2];
	pthread_t th;
	pid_t pid = fork();

	if (pid == 0)
		_exit(5);
	res[0] = -1;
	if (pid > 0) {
		int st;
		waitpid(pid, &st, 0);
		res[0] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	}
	res[1] = pthread_create(&th, NULL, noop_thread, NULL);
	if (res[1] == 0)
		pthread_join(th, NULL);
	write_full(fd, res, sizeof(res));
}

TEST(sandbox_keeps_fork_and_threads)
{
	int res[2] = {-9, -9};
	int st = in_child(&sandbox_prog, do_fork_threads, res, sizeof(res));

	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ_INT(res[0], 5);
	CHECK_EQ_INT(res[1], 0);
}

/* Modes and xattrs (issue 12): the chmod family goes to the run's actor,
 * which refuses setuid, setgid and world-writable modes (tests/e2e/
 * sandbox.sh): without a listener, as here, every such call is ENOSYS,
 * which fails closed.  A umask that lets "others may write" through goes
 * to the supervisor (ENOSYS here too); setting any xattr and fallocate are
 * EOPNOTSUPP in the filter itself. */
#define MODE_RES 14
static void do_modes(int fd)
{
	int res[MODE_RES];
	char path[] = "/tmp/sharness-test-seccomp-XXXXXX";
	int f = mkstemp(path);
#define R(i, call) (res[i] = (call) < 0 ? errno : 0)
	R(0, chmod(path, 0666));
	R(1, chmod(path, 0644));
	R(2, fchmod(f, 0777));
	R(3, fchmodat(AT_FDCWD, path, 01777, 0));
	R(4, fchmodat(AT_FDCWD, path, 0664, 0));
	R(5, (int)syscall(452, AT_FDCWD, path, 0646, 0)); /* fchmodat2 */
	/* glibc's umask() cannot fail and sets no errno: the raw syscall */
	R(6, (int)syscall(SYS_umask, 0));
	R(7, (int)syscall(SYS_umask, 0077));
	R(8, setxattr(path, "user.x", "1", 1, 0));
	R(9, fsetxattr(f, "security.capability", "1", 1, 0));
	R(10, removexattr(path, "user.x"));
	R(11, fallocate(f, 0, 0, 4096));
	R(12, (int)syscall(463, AT_FDCWD, path, 0, "user.x", NULL, 0)); /* setxattrat */
	R(13, (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &sandbox_prog));
#undef R
	unlink(path);
	write_full(fd, res, sizeof(res));
}

TEST(sandbox_modes_and_xattrs)
{
	int res[MODE_RES];
	memset(res, 0xff, sizeof(res));
	int st = in_child(&sandbox_prog, do_modes, res, sizeof(res));

	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (int i = 0; i <= 5; i++)
		CHECK_EQ_INT(res[i], ENOSYS); /* chmod family: to the actor */
	CHECK_EQ_INT(res[6], ENOSYS); /* no listener: see umask_answered */
	CHECK_EQ_INT(res[7], 0);
	CHECK_EQ_INT(res[8], EOPNOTSUPP);
	CHECK_EQ_INT(res[9], EOPNOTSUPP);
	CHECK_EQ_INT(res[10], EOPNOTSUPP);
	CHECK_EQ_INT(res[11], EOPNOTSUPP);
	CHECK_EQ_INT(res[12], EOPNOTSUPP);
	CHECK_EQ_INT(res[13], EPERM); /* no listener of the run's own */
}

/* With a listener, umask() without S_IWOTH is answered by
 * notify_answer: it "succeeds", returns the umask, which stays. */
static void *umask_thread(void *arg)
{
	unsigned *out = arg;
	out[0] = (unsigned)umask(0);
	out[1] = (unsigned)umask(0);
	out[2] = (unsigned)umask(0027); /* has S_IWOTH: native */
	out[3] = (unsigned)umask(0022);
	return NULL;
}

static void do_umask_answered(int fd)
{
	unsigned res[5] = {0};
	pthread_t th;
	umask(0022);
	int l = seccomp_apply_listener(&sandbox_prog);
	res[4] = l >= 0;
	if (l >= 0 && pthread_create(&th, NULL, umask_thread, res) == 0) {
		struct notify_run run = {.uid = getuid()};
		for (int i = 0; i < 2; i++)
			notify_answer(l, &run);
		pthread_join(th, NULL);
	}
	write_full(fd, res, sizeof(res));
}

TEST(umask_answered)
{
	unsigned res[5];
	memset(res, 0xff, sizeof(res));
	int st = in_child(NULL, do_umask_answered, res, sizeof(res));

	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ_INT(res[4], 1);
	CHECK_EQ_INT(res[0], 0022);
	CHECK_EQ_INT(res[1], 0022); /* umask(0) changed nothing */
	CHECK_EQ_INT(res[2], 0022);
	CHECK_EQ_INT(res[3], 0027);
}

/* Per-run cost: apply the same compiled program many times (each in a fresh
 * child, since filters stack); printed, not asserted. */
TEST(apply_cost)
{
	long long total = 0;
	int runs = 20;

	for (int i = 0; i < runs; i++) {
		int p[2];
		long long ns = -1;
		pid_t pid;

		if (pipe2(p, O_CLOEXEC) < 0)
			break;
		pid = fork();
		if (pid == 0) {
			long long t0;
			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			t0 = now_ns();
			if (seccomp_apply(&sandbox_prog) < 0)
				_exit(1);
			t0 = now_ns() - t0;
			write_full(p[1], &t0, sizeof(t0));
			_exit(0);
		}
		close(p[1]);
		CHECK_EQ_INT(read_full(p[0], &ns, sizeof(ns)), 0);
		close(p[0]);
		waitpid(pid, NULL, 0);
		total += ns;
	}
	printf("# seccomp_apply mean over %d runs: %lld ns\n", runs, total / runs);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	RUN(build_once);
	RUN(free_and_bad_args);
	RUN(denied_names_match_probe);
	RUN(sandbox_filter_denies_with_exact_errno);
	RUN(denied_errno_differs_from_natural);
	RUN(foreign_abi_killed);
	RUN(exec_after_filter);
	RUN(sandbox_modes_and_xattrs);
	RUN(umask_answered);
	RUN(apply_needs_nnp);
	RUN(sandbox_keeps_fork_and_threads);
	RUN(apply_cost);
	seccomp_prog_free(&sandbox_prog);
	return harness_done();
}
