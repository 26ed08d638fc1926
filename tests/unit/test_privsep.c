/*
 * test_privsep.c - the boundary: fixed messages with fds over SOCK_SEQPACKET,
 * and the launcher's re-check of every field a (possibly compromised) front
 * sends.  The launcher runs for real in a child process; only messages that
 * must be refused are sent, so no sandbox is ever started.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "launcher.h"
#include "privsep.h"
#include "profile.h"
#include "uidpool.h"

TEST(message_with_fds)
{
	int sp[2], p[2];
	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	CHECK_EQ_INT(pipe(p), 0);
	struct privsep_started m = {.uid = 42, .has_stdin = 1};
	privsep_header_init(&m.h, PRIVSEP_STARTED);
	int fds[4] = {p[0], -1, p[1], -1};
	CHECK_EQ_INT(privsep_send(sp[0], &m, sizeof(m), fds, 4), 0);
	struct privsep_started got;
	int rfds[4];
	CHECK_EQ_INT(privsep_recv(sp[1], &got, sizeof(got), rfds, 4), sizeof(got));
	CHECK_EQ_INT(privsep_header_check(&got.h, PRIVSEP_STARTED), 0);
	CHECK_EQ_INT(privsep_header_check(&got.h, PRIVSEP_EXIT), -1);
	CHECK_EQ_INT(got.uid, 42);
	/* -1 entries are skipped: the two real fds arrive first, in order. */
	CHECK(rfds[0] >= 0 && rfds[1] >= 0 && rfds[2] == -1 && rfds[3] == -1);
	CHECK(fcntl(rfds[0], F_GETFD) & FD_CLOEXEC);
	CHECK_EQ_INT(write(rfds[1], "x", 1), 1);
	char c = 0;
	CHECK_EQ_INT(read(rfds[0], &c, 1), 1);
	CHECK_EQ_INT(c, 'x');
	for (int i = 0; i < 2; i++)
		close(rfds[i]);
	close(p[0]);
	close(p[1]);
	close(sp[0]);
	close(sp[1]);
}

/* Sends `len` bytes of `msg` on sp[0] with a pipe's read end, and checks
 * that privsep_recv on sp[1] refuses it (EPROTO) and closes the fd it got:
 * the pipe has no reader left. */
static void check_refused_and_closed(int sp[2], const void *msg, size_t len)
{
	int p[2];
	CHECK_EQ_INT(pipe(p), 0);
	CHECK_EQ_INT(privsep_send(sp[0], msg, len, &p[0], 1), 0);
	close(p[0]);
	struct privsep_header h;
	int fd = -2;
	errno = 0;
	CHECK_EQ_INT(privsep_recv(sp[1], &h, sizeof(h), &fd, 1), -1);
	CHECK_EQ_INT(errno, EPROTO);
	CHECK_EQ_INT(fd, -1);
	signal(SIGPIPE, SIG_IGN);
	CHECK_EQ_INT(write(p[1], "x", 1), -1);
	CHECK_EQ_INT(errno, EPIPE);
	close(p[1]);
}

TEST(oversized_message_is_refused_and_its_fds_closed)
{
	int sp[2], fd = -2;
	char big[512];
	struct privsep_header h;
	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	memset(big, 0, sizeof(big));
	check_refused_and_closed(sp, big, sizeof(big));
	close(sp[0]);
	CHECK_EQ_INT(privsep_recv(sp[1], &h, sizeof(h), &fd, 1), 0); /* EOF */
	close(sp[1]);
}

/* SOCK_SEQPACKET carries a datagram of no bytes, with fds: a message of
 * the wrong size, whose fds are closed, not the end of the stream. */
TEST(empty_message_with_fds_is_refused_and_its_fds_closed)
{
	int sp[2], fd = -2;
	struct privsep_header h;
	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	check_refused_and_closed(sp, "", 0);
	/* Without fds it reads as the end of the stream, which it cannot be told from. */
	CHECK_EQ_INT(privsep_send(sp[0], "", 0, NULL, 0), 0);
	CHECK_EQ_INT(privsep_recv(sp[1], &h, sizeof(h), &fd, 1), 0);
	close(sp[0]);
	close(sp[1]);
}

static struct config cfg;
static struct profile_set profiles;
static int ctl_front = -1;
static pid_t launcher_pid = -1;

static void start_launcher(void)
{
	int sp[2];
	char err[256];
	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp);
	fflush(stdout);
	launcher_pid = fork();
	if (launcher_pid == 0) {
		/* The front must be the launcher's child: its exit ends the loop. */
		pid_t fake_front = fork();
		if (fake_front == 0) {
			pause();
			_exit(0);
		}
		/* This test is the front, as root: the run channels are its. */
		struct launcher l = {.cfg = &cfg, .profiles = &profiles, .front_uid = getuid()};
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, SIGCHLD);
		sigaddset(&m, SIGTERM);
		sigaddset(&m, SIGINT);
		sigaddset(&m, SIGHUP);
		sigprocmask(SIG_BLOCK, &m, NULL);
		close(sp[0]);
		l.uids = uidpool_new(cfg.uid_first + 1, cfg.uid_count - 1, err, sizeof(err));
		_exit(launcher_serve(&l, sp[1], fake_front));
	}
	close(sp[1]);
	ctl_front = sp[0];
}

static struct privsep_run good_run(void)
{
	struct privsep_run r;
	memset(&r, 0, sizeof(r));
	privsep_header_init(&r.h, PRIVSEP_RUN);
	memset(r.run_id, 'a', RUN_ID_LEN);
	r.timeout_s = 5;
	r.cmd_len = 4;
	r.cwd_len = 1;
	return r;
}

/* Send `r` with a payload memfd of `payload_len` bytes; return the
 * launcher's answer on the run channel. */
static int ask(const struct privsep_run *r, size_t payload_len, struct privsep_exit *ex)
{
	int chan[2];
	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan);
	int mem = memfd_create("t", MFD_CLOEXEC);
	char *zeros = calloc(1, payload_len + 1);
	if (payload_len)
		(void)!write(mem, zeros, payload_len);
	free(zeros);
	int fds[2] = {chan[1], mem};
	privsep_send(ctl_front, r, sizeof(*r), fds, 2);
	close(chan[1]);
	close(mem);
	int none[1];
	ssize_t n = privsep_recv(chan[0], ex, sizeof(*ex), none, 0);
	close(chan[0]);
	return n == (ssize_t)sizeof(*ex) && privsep_header_check(&ex->h, PRIVSEP_EXIT) == 0 ? 0 : -1;
}

static void expect_refused(const char *what, struct privsep_run r, size_t payload_len, const char *reason)
{
	struct privsep_exit ex;
	memset(&ex, 0, sizeof(ex));
	CHECK_EQ_INT(ask(&r, payload_len, &ex), 0);
	CHECK_EQ_INT(ex.error, PRIVSEP_ERR_INVALID);
	if (!strstr(ex.message, reason))
		fprintf(stderr, "# %s: message \"%s\" lacks \"%s\"\n", what, ex.message, reason);
	CHECK_CONTAINS(ex.message, reason);
}

TEST(launcher_rechecks_every_field)
{
	struct privsep_run r;
	start_launcher();

	r = good_run();
	r.h.magic ^= 1;
	expect_refused("magic", r, 5, "bad message header");
	r = good_run();
	r.h.version = PRIVSEP_VERSION + 1;
	expect_refused("version", r, 5, "bad message header");
	r = good_run();
	r.run_id[3] = '/';
	expect_refused("run id charset", r, 5, "bad run id");
	r = good_run();
	r.run_id[5] = '\0';
	expect_refused("run id length", r, 5, "bad run id");
	r = good_run();
	r.profile_id = (uint32_t)profiles.n;
	expect_refused("profile id", r, 5, "unknown profile id");
	r = good_run();
	r.workspace_id = (uint32_t)cfg.n_workspaces;
	expect_refused("workspace id", r, 5, "unknown workspace id");
	r = good_run();
	r.timeout_s = profiles.v[0].timeout_max_s + 1;
	expect_refused("timeout", r, 5, "timeout");
	r = good_run();
	r.timeout_s = 0;
	expect_refused("timeout 0", r, 5, "timeout");
	r = good_run();
	r.cmd_len = RUN_CMD_MAX + 1;
	expect_refused("cmd length", r, 5, "length");
	r = good_run();
	r.cmd_len = 0;
	expect_refused("empty cmd", r, 5, "length");
	r = good_run();
	r.env_count = RUN_ENV_COUNT_MAX + 1;
	expect_refused("env count", r, 5, "length");
	r = good_run();
	r.has_stdin = 2;
	expect_refused("has_stdin", r, 5, "length");
	/* Payload checks happen in the supervisor, on its own copy. */
	r = good_run();
	expect_refused("payload size", r, 9, "payload size mismatch");
	r = good_run();
	expect_refused("cwd not absolute (all zeros)", r, 5, "NUL");

	/* A run channel that does not lead back to the front (its peer made
	 * by another uid) gets no answer at all: root writes only to the front. */
	int other[2], mem = memfd_create("t", MFD_CLOEXEC);
	r = good_run();
	CHECK(seteuid(65534) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, other) == 0);
	CHECK(seteuid(0) == 0);
	(void)!write(mem, "xxxxx", 5);
	int pass[2] = {other[1], mem};
	privsep_send(ctl_front, &r, sizeof(r), pass, 2);
	close(other[1]);
	close(mem);
	{
		struct privsep_exit none_ex;
		int none[1];
		CHECK_EQ_INT(privsep_recv(other[0], &none_ex, sizeof(none_ex), none, 0), 0);
	}
	close(other[0]);

	/* A message of the wrong size never reaches the checks. */
	char junk[7] = "garbage";
	int chan[2];
	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan);
	privsep_send(ctl_front, junk, sizeof(junk), &chan[1], 1);
	close(chan[1]);
	struct privsep_exit ex;
	int none[1];
	CHECK_EQ_INT(privsep_recv(chan[0], &ex, sizeof(ex), none, 0), sizeof(ex));
	CHECK_CONTAINS(ex.message, "malformed message");
	close(chan[0]);

	/* The launcher is still serving. */
	CHECK_EQ_INT(waitpid(launcher_pid, NULL, WNOHANG), 0);
	/* SIGTERM: the launcher stops its runs, then its front, then exits. */
	kill(launcher_pid, SIGTERM);
	int ws = 0;
	waitpid(launcher_pid, &ws, 0);
	CHECK(WIFEXITED(ws));
	close(ctl_front);
}

static int count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* The launcher's answer to a message that never reaches the checks:
 * afterwards every earlier message was read. */
static void sync_launcher(void)
{
	char junk[7] = "garbage";
	int chan[2], none[1];
	struct privsep_exit ex;
	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan);
	privsep_send(ctl_front, junk, sizeof(junk), &chan[1], 1);
	close(chan[1]);
	CHECK_EQ_INT(privsep_recv(chan[0], &ex, sizeof(ex), none, 0), sizeof(ex));
	close(chan[0]);
}

/* A (compromised) front: empty messages with fds leak none in the
 * launcher; a control socket it shuts (and lives on) ends it and the
 * launcher, which neither spins nor waits for it forever. */
TEST(launcher_keeps_no_fds_of_empty_messages_and_ends_with_the_stream)
{
	start_launcher();
	sync_launcher();
	int before = count_fds(launcher_pid);
	for (int i = 0; i < 100; i++) {
		int chan[2];
		socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan);
		privsep_send(ctl_front, "", 0, chan, 2);
		close(chan[0]);
		close(chan[1]);
	}
	sync_launcher();
	int after = count_fds(launcher_pid);
	/* 200 more if they leaked; a few of the launcher's own may come and go
	 * meanwhile (its supervisors start and end). */
	if (after > before)
		fprintf(stderr, "# the launcher held %d fds, then %d\n", before, after);
	CHECK(before > 0 && after < before + 10);

	CHECK_EQ_INT(shutdown(ctl_front, SHUT_WR), 0);
	int ws = 0;
	pid_t got = 0;
	for (int i = 0; i < 100 && (got = waitpid(launcher_pid, &ws, WNOHANG)) == 0; i++)
		usleep(50 * 1000);
	if (got == 0) {
		/* Say whether it spun, and end it and its front (which waits in pause()). */
		char path[64], buf[512];
		unsigned long ut = 0, st = 0;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)launcher_pid);
		FILE *f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && strrchr(buf, ')'))
			sscanf(strrchr(buf, ')') + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			       &ut, &st);
		if (f)
			fclose(f);
		fprintf(stderr,
			"# the launcher did not end within 5 s of the stream's end (%lu ticks of CPU)\n",
			ut + st);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)launcher_pid,
			 (int)launcher_pid);
		f = fopen(path, "r");
		for (int child; f && fscanf(f, "%d", &child) == 1;)
			kill(child, SIGKILL);
		if (f)
			fclose(f);
		kill(launcher_pid, SIGKILL);
		waitpid(launcher_pid, &ws, 0);
	}
	CHECK_EQ_INT(got, launcher_pid);
	/* Its front was killed: an abnormal end, as any end of the front. */
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 1);
	close(ctl_front);
}

int main(void)
{
	char err[256];
	if (config_defaults(&cfg, err, sizeof(err)) < 0 || profile_set_load("profiles", &profiles, err, sizeof(err)) < 0) {
		fprintf(stderr, "setup: %s\n", err);
		return 1;
	}
	RUN(message_with_fds);
	RUN(oversized_message_is_refused_and_its_fds_closed);
	RUN(empty_message_with_fds_is_refused_and_its_fds_closed);
	RUN(launcher_rechecks_every_field);
	RUN(launcher_keeps_no_fds_of_empty_messages_and_ends_with_the_stream);
	return harness_done();
}
