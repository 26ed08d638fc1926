/*
 * test_landlock.c - the Landlock module on the real kernel: each test forks a
 * child that sets no_new_privs, calls landlock_apply() on a scratch tree
 * under /tmp and then tries what the grants allow and deny, asserting the
 * exact errno (EACCES from Landlock for files and TCP, EPERM for the scopes,
 * EXDEV for an ungranted cross-directory rename).  The children run as root
 * on purpose: DAC allows everything, so every denial seen is Landlock's.
 *
 * A child counts its failed expectations and exits with that count; the
 * parent checks the exit status.
 */
#include "errmsg.h"
#include "landlock.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "harness.h"

static char root[64];  /* scratch tree: ro/ rw/ rw2/ exe/ secret/ */
static int abi;

static int child_failed;

#define EXPECT_ERR(expr, want)                                                           \
	do {                                                                             \
		int got_ = (expr), want_ = (want);                                       \
		if (got_ != want_) {                                                     \
			fprintf(stderr, "# %s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #expr, \
			        got_ ? strerrorname_np(got_) : "OK", want_ ? strerrorname_np(want_) : "OK"); \
			child_failed++;                                                  \
		}                                                                        \
	} while (0)

static const char *P(const char *rel)
{
	/* a ring, so one initializer can hold several; callers that keep a
	 * result across many calls copy it */
	static char buf[16][256];
	static int i;

	i = (i + 1) % 16;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, rel);
	return buf[i];
}

/* 0 or errno */
static int try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_read(const char *path)
{
	char b[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (read(fd, b, sizeof(b)) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	close(fd);
	return 0;
}

static int try_readdir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		return errno;
	closedir(d);
	return 0;
}

static int rc_errno(int rc)
{
	return rc == 0 ? 0 : errno;
}

/* execve in a grandchild; 0 when it ran and exited 0, else the execve errno
 * (sent back over a close-on-exec pipe) or 255. */
static int try_exec(const char *path)
{
	int p[2], e = 0, st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)path, NULL};
		char *envp[] = {NULL};
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0)
			dup2(dn, 1);
		execve(path, argv, envp);
		e = errno;
		if (write(p[1], &e, sizeof(e)) < 0)
			_exit(254);
		_exit(255);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	if (e)
		return e;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 255;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (fd < 0 || write(fd, s, strlen(s)) < 0) {
		perror(path);
		exit(2);
	}
	close(fd);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (in < 0 || out < 0) {
		perror(from);
		exit(2);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			exit(2);
	close(in);
	close(out);
}

static void setup_tree(void)
{
	static const char *const dirs[] = {"ro", "rw", "rw2", "exe", "secret"};

	snprintf(root, sizeof(root), "/tmp/sharness-landlock-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(P(dirs[i]), 0755) < 0) {
			perror("mkdir");
			exit(2);
		}
	write_file(P("ro/f"), "read only\n");
	write_file(P("rw/f"), "read write\n");
	write_file(P("secret/f"), "secret\n");
	write_file(P("secret/g"), "secret too\n");
	copy_file("/bin/true", P("rw/true"));
	copy_file("/bin/true", P("exe/true"));
}

static void teardown_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (strncmp(root, "/tmp/sharness-landlock-", 23) == 0 && system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", root);
}

/* The grants a run would get, over the scratch tree. */
static int apply_standard(uint16_t port)
{
	const struct landlock_path paths[] = {
		{"/usr", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_EXEC},
		{"/etc", LANDLOCK_GRANT_READ},
		{"/proc", LANDLOCK_GRANT_READ},
		{"/dev/null", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE},
		{P("ro"), LANDLOCK_GRANT_READ},
		{P("rw"), LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE},
		{P("rw2"), LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE},
		{P("exe"), LANDLOCK_GRANT_READ | LANDLOCK_GRANT_EXEC},
	};
	return landlock_apply(paths, sizeof(paths) / sizeof(paths[0]), port);
}

/* Fork; the child sets NNP, runs fn and exits with its failure count. */
static int in_child(void (*fn)(void *), void *arg)
{
	int st = -1;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_failed = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(200);
		fn(arg);
		_exit(child_failed > 100 ? 100 : child_failed);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

#define CHECK_CHILD(fn, arg)                                                             \
	do {                                                                             \
		int st_ = in_child((fn), (arg));                                         \
		CHECK(WIFEXITED(st_));                                                   \
		CHECK_EQ_INT(WIFEXITED(st_) ? WEXITSTATUS(st_) : -1, 0);                 \
	} while (0)

TEST(abi)
{
	abi = landlock_abi();
	printf("# Landlock ABI %d\n", abi);
	CHECK(abi >= 1);
}

static void c_read(void *arg)
{
	(void)arg;
	EXPECT_ERR(apply_standard(0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_read(P("ro/f")), 0);
	EXPECT_ERR(try_read(P("rw/f")), 0);
	EXPECT_ERR(try_read("/etc/hostname"), 0);
	EXPECT_ERR(try_readdir(P("ro")), 0);
	EXPECT_ERR(try_read(P("secret/f")), EACCES);
	EXPECT_ERR(try_readdir(P("secret")), EACCES);
	EXPECT_ERR(try_readdir(root), EACCES);
	EXPECT_ERR(try_read("/root/.bashrc"), EACCES);
	EXPECT_ERR(try_readdir("/home"), EACCES);
	EXPECT_ERR(try_readdir("/var"), EACCES);
}

TEST(read_granted_only)
{
	CHECK_CHILD(c_read, NULL);
}

static void c_write(void *arg)
{
	(void)arg;
	EXPECT_ERR(apply_standard(0) == 0 ? 0 : errno, 0);
	/* read-only tree: every kind of change is denied */
	EXPECT_ERR(try_open(P("ro/f"), O_WRONLY), EACCES);
	EXPECT_ERR(try_open(P("ro/f"), O_RDONLY | O_TRUNC), EACCES);
	EXPECT_ERR(rc_errno(truncate(P("ro/f"), 0)), EACCES);
	EXPECT_ERR(try_open(P("ro/new"), O_WRONLY | O_CREAT), EACCES);
	EXPECT_ERR(rc_errno(unlink(P("ro/f"))), EACCES);
	EXPECT_ERR(rc_errno(mkdir(P("ro/d"), 0755)), EACCES);
	EXPECT_ERR(rc_errno(symlink("/etc", P("ro/l"))), EACCES);
	EXPECT_ERR(rc_errno(mkfifo(P("ro/p"), 0644)), EACCES);
	EXPECT_ERR(try_open("/etc/sharness-landlock-test", O_WRONLY | O_CREAT), EACCES);
	EXPECT_ERR(try_open("/usr/sharness-landlock-test", O_WRONLY | O_CREAT), EACCES);
	EXPECT_ERR(try_open(P("secret/f"), O_WRONLY), EACCES);
	/* writable tree: create, write, truncate, mkdir, fifo, symlink, remove */
	EXPECT_ERR(try_open(P("rw/f"), O_WRONLY | O_TRUNC), 0);
	EXPECT_ERR(try_open(P("rw/new"), O_WRONLY | O_CREAT), 0);
	EXPECT_ERR(rc_errno(mkdir(P("rw/d"), 0755)), 0);
	EXPECT_ERR(rc_errno(mkfifo(P("rw/p"), 0644)), 0);
	EXPECT_ERR(rc_errno(symlink("f", P("rw/l"))), 0);
	EXPECT_ERR(rc_errno(rename(P("rw/new"), P("rw/d/new"))), 0);
	EXPECT_ERR(rc_errno(unlink(P("rw/d/new"))), 0);
	EXPECT_ERR(rc_errno(rmdir(P("rw/d"))), 0);
	EXPECT_ERR(rc_errno(unlink(P("rw/p"))), 0);
	EXPECT_ERR(rc_errno(unlink(P("rw/l"))), 0);
	/* WRITE includes REFER: a rename across two writable trees works;
	 * out of the read-only tree it does not (no remove right there). */
	EXPECT_ERR(try_open(P("rw/mv"), O_WRONLY | O_CREAT), 0);
	EXPECT_ERR(rc_errno(rename(P("rw/mv"), P("rw2/mv"))), 0);
	EXPECT_ERR(rc_errno(rename(P("rw2/mv"), P("rw/mv"))), 0);
	EXPECT_ERR(rc_errno(unlink(P("rw/mv"))), 0);
	EXPECT_ERR(rc_errno(rename(P("ro/f"), P("rw/stolen"))), EACCES);
	/* a hard link from outside every grant into a writable dir: the
	 * source has no REFER, and Landlock answers EXDEV (so tools copy) */
	EXPECT_ERR(rc_errno(link(P("secret/f"), P("rw/hl"))), EXDEV);
}

TEST(write_granted_only)
{
	CHECK_CHILD(c_write, NULL);
}

/* A WRITE grant without REFER would make cross-directory renames fail with
 * EXDEV; shows REFER is handled (ABI >= 2) even for write-less grants. */
static void c_refer(void *arg)
{
	const struct landlock_path paths[] = {
		{P("rw"), LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE},
		{P("rw2"), LANDLOCK_GRANT_READ},
	};

	(void)arg;
	EXPECT_ERR(try_open(P("rw/mv2"), O_WRONLY | O_CREAT), 0);
	EXPECT_ERR(landlock_apply(paths, 2, 0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(rc_errno(rename(P("rw/mv2"), P("rw2/mv2"))), EACCES);
	EXPECT_ERR(rc_errno(link(P("rw/f"), P("rw2/hl"))), EACCES);
	EXPECT_ERR(rc_errno(unlink(P("rw/mv2"))), 0);
}

TEST(refer_needs_write_on_both_sides)
{
	CHECK_CHILD(c_refer, NULL);
}

static void c_exec(void *arg)
{
	(void)arg;
	EXPECT_ERR(apply_standard(0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_exec("/bin/true"), 0);
	EXPECT_ERR(try_exec(P("exe/true")), 0);
	/* writable, readable, but no EXEC grant */
	EXPECT_ERR(try_exec(P("rw/true")), EACCES);
	EXPECT_ERR(try_exec(P("secret/f")), EACCES);
}

TEST(exec_granted_only)
{
	CHECK_CHILD(c_exec, NULL);
}

/* IOCTL_DEV (ABI 5): a device opened without the DEV grant refuses ioctls
 * (TCGETS on /dev/null: EACCES instead of the natural ENOTTY). */
static void c_ioctl(void *arg)
{
	const unsigned dev = *(const unsigned *)arg;
	const struct landlock_path paths[] = {
		{"/dev/null", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE | dev},
	};
	struct termios t;
	int fd;

	EXPECT_ERR(landlock_apply(paths, 1, 0) == 0 ? 0 : errno, 0);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	EXPECT_ERR(fd >= 0 ? 0 : errno, 0);
	EXPECT_ERR(ioctl(fd, TCGETS, &t) == 0 ? 0 : errno, dev ? ENOTTY : EACCES);
	close(fd);
}

TEST(ioctl_dev)
{
	unsigned with = LANDLOCK_GRANT_DEV, without = 0;

	if (abi < 5) {
		printf("# ABI %d < 5: no IOCTL_DEV right on this kernel\n", abi);
		return;
	}
	CHECK_CHILD(c_ioctl, &without);
	CHECK_CHILD(c_ioctl, &with);
}

static int tcp_listener(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static int try_connect(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int e = 0, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		e = errno;
	close(fd);
	return e;
}

static int try_bind(int type, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int e = 0, fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		e = errno;
	close(fd);
	return e;
}

struct ports {
	uint16_t allowed, other;
};

static void c_net(void *arg)
{
	const struct ports *p = arg;

	EXPECT_ERR(apply_standard(p->allowed) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_connect(p->allowed), 0);
	EXPECT_ERR(try_connect(p->other), EACCES);
	EXPECT_ERR(try_bind(SOCK_STREAM, 0), EACCES);
	EXPECT_ERR(try_bind(SOCK_STREAM, p->allowed), EACCES);
	/* Landlock governs TCP only; UDP is the network namespace's job. */
	EXPECT_ERR(try_bind(SOCK_DGRAM, 0), 0);
}

static void c_net_none(void *arg)
{
	const struct ports *p = arg;

	EXPECT_ERR(apply_standard(0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_connect(p->allowed), EACCES);
	EXPECT_ERR(try_connect(p->other), EACCES);
}

TEST(tcp_bind_and_connect)
{
	struct ports p;
	int a, b;

	if (abi < 4) {
		printf("# ABI %d < 4: no TCP rights on this kernel\n", abi);
		return;
	}
	a = tcp_listener(&p.allowed);
	b = tcp_listener(&p.other);
	CHECK(a >= 0 && b >= 0);
	/* control: both reachable without Landlock */
	CHECK_EQ_INT(try_connect(p.allowed), 0);
	CHECK_EQ_INT(try_connect(p.other), 0);
	CHECK_CHILD(c_net, &p);
	CHECK_CHILD(c_net_none, &p);
	close(a);
	close(b);
}

static void c_scope(void *arg)
{
	const char *name = arg;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	pid_t inner;
	int fd, st;

	memcpy(a.sun_path + 1, name, strlen(name));
	EXPECT_ERR(apply_standard(0) == 0 ? 0 : errno, 0);
	/* signals: the parent is outside the domain, our own child inside */
	EXPECT_ERR(kill(getppid(), 0) == 0 ? 0 : errno, EPERM);
	inner = fork();
	if (inner == 0) {
		pause();
		_exit(0);
	}
	EXPECT_ERR(kill(inner, SIGKILL) == 0 ? 0 : errno, 0);
	waitpid(inner, &st, 0);
	/* abstract unix socket created outside the domain */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT_ERR(connect(fd, (struct sockaddr *)&a, len) == 0 ? 0 : errno, EPERM);
	close(fd);
}

static void c_scope_control(void *arg)
{
	const char *name = arg;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(a.sun_path + 1, name, strlen(name));
	EXPECT_ERR(kill(getppid(), 0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(connect(fd, (struct sockaddr *)&a, len) == 0 ? 0 : errno, 0);
	close(fd);
}

TEST(scoped_signals_and_abstract_unix)
{
	char name[64];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd;

	if (abi < 6) {
		printf("# ABI %d < 6: no scopes on this kernel\n", abi);
		return;
	}
	snprintf(name, sizeof(name), "sharness-landlock-test-%d", (int)getpid());
	memcpy(a.sun_path + 1, name, strlen(name));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK_EQ_INT(bind(fd, (struct sockaddr *)&a, len), 0);
	CHECK_EQ_INT(listen(fd, 8), 0);
	CHECK_CHILD(c_scope_control, name);
	CHECK_CHILD(c_scope, name);
	close(fd);
}

/* Fail closed on a path that does not exist: -1 ENOENT and nothing applied. */
static void c_missing(void *arg)
{
	const struct landlock_path paths[] = {
		{P("ro"), LANDLOCK_GRANT_READ},
		{"/nonexistent/sharness", LANDLOCK_GRANT_READ},
	};

	(void)arg;
	errno = 0;
	EXPECT_ERR(landlock_apply(paths, 2, 0) == -1 ? errno : 0, ENOENT);
	/* The sandbox's log line names the call and the path (sandbox.c). */
	EXPECT_ERR(strcmp(errmsg_op(), "open /nonexistent/sharness") == 0 ? 0 : EINVAL, 0);
	EXPECT_ERR(try_read(P("secret/f")), 0);
}

static void c_bad_args(void *arg)
{
	const struct landlock_path nullpath[] = {{NULL, LANDLOCK_GRANT_READ}};

	(void)arg;
	EXPECT_ERR(landlock_apply(NULL, 1, 0) == -1 ? errno : 0, EINVAL);
	EXPECT_ERR(landlock_apply(nullpath, 1, 0) == -1 ? errno : 0, EINVAL);
	EXPECT_ERR(try_read(P("secret/f")), 0);
}

TEST(missing_path_and_bad_args)
{
	CHECK_CHILD(c_missing, NULL);
	CHECK_CHILD(c_bad_args, NULL);
}

/* A grant on a single file keeps only the file rights (READ's READ_DIR would
 * make the kernel refuse the rule); the sibling stays denied.  A zero grant
 * is no rule.  With nothing granted at all, everything is denied. */
static void c_file_rule(void *arg)
{
	const struct landlock_path paths[] = {
		{P("secret/f"), LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE},
		{P("secret/g"), 0},
	};

	(void)arg;
	EXPECT_ERR(landlock_apply(paths, 2, 0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_read(P("secret/f")), 0);
	EXPECT_ERR(try_open(P("secret/f"), O_WRONLY | O_TRUNC), 0);
	EXPECT_ERR(try_read(P("secret/g")), EACCES);
	EXPECT_ERR(try_readdir(P("secret")), EACCES);
}

static void c_empty(void *arg)
{
	(void)arg;
	EXPECT_ERR(landlock_apply(NULL, 0, 0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_read("/etc/hostname"), EACCES);
	EXPECT_ERR(try_readdir("/"), EACCES);
}

TEST(file_rules_and_empty_ruleset)
{
	CHECK_CHILD(c_file_rule, NULL);
	CHECK_CHILD(c_empty, NULL);
}

/* Without no_new_privs and without CAP_SYS_ADMIN the kernel refuses; we do
 * not set NNP behind the caller's back. */
TEST(needs_nnp)
{
	pid_t pid;
	int st = -1;

	if (geteuid() != 0) {
		printf("# not root: cannot drop to nobody for this check\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		_exit(landlock_apply(NULL, 0, 0) == -1 && errno == EPERM ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Layers stack: a second, narrower apply narrows further. */
static void c_stack(void *arg)
{
	char ro[256];
	struct landlock_path only_ro[] = {{ro, LANDLOCK_GRANT_READ}};

	(void)arg;
	snprintf(ro, sizeof(ro), "%s", P("ro"));
	EXPECT_ERR(apply_standard(0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_read(P("rw/f")), 0);
	EXPECT_ERR(landlock_apply(only_ro, 1, 0) == 0 ? 0 : errno, 0);
	EXPECT_ERR(try_read(P("ro/f")), 0);
	EXPECT_ERR(try_read(P("rw/f")), EACCES);
}

TEST(layers_stack)
{
	CHECK_CHILD(c_stack, NULL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup_tree();
	RUN(abi);
	RUN(read_granted_only);
	RUN(write_granted_only);
	RUN(refer_needs_write_on_both_sides);
	RUN(exec_granted_only);
	RUN(ioctl_dev);
	RUN(tcp_bind_and_connect);
	RUN(scoped_signals_and_abstract_unix);
	RUN(missing_path_and_bad_args);
	RUN(file_rules_and_empty_ruleset);
	RUN(needs_nnp);
	RUN(layers_stack);
	teardown_tree();
	return harness_done();
}
