/*
 * test_execute.c - a run's life in the front (daemon/front/execute.c) as
 * seen from its slot: the test is the launcher and the supervisor, at the
 * other end of the control socket and of the run's channel (real sockets,
 * the real loop).
 *
 * What it holds: when the owner leaves (a client's hang-up, DELETE of a
 * job), the supervisor is told (our side of the channel is shut: it sees
 * POLLRDHUP, as watch.c polls for), and `released`, which gives the slot
 * back, comes only once the supervisor is gone (the channel's EOF).  Before
 * it, the front gave the slot back at once, so hang-ups could keep more
 * teardowns going than the launcher's own bound allows, and a queued
 * request met a 503 instead of its wait.  A record the supervisor still
 * sends (STARTED with its pipes) is read and its descriptors closed.
 */
#include "harness.h"
#include "rules_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "execute.h"
#include "loop.h"
#include "privsep.h"
#include "profile.h"
#include "request.h"
#include "scrub.h"

static struct scrub_rules *R;
static int n_finished, n_released;
static char last_out[64]; /* the last result's stdout, and its signal */
static int last_signal;

static void on_finished(void *arg, int rc, struct run_result *res, const struct request_error *e)
{
	(void)arg;
	(void)e;
	n_finished++;
	last_out[0] = '\0';
	last_signal = -1;
	if (rc == 0) {
		snprintf(last_out, sizeof(last_out), "%s", res->out);
		last_signal = res->signal;
	}
	execute_result_free(res);
}

static void on_released(void *arg)
{
	(void)arg;
	n_released++;
}

/* The loop turned for `ms`. */
static void turn(struct loop *l, int ms)
{
	int64_t end = loop_now_ms() + ms;
	while (loop_now_ms() < end)
		loop_once(l, end - loop_now_ms());
}

/* Whether the supervisor's end of the channel sees the front's side shut. */
static bool told_to_stop(int chan)
{
	struct pollfd p = {.fd = chan, .events = POLLRDHUP};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLRDHUP);
}

struct fixture {
	struct loop *l;
	int ctl[2]; /* [0] the front's, [1] the launcher's (the test) */
	struct profile profile;
	struct run_request r;
	struct execute *x;
	int chan; /* the supervisor's end (the test's) */
};

/* A run handed to the "launcher": the test takes its channel. */
static bool start(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	n_finished = n_released = 0;
	fx->l = loop_new();
	if (!fx->l || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fx->ctl) < 0)
		return false;
	snprintf(fx->profile.name, sizeof(fx->profile.name), "build");
	fx->profile.output_max = 4096;
	fx->r = (struct run_request){.cmd = "true", .cmd_len = 4, .profile = &fx->profile, .cwd = "/"};
	struct execute_env env = {.loop = fx->l,
				  .ctl = fx->ctl[0],
				  .scrub = R,
				  .audit_fd = -1,
				  .daemon_host = "127.0.0.1",
				  .daemon_port = 1};
	struct execute_hooks h = {.finished = on_finished, .released = on_released};
	struct request_error e;
	fx->x = execute_start(&env, &fx->r, "00112233445566778899aabbccddeeff", &h, &e);
	if (!fx->x)
		return false;
	struct privsep_run msg;
	int fds[2];
	if (privsep_recv(fx->ctl[1], &msg, sizeof(msg), fds, 2) != (ssize_t)sizeof(msg) || fds[0] < 0)
		return false;
	close(fds[1]); /* the payload */
	fx->chan = fds[0];
	return true;
}

static void end(struct fixture *fx)
{
	if (fx->chan >= 0)
		close(fx->chan);
	close(fx->ctl[0]);
	close(fx->ctl[1]);
	loop_free(fx->l);
}

/* The supervisor's STARTED with the read ends of `out` and `err`, which
 * the test then closes (the front holds them, or has closed them). */
static bool send_started(const struct fixture *fx, int out[2], int err[2])
{
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return false;
	struct privsep_started st;
	memset(&st, 0, sizeof(st));
	privsep_header_init(&st.h, PRIVSEP_STARTED);
	int pass[2] = {out[0], err[0]};
	bool sent = privsep_send(fx->chan, &st, sizeof(st), pass, 2) == 0;
	close(out[0]);
	close(err[0]);
	return sent;
}

/* The supervisor's exit record: killed by `sig`, or exited 0. */
static bool send_exit(const struct fixture *fx, int sig)
{
	struct privsep_exit ex;
	memset(&ex, 0, sizeof(ex));
	privsep_header_init(&ex.h, PRIVSEP_EXIT);
	ex.exit_code = sig ? -1 : 0;
	ex.signal = sig;
	return privsep_send(fx->chan, &ex, sizeof(ex), NULL, 0) == 0;
}

/* The command ends: the supervisor's exit record (killed by `sig`, or
 * exited 0), the pipes' writers gone; the loop turns. */
static bool command_ends(struct fixture *fx, int out[2], int err[2], int sig)
{
	bool sent = send_exit(fx, sig);
	close(out[1]);
	close(err[1]);
	turn(fx->l, 50);
	return sent;
}

/* The supervisor exits (its end of the channel closes); the loop turns. */
static void supervisor_exits(struct fixture *fx)
{
	close(fx->chan);
	fx->chan = -1;
	turn(fx->l, 50);
}

/* Left while the launcher still has the request: the supervisor is told;
 * the slot stays until the channel closes. */
TEST(abort_while_starting_keeps_the_slot_until_the_channel_closes)
{
	struct fixture fx;
	CHECK(start(&fx));
	if (!fx.x)
		return;
	execute_abort(fx.x);
	CHECK_EQ_INT(n_released, 0); /* never from inside execute_abort */
	turn(fx.l, 50);
	CHECK(told_to_stop(fx.chan));
	CHECK_EQ_INT(n_released, 0);
	/* The supervisor's exit record, then its exit. */
	struct privsep_exit ex;
	memset(&ex, 0, sizeof(ex));
	privsep_header_init(&ex.h, PRIVSEP_EXIT);
	CHECK(privsep_send(fx.chan, &ex, sizeof(ex), NULL, 0) == 0);
	turn(fx.l, 50);
	CHECK_EQ_INT(n_released, 0);
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	CHECK_EQ_INT(n_finished, 0); /* the owner left: no `finished` */
	end(&fx);
}

/* Left while running: the pipes the front held are closed at once (the
 * command's writes fail), the slot stays until the channel closes. */
TEST(abort_while_running_keeps_the_slot_until_the_channel_closes)
{
	struct fixture fx;
	int out[2], err[2];
	CHECK(start(&fx));
	if (!fx.x)
		return;
	CHECK(send_started(&fx, out, err));
	turn(fx.l, 50); /* RUNNING now */
	CHECK(!told_to_stop(fx.chan));
	execute_abort(fx.x);
	turn(fx.l, 50);
	CHECK(told_to_stop(fx.chan));
	CHECK(write(out[1], "x", 1) < 0 && errno == EPIPE); /* the front's read end is closed */
	CHECK_EQ_INT(n_released, 0);
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	CHECK_EQ_INT(n_finished, 0);
	close(out[1]);
	close(err[1]);
	end(&fx);
}

/* A STARTED that crossed the hang-up: its pipes are closed by the front,
 * not kept until the end of the run's teardown. */
TEST(a_record_after_the_abort_has_its_descriptors_closed)
{
	struct fixture fx;
	int out[2], err[2];
	CHECK(start(&fx));
	if (!fx.x)
		return;
	execute_abort(fx.x);
	CHECK(send_started(&fx, out, err));
	turn(fx.l, 50);
	CHECK(write(out[1], "x", 1) < 0 && errno == EPIPE);
	CHECK(write(err[1], "x", 1) < 0 && errno == EPIPE);
	CHECK_EQ_INT(n_released, 0);
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	close(out[1]);
	close(err[1]);
	end(&fx);
}

/* DELETE of a running job: the supervisor is told, as for an abort, but
 * the run is followed to its end: `finished` with what the command wrote
 * (a last line without its newline too, which the filter held back) and
 * the exit record's signal; the slot at the channel's end. */
TEST(kill_keeps_the_output_and_the_exit_record)
{
	struct fixture fx;
	int out[2], err[2];
	CHECK(start(&fx));
	if (!fx.x)
		return;
	CHECK(execute_kill(fx.x) < 0); /* not started yet: the caller aborts */
	CHECK(send_started(&fx, out, err));
	turn(fx.l, 50);
	CHECK(write(out[1], "before-kill", 11) == 11);
	turn(fx.l, 150);
	CHECK(execute_kill(fx.x) == 0);
	CHECK(execute_kill(fx.x) == 0); /* a second DELETE changes nothing */
	turn(fx.l, 50);
	CHECK(told_to_stop(fx.chan));
	CHECK_EQ_INT(n_finished, 0);
	CHECK(command_ends(&fx, out, err, SIGKILL));
	CHECK_EQ_INT(n_finished, 1);
	CHECK_STR(last_out, "before-kill");
	CHECK_EQ_INT(last_signal, SIGKILL);
	CHECK_EQ_INT(n_released, 0);
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	end(&fx);
}

/* A stream's reader is behind (paused) when the run ends: the pipes are
 * read to their end at once and the run finishes, so its slot never waits
 * for the reader's pace. */
TEST(a_paused_run_ends_when_its_supervisor_does)
{
	struct fixture fx;
	int out[2], err[2];
	CHECK(start(&fx));
	if (!fx.x)
		return;
	CHECK(send_started(&fx, out, err));
	turn(fx.l, 50);
	execute_pause(fx.x, true);
	CHECK(write(out[1], "unread", 6) == 6);
	turn(fx.l, 50);
	CHECK(command_ends(&fx, out, err, 0));
	CHECK_EQ_INT(n_finished, 1);
	CHECK_STR(last_out, "unread");
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	end(&fx);
}

/* The run's proxy door when the front has no descriptor left: accept4
 * fails (EMFILE) and the connection stays queued, so a level-triggered door
 * is ready again at once.  It rests DOOR_BACKOFF_MS instead: the loop turns
 * a few times in 300 ms, not hundreds of thousands. */
TEST(a_door_that_cannot_accept_rests)
{
	struct fixture fx;
	int out[2], err[2];
	CHECK(start(&fx));
	if (!fx.x)
		return;
	static char *allow[] = {"example.com"};
	fx.profile.network = PROFILE_NETWORK_PROXY;
	fx.profile.proxy_allow[0] = allow[0];
	fx.profile.n_proxy_allow = 1;
	int door = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "sharness-test-door-%d", (int)getpid());
	socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
	CHECK(door >= 0 && bind(door, (struct sockaddr *)&sa, sl) == 0 && listen(door, 8) == 0);
	CHECK(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
	struct privsep_started st;
	memset(&st, 0, sizeof(st));
	privsep_header_init(&st.h, PRIVSEP_STARTED);
	st.has_proxy = 1;
	int pass[3] = {out[0], err[0], door};
	CHECK(privsep_send(fx.chan, &st, sizeof(st), pass, 3) == 0);
	close(out[0]);
	close(err[0]);
	close(door);
	turn(fx.l, 50); /* RUNNING, the door watched */
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&sa, sl) == 0);
	/* No descriptor left: the lowest free one is past the limit. */
	struct rlimit was, none;
	int lowest = dup(0);
	CHECK(lowest >= 0 && getrlimit(RLIMIT_NOFILE, &was) == 0);
	close(lowest);
	none = was;
	none.rlim_cur = (rlim_t)lowest;
	CHECK(setrlimit(RLIMIT_NOFILE, &none) == 0);
	unsigned turns = 0;
	for (int64_t until = loop_now_ms() + 300; loop_now_ms() < until; turns++)
		loop_once(fx.l, until - loop_now_ms());
	CHECK(setrlimit(RLIMIT_NOFILE, &was) == 0);
	CHECK(turns < 50);
	if (turns >= 50)
		fprintf(stderr, "# %u turns of the loop in 300 ms\n", turns);
	execute_abort(fx.x);
	turn(fx.l, 50);
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	close(c);
	close(out[1]);
	close(err[1]);
	end(&fx);
}

/* The launcher's refusal (EXIT with an error): `finished` with it, and the
 * slot once the launcher has closed the channel, as it does. */
TEST(a_refusal_is_finished_then_released_at_the_channels_end)
{
	struct fixture fx;
	CHECK(start(&fx));
	if (!fx.x)
		return;
	CHECK(privsep_send_error(fx.chan, PRIVSEP_ERR_CAPACITY, "busy") == 0);
	turn(fx.l, 50);
	CHECK_EQ_INT(n_finished, 1);
	CHECK_EQ_INT(n_released, 0);
	supervisor_exits(&fx);
	CHECK_EQ_INT(n_released, 1);
	end(&fx);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	R = fixture_rules("not-a-real-secret-12345\n");
	if (!R)
		return 1;
	RUN(abort_while_starting_keeps_the_slot_until_the_channel_closes);
	RUN(kill_keeps_the_output_and_the_exit_record);
	RUN(a_paused_run_ends_when_its_supervisor_does);
	RUN(a_door_that_cannot_accept_rests);
	RUN(abort_while_running_keeps_the_slot_until_the_channel_closes);
	RUN(a_record_after_the_abort_has_its_descriptors_closed);
	RUN(a_refusal_is_finished_then_released_at_the_channels_end);
	scrub_rules_free(R);
	return harness_done();
}
