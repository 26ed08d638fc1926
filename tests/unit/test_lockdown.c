/*
 * test_lockdown.c - the front's own locks (front/lockdown.c), for real, in
 * forked children (they cannot be removed): Landlock keeps /etc readable
 * and nothing else (even for root), writes nowhere; the allowlist keeps
 * threads and sockets, refuses netlink with EAFNOSUPPORT, and traps a new
 * process or exec (the process ends with 70 and a line naming the call).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lockdown.h"

static char secret_path[] = "/var/tmp/sharness-lockdown-XXXXXX";

static void *noop(void *arg)
{
	return arg;
}

/* In a child: lock down, then run `step`; its exit status. */
static int locked(int (*step)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || lockdown_front(err, sizeof(err)) < 0) {
			fprintf(stderr, "# %s\n", err);
			_exit(99);
		}
		_exit(step());
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int reads_etc(void)
{
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? 0 : 1;
}

static int reads_elsewhere(void)
{
	/* root's own file outside the granted paths: Landlock says no to root too */
	int fd = open(secret_path, O_RDONLY | O_CLOEXEC);
	return fd < 0 && errno == EACCES ? 0 : 1;
}

static int writes_nowhere(void)
{
	int a = open("/etc/passwd", O_WRONLY | O_APPEND | O_CLOEXEC);
	int b = open("/var/tmp/sharness-lockdown-new", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	return a < 0 && b < 0 && errno == EACCES ? 0 : 1;
}

static int threads_and_sockets(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, noop, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 1;
	int s6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int su = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
	return s6 >= 0 && su >= 0 && nl < 0 && errno == EAFNOSUPPORT ? 0 : 2;
}

static int forks(void)
{
	pid_t p = fork(); /* clone without CLONE_THREAD: trapped */
	if (p == 0)
		_exit(0);
	return 3;
}

static int execs(void)
{
	char *argv[] = {"/bin/true", NULL};
	execv("/bin/true", argv);
	return 4;
}

TEST(landlock_front)
{
	int fd = mkstemp(secret_path);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ_INT(locked(reads_etc), 0);
	CHECK_EQ_INT(locked(reads_elsewhere), 0);
	CHECK_EQ_INT(locked(writes_nowhere), 0);
	unlink(secret_path);
	unlink("/var/tmp/sharness-lockdown-new");
}

TEST(seccomp_front)
{
	CHECK_EQ_INT(locked(threads_and_sockets), 0);
	CHECK_EQ_INT(locked(forks), 70);
	CHECK_EQ_INT(locked(execs), 70);
}

int main(void)
{
	RUN(landlock_front);
	RUN(seccomp_front);
	return harness_done();
}
