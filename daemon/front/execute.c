/*
 * execute.c - see execute.h.  A run is a state object of the front's loop:
 *
 *   STARTING  the request went to the launcher; its channel is watched for
 *             the STARTED record (with the pipes) or an EXIT with an error
 *   RUNNING   the pipes, stdin, the proxy's door and the channel (for the
 *             exit record) are watched; after the exit record every writer
 *             is gone, so the pipes' EOF is due at once (bounded: 2 s)
 *             (execute_kill shuts our side of the channel here, and the run
 *             goes on to its exit record: the supervisor killed it)
 *   TEARDOWN  `finished` was called, or the owner left (execute_abort); our
 *             side of the channel is shut, which tells the supervisor to
 *             kill what is left; it is watched for its EOF (the supervisor
 *             removed the run), bounded at 5 s, then `released`
 */
#include "execute.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture.h"
#include "fdio.h"
#include "loop.h"
#include "utf8.h"
#include "privsep.h"
#include "proxy.h"
#include "scrub.h"

#define READ_CHUNK (64 * 1024)
#define LIVE_FLUSH_MS 100    /* a streamed run's held-back output leaves at least this often */
#define DRAIN_BOUND_MS 2000  /* from the exit record to the pipes' EOF */
#define TEARDOWN_BOUND_MS 5000
#define KILL_BOUND_MS 10000  /* from execute_kill to the exit record: the supervisor kills at once */
#define DOOR_BACKOFF_MS 100  /* the proxy's door unwatched: all its places taken, or no fd left */

enum state { STARTING, RUNNING, TEARDOWN };

struct stream {
	struct execute *x;
	struct loop_watch w;
	int fd;
	struct capture cap;
	struct scrub_stream *scrub;
	int which;                     /* 0 stdout, 1 stderr */
};

struct execute {
	struct execute_env env;
	const struct run_request *r;
	const char *run_id;
	struct execute_hooks h;
	enum state state;
	int chan;
	struct loop_watch w_chan, w_stdin, w_proxy;
	struct loop_timer t_flush, t_bound, t_door;
	struct stream out, err;
	int stdin_fd, proxy_fd;
	size_t stdin_off;
	struct proxy *px;
	bool got_exit, paused, killing;
	struct privsep_exit ex;
	uid_t uid;
};

/* One buffer for every run's reads: only the loop's thread reads. */
static char read_buf[READ_CHUNK];

/* The filter's output: kept (head and tail), and passed on live when the
 * owner asked for it.  Only filtered bytes get here: a secret split across
 * two reads is held back by the filter until it can be judged. */
static void stream_emit(void *arg, const char *buf, size_t len)
{
	struct stream *s = arg;
	capture_append(&s->cap, buf, len);
	if (s->x->h.output)
		s->x->h.output(s->x->h.arg, s->which, buf, len);
}

/* The variable part of the request travels in a memfd: no size limit of a
 * socket message applies, and the launcher copies it before checking it. */
static int make_payload(const struct run_request *r)
{
	int fd = memfd_create("sharness-run", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fdio_write_all(fd, r->cmd, r->cmd_len) < 0 || fdio_write_all(fd, r->cwd, strlen(r->cwd)) < 0 ||
	    (r->env_len && fdio_write_all(fd, r->env, r->env_len) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void map_error(const struct privsep_exit *ex, struct request_error *e)
{
	/* The record comes from a supervisor already the run's uid: its
	 * message need not end within the field. */
	char m[sizeof(ex->message)];
	size_t n = strnlen(ex->message, sizeof(m) - 1);
	memcpy(m, ex->message, n);
	m[n] = '\0';
	switch (ex->error) {
	case PRIVSEP_ERR_INVALID:
		request_error_set(e, 400, "refused", "%s", m);
		break;
	case PRIVSEP_ERR_CAPACITY:
		request_error_set(e, 503, "at_capacity", "%s", m);
		break;
	case PRIVSEP_ERR_CWD:
		request_error_set(e, 404, "cwd_outside_workspace", "%s", m);
		break;
	case PRIVSEP_ERR_DISK:
		request_error_set(e, 507, "disk_reserve", "%s", m);
		break;
	default:
		request_error_set(e, 500, "sandbox_failed", "%s", m);
		break;
	}
}

static void stream_close(struct execute *x, struct stream *s)
{
	loop_unwatch(x->env.loop, &s->w);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static char *stream_result(struct stream *s, bool *truncated, bool *replaced)
{
	size_t len;
	bool rep = false;
	char *raw = capture_result(&s->cap, &len);
	if (!raw)
		return NULL;
	char *clean = utf8_clean(raw, len, &rep);
	free(raw);
	*truncated |= capture_truncated(&s->cap);
	*replaced |= rep;
	return clean;
}

/* What feeds the run: stdin, and the proxy's door and connections (no
 * more connections, then the ones being served end). */
static void close_inputs(struct execute *x)
{
	loop_unwatch(x->env.loop, &x->w_stdin);
	if (x->stdin_fd >= 0)
		close(x->stdin_fd);
	x->stdin_fd = -1;
	loop_unwatch(x->env.loop, &x->w_proxy);
	loop_timer_cancel(x->env.loop, &x->t_door);
	if (x->proxy_fd >= 0)
		close(x->proxy_fd);
	x->proxy_fd = -1;
	proxy_free(x->px);
	x->px = NULL;
}

/* Every descriptor closed, everything freed.  Closing the channel tells the
 * supervisor to kill the run, if it still lives. */
static void destroy(struct execute *x)
{
	struct loop *l = x->env.loop;
	loop_timer_cancel(l, &x->t_flush);
	loop_timer_cancel(l, &x->t_bound);
	loop_unwatch(l, &x->w_chan);
	if (x->chan >= 0)
		close(x->chan);
	close_inputs(x);
	stream_close(x, &x->out);
	stream_close(x, &x->err);
	scrub_stream_free(x->out.scrub);
	scrub_stream_free(x->err.scrub);
	capture_free(&x->out.cap);
	capture_free(&x->err.cap);
	free(x);
}

static void begin_teardown(struct execute *x);

/* The run failed: `finished` with the error, then `released` once its
 * supervisor is gone.  Shutting our side of the channel tells the
 * supervisor to kill whatever is left; it then tears the run down, and the
 * launcher counts it until it exits: the slot goes back only then, or a
 * queued request could meet the launcher's own bound (a 503). */
static void fail(struct execute *x, const struct request_error *e)
{
	begin_teardown(x);
	x->h.finished(x->h.arg, -1, NULL, e);
}

static void fail_internal(struct execute *x, const char *message)
{
	struct request_error e;
	request_error_set(&e, 500, "internal", "%s", message);
	fail(x, &e);
}

static void on_teardown(struct loop_watch *w, uint32_t revents);
static void on_teardown_bound(struct loop_timer *t);

/* The exit record is in and the pipes are drained (or their bound passed):
 * the reply's facts, then `finished`, then wait for the teardown. */
static void complete(struct execute *x)
{
	struct run_result res;
	struct request_error e;

	/* Whatever the pipes still held counts (their EOF may not have come). */
	struct stream *both[2] = {&x->out, &x->err};
	for (int i = 0; i < 2; i++)
		if (both[i]->fd >= 0) {
			scrub_stream_finish(both[i]->scrub);
			stream_close(x, both[i]);
		}
	if (x->ex.error != PRIVSEP_OK) {
		map_error(&x->ex, &e);
		fail(x, &e);
		return;
	}
	memset(&res, 0, sizeof(res));
	res.uid = x->uid;
	res.exit_code = x->ex.exit_code;
	res.signal = x->ex.signal;
	res.timed_out = x->ex.timed_out != 0;
	res.cleanup_failed = x->ex.cleanup_failed != 0;
	res.disk_limited = x->ex.disk_limited != 0;
	if (res.disk_limited) {
		/* From the supervisor: terminate it ourselves; it names a path,
		 * so it goes out valid UTF-8 like everything in the reply. */
		x->ex.message[sizeof(x->ex.message) - 1] = '\0';
		bool rep;
		char *m = utf8_clean(x->ex.message, strlen(x->ex.message), &rep);
		size_t n = m ? utf8_cut(m, strlen(m), sizeof(res.message) - 1) : 0;
		if (m)
			memcpy(res.message, m, n);
		res.message[n] = '\0';
		free(m);
	}
	res.ms = x->ex.ms;
	res.usage = x->ex.usage;
	res.filtered = scrub_stream_count(x->out.scrub) + scrub_stream_count(x->err.scrub);
	res.out = stream_result(&x->out, &res.truncated, &res.utf8_replaced);
	res.err = stream_result(&x->err, &res.truncated, &res.utf8_replaced);
	if (!res.out || !res.err) {
		execute_result_free(&res);
		fail_internal(x, "The front is out of memory.");
		return;
	}
	char proxy_denied[PROXY_DENIALS_MAX][PROXY_DENIAL_DETAIL];
	size_t n_proxy = proxy_denials(x->px, proxy_denied, PROXY_DENIALS_MAX);
	struct denial_facts facts = {
	    .profile = x->r->profile, .timeout_s = x->r->timeout_s, .timed_out = res.timed_out,
	    .truncated = res.truncated, .disk_limited = res.disk_limited, .disk_message = res.message,
	    .exit_code = res.signal ? -1 : res.exit_code,
	    .have_oom = (res.usage.have & PRIVSEP_USAGE_OOM) != 0, .oom_killed = res.usage.oom_killed != 0,
	    .have_pids_limited = (res.usage.have & PRIVSEP_USAGE_PIDS_LIMITED) != 0,
	    .pids_limited = res.usage.pids_limited != 0, .ex = &x->ex, .proxy = proxy_denied,
	    .n_proxy = n_proxy, .stderr_text = res.err, .stdout_text = res.out, .scrub = x->env.scrub};
	denials_collect(&res.denials, &facts);
	res.filtered += res.denials.filtered;

	begin_teardown(x);
	x->h.finished(x->h.arg, 0, &res, NULL);
}

static void released(struct execute *x)
{
	struct execute_hooks h = x->h;
	destroy(x);
	h.released(h.arg);
}

/* Until the channel's EOF: a record sent before the supervisor saw our
 * side shut (STARTED with its pipes, an exit record) is read and dropped,
 * its descriptors closed. */
static void on_teardown(struct loop_watch *w, uint32_t revents)
{
	union {
		struct privsep_started started;
		struct privsep_exit ex;
	} in;
	(void)revents;
	if (privsep_recv(w->fd, &in, sizeof(in), NULL, 0) > 0)
		return;
	released(w->arg); /* EOF, or an error: the supervisor has nothing more to say */
}

static void on_teardown_bound(struct loop_timer *t)
{
	released(t->arg);
}

/* Only the channel stays, our sending side shut (the supervisor kills the
 * run, if it still lives, when it sees that): the supervisor tears the run
 * down, and the launcher counts it until then, so `released` waits for the
 * channel's EOF; bounded, since a stuck teardown is the launcher's to report. */
static void begin_teardown(struct execute *x)
{
	struct loop *l = x->env.loop;
	loop_timer_cancel(l, &x->t_flush);
	loop_timer_cancel(l, &x->t_bound);
	loop_unwatch(l, &x->w_chan);
	close_inputs(x);
	stream_close(x, &x->out);
	stream_close(x, &x->err);
	x->state = TEARDOWN;
	if (x->chan < 0 || shutdown(x->chan, SHUT_WR) < 0 ||
	    loop_watch(l, &x->w_chan, x->chan, EPOLLIN | EPOLLRDHUP, on_teardown, x) < 0)
		loop_timer_set(l, &x->t_bound, 0, on_teardown_bound, x);
	else
		loop_timer_set(l, &x->t_bound, TEARDOWN_BOUND_MS, on_teardown_bound, x);
}

static void maybe_complete(struct execute *x)
{
	if (x->got_exit && x->out.fd < 0 && x->err.fd < 0)
		complete(x);
}

static void on_flush(struct loop_timer *t)
{
	struct execute *x = t->arg;
	if (x->out.fd >= 0)
		scrub_stream_flush(x->out.scrub);
	if (x->err.fd >= 0)
		scrub_stream_flush(x->err.scrub);
}

/* One read of the command's output into its filter: 1 bytes came, 0 the
 * pipe ended (the filter's held-back bytes flushed, the pipe closed), -1
 * nothing there now. */
static int stream_read(struct execute *x, struct stream *s)
{
	ssize_t n;
	do
		n = read(s->fd, read_buf, sizeof(read_buf));
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		scrub_stream_feed(s->scrub, read_buf, (size_t)n);
		return 1;
	}
	if (n < 0 && errno == EAGAIN)
		return -1;
	scrub_stream_finish(s->scrub);
	stream_close(x, s);
	return 0;
}

static void on_stream(struct loop_watch *w, uint32_t revents)
{
	struct stream *s = w->arg;
	struct execute *x = s->x;
	(void)revents;
	int got = stream_read(x, s);
	/* A streamed run's held-back bytes leave within LIVE_FLUSH_MS. */
	if (got > 0 && x->h.output && !x->t_flush.armed)
		loop_timer_set(x->env.loop, &x->t_flush, LIVE_FLUSH_MS, on_flush, x);
	else if (got == 0)
		maybe_complete(x);
}

static void on_stdin(struct loop_watch *w, uint32_t revents)
{
	struct execute *x = w->arg;
	(void)revents;
	ssize_t n = write(x->stdin_fd, x->r->stdin_data + x->stdin_off, x->r->stdin_len - x->stdin_off);
	if (n > 0)
		x->stdin_off += (size_t)n;
	if ((n < 0 && errno != EAGAIN && errno != EINTR) || x->stdin_off == x->r->stdin_len) {
		loop_unwatch(x->env.loop, &x->w_stdin);
		close(x->stdin_fd);
		x->stdin_fd = -1;
	}
}

static void on_proxy_door(struct loop_watch *w, uint32_t revents);

static void on_door_again(struct loop_timer *t)
{
	struct execute *x = t->arg;
	if (x->proxy_fd >= 0 && loop_watch(x->env.loop, &x->w_proxy, x->proxy_fd, EPOLLIN, on_proxy_door, x) < 0)
		fail_internal(x, "The front could not watch the run's proxy.");
}

/* Accept one connection on the run's proxy door and hand it to the proxy.
 * When the run holds all its places (the proxy answered 503) or the front
 * has no descriptor left, the door rests DOOR_BACKOFF_MS: its queue waits
 * in the kernel, instead of the loop spinning on a level-triggered door
 * or answering a run's flood of connects at the loop's full speed. */
static void on_proxy_door(struct loop_watch *w, uint32_t revents)
{
	struct execute *x = w->arg;
	(void)revents;
	int c = accept4(x->proxy_fd, NULL, NULL, SOCK_CLOEXEC);
	bool rest;
	if (c < 0)
		rest = errno != EAGAIN && errno != EINTR && errno != ECONNABORTED;
	else
		rest = proxy_serve_fd(x->px, c) < 0 && errno == EAGAIN; /* takes c, whatever happens */
	if (rest) {
		loop_unwatch(x->env.loop, &x->w_proxy);
		loop_timer_set(x->env.loop, &x->t_door, DOOR_BACKOFF_MS, on_door_again, x);
	}
}

/* After the exit record every writer is gone, so what the pipes hold is
 * all there is (at most their size): a paused run (its stream's reader is
 * behind) reads it now rather than at the reader's pace, so that its end,
 * and its slot, never wait for a slow reader. */
static void drain_paused(struct execute *x)
{
	struct stream *both[2] = {&x->out, &x->err};
	for (int i = 0; i < 2 && x->paused; i++)
		while (both[i]->fd >= 0 && stream_read(x, both[i]) > 0)
			; /* -1: a writer left over, which the drain bound ends */
}

/* After the exit record the pipes' EOF is due at once; a bound keeps a
 * surprise from holding the run. */
static void on_drain_bound(struct loop_timer *t)
{
	struct execute *x = t->arg;
	drain_paused(x);
	complete(x);
}

static void on_exit_record(struct loop_watch *w, uint32_t revents)
{
	struct execute *x = w->arg;
	(void)revents;
	ssize_t n = privsep_recv(x->chan, &x->ex, sizeof(x->ex), NULL, 0);
	if (n != (ssize_t)sizeof(x->ex) || privsep_header_check(&x->ex.h, PRIVSEP_EXIT) < 0) {
		fail_internal(x, "The run's supervisor ended without an exit record.");
		return;
	}
	x->got_exit = true;
	loop_unwatch(x->env.loop, &x->w_chan);
	loop_timer_set(x->env.loop, &x->t_bound, DRAIN_BOUND_MS, on_drain_bound, x);
	drain_paused(x);
	maybe_complete(x);
}

static int stream_init(struct execute *x, struct stream *s, int fd, int which)
{
	s->x = x;
	s->fd = fd;
	s->which = which;
	/* Ours alone (the supervisor closed its copy): a read never waits,
	 * also where a writer outlived the exit record (drain_paused). */
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || capture_init(&s->cap, x->r->profile->output_max) < 0)
		return -1;
	s->scrub = scrub_stream_new(x->env.scrub, stream_emit, s);
	return s->scrub ? 0 : -1;
}

/* The launcher's answer: STARTED with the pipes (out, err, [stdin],
 * [proxy], absent ones skipped), or EXIT with why not. */
static void on_started(struct loop_watch *w, uint32_t revents)
{
	struct execute *x = w->arg;
	struct loop *l = x->env.loop;
	const struct run_request *r = x->r;
	union {
		struct privsep_header h;
		struct privsep_started started;
		struct privsep_exit ex;
	} in;
	int fds[4] = {-1, -1, -1, -1};
	(void)revents;

	ssize_t n = privsep_recv(x->chan, &in, sizeof(in), fds, 4);
	bool want_proxy = r->profile->network == PROFILE_NETWORK_PROXY;
	const char *problem = NULL;
	if (n == (ssize_t)sizeof(in.ex) && in.h.type == PRIVSEP_EXIT && privsep_header_check(&in.h, PRIVSEP_EXIT) == 0) {
		struct request_error e;
		map_error(&in.ex, &e);
		for (int i = 0; i < 4; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		fail(x, &e);
		return;
	}
	if (n != (ssize_t)sizeof(in.started) || privsep_header_check(&in.h, PRIVSEP_STARTED) < 0 ||
	    in.started.has_stdin != r->has_stdin || in.started.has_proxy != want_proxy || fds[0] < 0 || fds[1] < 0)
		problem = "The launcher sent an unexpected answer.";
	size_t next = 2;
	if (!problem && r->has_stdin && (x->stdin_fd = fds[next++]) < 0)
		problem = "The launcher sent no stdin pipe.";
	if (!problem && want_proxy) {
		x->proxy_fd = fds[next++];
		char perr[256];
		struct proxy_limits lim = {.daemon_port = x->env.daemon_port, .daemon_host = x->env.daemon_host};
		if (x->proxy_fd < 0 ||
		    !(x->px = proxy_new(r->profile, &lim, x->env.audit_fd, x->run_id, perr, sizeof(perr))))
			problem = "The run's egress proxy could not start.";
	}
	if (problem) {
		for (size_t i = 0; i < 4; i++)
			if (fds[i] >= 0 && fds[i] != x->stdin_fd && fds[i] != x->proxy_fd)
				close(fds[i]);
		fail_internal(x, problem);
		return;
	}
	for (size_t i = next; i < 4; i++) /* more than the record says it carries */
		if (fds[i] >= 0)
			close(fds[i]);
	x->uid = in.started.uid;
	int ok = stream_init(x, &x->out, fds[0], 0);
	fds[0] = -1;
	ok |= stream_init(x, &x->err, fds[1], 1);
	fds[1] = -1;
	if (ok < 0) {
		fail_internal(x, "The front could not set up the run's pipes.");
		return;
	}
	if (x->stdin_fd >= 0 && r->stdin_len == 0) {
		close(x->stdin_fd);
		x->stdin_fd = -1;
	}
	/* The exit record next; the pipes, stdin and the proxy's door all
	 * along: a command that closes its own stdout and stderr still dies
	 * with its client (the owner's watch, execute_abort). */
	loop_unwatch(l, &x->w_chan);
	x->state = RUNNING;
	if (loop_watch(l, &x->w_chan, x->chan, EPOLLIN, on_exit_record, x) < 0 ||
	    loop_watch(l, &x->out.w, x->out.fd, EPOLLIN, on_stream, &x->out) < 0 ||
	    loop_watch(l, &x->err.w, x->err.fd, EPOLLIN, on_stream, &x->err) < 0 ||
	    (x->stdin_fd >= 0 && (fcntl(x->stdin_fd, F_SETFL, O_NONBLOCK) < 0 ||
	                          loop_watch(l, &x->w_stdin, x->stdin_fd, EPOLLOUT, on_stdin, x) < 0)) ||
	    (x->proxy_fd >= 0 && loop_watch(l, &x->w_proxy, x->proxy_fd, EPOLLIN, on_proxy_door, x) < 0))
		fail_internal(x, "The front could not watch the run's pipes.");
}

struct execute *execute_start(const struct execute_env *env, const struct run_request *r, const char *run_id,
                              const struct execute_hooks *hooks, struct request_error *e)
{
	struct privsep_run msg;
	int chan[2] = {-1, -1};

	struct execute *x = calloc(1, sizeof(*x));
	if (!x) {
		request_error_set(e, 500, "internal", "The front is out of memory.");
		return NULL;
	}
	x->env = *env;
	x->r = r;
	x->run_id = run_id;
	x->h = *hooks;
	x->chan = x->stdin_fd = x->proxy_fd = x->out.fd = x->err.fd = -1;
	loop_watch_init(&x->w_chan);
	loop_watch_init(&x->w_stdin);
	loop_watch_init(&x->w_proxy);
	loop_watch_init(&x->out.w);
	loop_watch_init(&x->err.w);

	memset(&msg, 0, sizeof(msg));
	privsep_header_init(&msg.h, PRIVSEP_RUN);
	snprintf(msg.run_id, sizeof(msg.run_id), "%s", run_id);
	msg.profile_id = (uint32_t)r->profile_id;
	msg.workspace_id = (uint32_t)r->workspace_id;
	msg.timeout_s = r->timeout_s;
	msg.cmd_len = (uint32_t)r->cmd_len;
	msg.cwd_len = (uint32_t)strlen(r->cwd);
	msg.env_len = (uint32_t)r->env_len;
	msg.env_count = r->env_count;
	msg.has_stdin = r->has_stdin;

	int payload = make_payload(r);
	if (payload < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0) {
		request_error_set(e, 500, "internal", "The front could not prepare the run: %s.", strerror(errno));
		if (payload >= 0)
			close(payload);
		free(x);
		return NULL;
	}
	int send_fds[2] = {chan[1], payload};
	int sent = privsep_send(env->ctl, &msg, sizeof(msg), send_fds, 2);
	close(chan[1]);
	close(payload);
	x->chan = chan[0];
	if (sent < 0) {
		request_error_set(e, 500, "internal", "The launcher is not answering: %s.", strerror(errno));
		destroy(x);
		return NULL;
	}
	if (loop_watch(env->loop, &x->w_chan, x->chan, EPOLLIN, on_started, x) < 0) {
		request_error_set(e, 500, "internal", "The front could not watch the run: %s.", strerror(errno));
		destroy(x);
		return NULL;
	}
	x->state = STARTING;
	return x;
}

void execute_abort(struct execute *x)
{
	if (x)
		begin_teardown(x);
}

static void on_kill_bound(struct loop_timer *t)
{
	fail_internal(t->arg, "The run's supervisor did not end the killed run in time.");
}

int execute_kill(struct execute *x)
{
	if (!x || x->state != RUNNING)
		return -1;
	/* After the exit record the command has ended by itself: its end is
	 * on its way. */
	if (x->killing || x->got_exit)
		return 0;
	if (shutdown(x->chan, SHUT_WR) < 0)
		return -1;
	x->killing = true;
	/* Bounded like an abort: a wedged supervisor must not hold the slot.
	 * The exit record's drain bound replaces this one. */
	loop_timer_set(x->env.loop, &x->t_bound, KILL_BOUND_MS, on_kill_bound, x);
	return 0;
}

static void on_watch_failed(struct loop_timer *t)
{
	fail_internal(t->arg, "The front could not watch the run's pipes.");
}

void execute_pause(struct execute *x, bool pause)
{
	struct loop *l = x->env.loop;
	if (x->state != RUNNING || x->paused == pause)
		return;
	x->paused = pause;
	for (struct stream *s = &x->out; s; s = s == &x->out ? &x->err : NULL) {
		if (s->fd < 0)
			continue;
		if (pause)
			loop_unwatch(l, &s->w);
		else if (loop_watch(l, &s->w, s->fd, EPOLLIN, on_stream, s) < 0) {
			/* Not from inside the caller: at the loop's next turn. */
			loop_timer_set(l, &x->t_bound, 0, on_watch_failed, x);
			return;
		}
	}
}

void execute_result_free(struct run_result *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}
