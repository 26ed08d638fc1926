/*
 * execute.c - see execute.h.
 */
#include "execute.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture.h"
#include "utf8.h"
#include "privsep.h"
#include "proxy.h"
#include "scrub.h"

#define READ_CHUNK (64 * 1024)
#define LIVE_FLUSH_MS 100

struct stream {
	int fd;
	struct capture cap;
	struct scrub_stream *scrub;
	const struct execute_env *env; /* env->output, when the run is streamed */
	int which;                     /* 0 stdout, 1 stderr */
};

/* The filter's output: kept (head and tail), and passed on live when the
 * request asked for a stream.  Only filtered bytes get here: a secret split
 * across two reads is held back by the filter until it can be judged. */
static void stream_emit(void *arg, const char *buf, size_t len)
{
	struct stream *s = arg;
	capture_append(&s->cap, buf, len);
	if (s->env && s->env->output)
		s->env->output(s->env->output_arg, s->which, buf, len);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The variable part of the request travels in a memfd: no size limit of a
 * socket message applies, and the launcher copies it before checking it. */
static int make_payload(const struct run_request *r)
{
	int fd = memfd_create("sharness-run", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write_all(fd, r->cmd, r->cmd_len) < 0 || write_all(fd, r->cwd, strlen(r->cwd)) < 0 ||
	    (r->env_len && write_all(fd, r->env, r->env_len) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void map_error(const struct privsep_exit *ex, struct request_error *e)
{
	switch (ex->error) {
	case PRIVSEP_ERR_INVALID:
		request_error_set(e, 400, "refused", "%s", ex->message);
		break;
	case PRIVSEP_ERR_CAPACITY:
		request_error_set(e, 503, "at_capacity", "%s", ex->message);
		break;
	case PRIVSEP_ERR_CWD:
		request_error_set(e, 404, "cwd_outside_workspace", "%s", ex->message);
		break;
	default:
		request_error_set(e, 500, "sandbox_failed", "%s", ex->message);
		break;
	}
}

static int stream_init(struct stream *s, int fd, const struct execute_env *env, int which, size_t cap)
{
	s->fd = fd;
	s->env = env;
	s->which = which;
	if (capture_init(&s->cap, cap) < 0)
		return -1;
	s->scrub = scrub_stream_new(env->scrub, stream_emit, s);
	return s->scrub ? 0 : -1;
}

static void stream_close(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Read what is there; at EOF flush the filter's held-back bytes. */
static void stream_read(struct stream *s, char *buf)
{
	ssize_t n = read(s->fd, buf, READ_CHUNK);
	if (n > 0) {
		scrub_stream_feed(s->scrub, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	scrub_stream_finish(s->scrub);
	stream_close(s);
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

/* Accept one connection on the run's proxy door and hand it to the proxy. */
static void proxy_accept(struct proxy *px, int listen_fd)
{
	int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (c >= 0)
		proxy_serve_fd(px, c); /* takes c, whatever happens */
}

int execute_run(const struct execute_env *env, const struct run_request *r, const char *run_id,
                int client_fd, struct run_result *res, struct request_error *e)
{
	struct privsep_run msg;
	union {
		struct privsep_header h;
		struct privsep_started started;
		struct privsep_exit ex;
	} in;
	int chan[2] = {-1, -1}, fds[4] = {-1, -1, -1, -1};
	struct stream out = {.fd = -1}, err = {.fd = -1};
	int stdin_fd = -1, proxy_fd = -1, rc = -1;
	struct proxy *px = NULL;
	int ctl = env->ctl;
	char *buf = NULL;

	memset(res, 0, sizeof(*res));
	res->chan = -1;
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
		return -1;
	}
	int send_fds[2] = {chan[1], payload};
	int sent = privsep_send(ctl, &msg, sizeof(msg), send_fds, 2);
	close(chan[1]);
	close(payload);
	if (sent < 0) {
		request_error_set(e, 500, "internal", "The launcher is not answering: %s.", strerror(errno));
		goto out;
	}
	ssize_t n = privsep_recv(chan[0], &in, sizeof(in), fds, 4);
	if (n >= (ssize_t)sizeof(in.h) && in.h.type == PRIVSEP_EXIT && n == (ssize_t)sizeof(in.ex) &&
	    privsep_header_check(&in.h, PRIVSEP_EXIT) == 0) {
		map_error(&in.ex, e);
		goto out;
	}
	/* Sent in order, absent ones skipped: out, err, [stdin], [proxy]. */
	bool want_proxy = r->profile->network == PROFILE_NETWORK_PROXY;
	size_t next = 2;
	if (n != (ssize_t)sizeof(in.started) || privsep_header_check(&in.h, PRIVSEP_STARTED) < 0 ||
	    in.started.has_stdin != r->has_stdin || in.started.has_proxy != want_proxy || fds[0] < 0 || fds[1] < 0) {
		request_error_set(e, 500, "internal", "The launcher sent an unexpected answer.");
		goto out;
	}
	res->uid = in.started.uid;
	if (r->has_stdin) {
		stdin_fd = fds[next];
		fds[next++] = -1;
	}
	if (want_proxy) {
		proxy_fd = fds[next];
		fds[next++] = -1;
		char perr[256];
		struct proxy_limits lim = {.daemon_port = env->daemon_port, .daemon_host = env->daemon_host};
		if (proxy_fd < 0 || !(px = proxy_new(r->profile, &lim, env->audit_fd, run_id, perr, sizeof(perr)))) {
			request_error_set(e, 500, "internal", "The run's egress proxy could not start.");
			goto out;
		}
	}
	if (stdin_fd < 0 && r->has_stdin) {
		request_error_set(e, 500, "internal", "The launcher sent no stdin pipe.");
		goto out;
	}
	if (stream_init(&out, fds[0], env, 0, r->profile->output_max) < 0 ||
	    stream_init(&err, fds[1], env, 1, r->profile->output_max) < 0 || !(buf = malloc(READ_CHUNK))) {
		fds[0] = fds[1] = -1;
		request_error_set(e, 500, "internal", "The front is out of memory.");
		goto out;
	}
	fds[0] = fds[1] = -1;
	if (stdin_fd >= 0)
		fcntl(stdin_fd, F_SETFL, O_NONBLOCK);
	size_t stdin_off = 0;
	if (stdin_fd >= 0 && r->stdin_len == 0) {
		close(stdin_fd);
		stdin_fd = -1;
	}

	/* Until both pipes reach EOF (every process of the run is gone, or the
	 * launcher killed them), or the client hangs up. */
	/* Until the exit record is in and both pipes are drained.  The client,
	 * the proxy door and stdin stay watched all along: a command that
	 * closes its own stdout and stderr must still die with its client. */
	bool got_exit = false;
	/* A streamed run's output leaves at least every LIVE_FLUSH_MS, line by
	 * line (scrub_stream_flush); a plain one only at the end. */
	bool live = env->output != NULL;
	struct timespec last_flush;
	clock_gettime(CLOCK_MONOTONIC, &last_flush);
	while (!got_exit || out.fd >= 0 || err.fd >= 0) {
		struct pollfd p[6] = {{.fd = out.fd, .events = POLLIN},
		                      {.fd = err.fd, .events = POLLIN},
		                      {.fd = stdin_fd, .events = POLLOUT},
		                      {.fd = client_fd, .events = POLLRDHUP},
		                      {.fd = proxy_fd, .events = POLLIN},
		                      {.fd = got_exit ? -1 : chan[0], .events = POLLIN}};
		/* After the exit record every writer is gone; the pipes' EOF is due
		 * at once, and a bound keeps a surprise from hanging the thread. */
		int n_ready = poll(p, 6, got_exit ? 2000 : live ? LIVE_FLUSH_MS : -1);
		if (n_ready < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (live) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long ms = (now.tv_sec - last_flush.tv_sec) * 1000 + (now.tv_nsec - last_flush.tv_nsec) / 1000000;
			if (ms >= LIVE_FLUSH_MS) {
				if (out.fd >= 0)
					scrub_stream_flush(out.scrub);
				if (err.fd >= 0)
					scrub_stream_flush(err.scrub);
				last_flush = now;
			}
			if (n_ready == 0 && !got_exit)
				continue;
		}
		if (n_ready == 0)
			break;
		if (p[3].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			/* Closing the run channel tells the supervisor to kill the run. */
			request_error_set(e, 499, "client_gone", "The client went away; the run was killed.");
			goto out;
		}
		if (p[4].revents & POLLIN)
			proxy_accept(px, proxy_fd);
		if (p[0].revents)
			stream_read(&out, buf);
		if (p[1].revents)
			stream_read(&err, buf);
		if (p[2].revents) {
			ssize_t w = write(stdin_fd, r->stdin_data + stdin_off, r->stdin_len - stdin_off);
			if (w > 0)
				stdin_off += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || stdin_off == r->stdin_len) {
				close(stdin_fd);
				stdin_fd = -1;
			}
		}
		if (p[5].revents) {
			n = privsep_recv(chan[0], &in, sizeof(in), fds, 0);
			if (n != (ssize_t)sizeof(in.ex) || privsep_header_check(&in.h, PRIVSEP_EXIT) < 0) {
				request_error_set(e, 500, "internal", "The run's supervisor ended without an exit record.");
				goto out;
			}
			got_exit = true;
		}
	}
	if (!got_exit) {
		request_error_set(e, 500, "internal", "The run's supervisor ended without an exit record.");
		goto out;
	}
	/* Whatever the pipes still held counts (their EOF may not have come). */
	if (out.fd >= 0) {
		scrub_stream_finish(out.scrub);
		stream_close(&out);
	}
	if (err.fd >= 0) {
		scrub_stream_finish(err.scrub);
		stream_close(&err);
	}
	if (in.ex.error != PRIVSEP_OK) {
		map_error(&in.ex, e);
		goto out;
	}
	res->exit_code = in.ex.exit_code;
	res->signal = in.ex.signal;
	res->timed_out = in.ex.timed_out != 0;
	res->cleanup_failed = in.ex.cleanup_failed != 0;
	res->disk_limited = in.ex.disk_limited != 0;
	if (res->disk_limited) {
		in.ex.message[sizeof(in.ex.message) - 1] = '\0'; /* from the launcher: terminate it ourselves */
		snprintf(res->message, sizeof(res->message), "%s", in.ex.message);
	}
	res->ms = in.ex.ms;
	res->usage = in.ex.usage;
	res->filtered = scrub_stream_count(out.scrub) + scrub_stream_count(err.scrub);
	res->out = stream_result(&out, &res->truncated, &res->utf8_replaced);
	res->err = stream_result(&err, &res->truncated, &res->utf8_replaced);
	if (!res->out || !res->err) {
		execute_result_free(res);
		request_error_set(e, 500, "internal", "The front is out of memory.");
		goto out;
	}
	char proxy_denied[PROXY_DENIALS_MAX][200];
	size_t n_proxy = proxy_denials(px, proxy_denied, PROXY_DENIALS_MAX);
	struct denial_facts facts = {
	    .profile = r->profile, .timeout_s = r->timeout_s, .timed_out = res->timed_out,
	    .truncated = res->truncated, .disk_limited = res->disk_limited, .disk_message = res->message,
	    .exit_code = res->signal ? -1 : res->exit_code,
	    .have_oom = (res->usage.have & PRIVSEP_USAGE_OOM) != 0, .oom_killed = res->usage.oom_killed != 0,
	    .have_pids_limited = (res->usage.have & PRIVSEP_USAGE_PIDS_LIMITED) != 0,
	    .pids_limited = res->usage.pids_limited != 0, .ex = &in.ex, .proxy = proxy_denied,
	    .n_proxy = n_proxy, .stderr_text = res->err, .stdout_text = res->out};
	denials_collect(&res->denials, &facts);
	rc = 0;
out:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (stdin_fd >= 0)
		close(stdin_fd);
	/* No more connections, then end the ones being served. */
	if (proxy_fd >= 0)
		close(proxy_fd);
	proxy_free(px);
	stream_close(&out);
	stream_close(&err);
	scrub_stream_free(out.scrub);
	scrub_stream_free(err.scrub);
	capture_free(&out.cap);
	capture_free(&err.cap);
	free(buf);
	/* Left to the caller: the supervisor still tears the run down after
	 * its exit record, and the launcher counts it until then. */
	if (rc == 0)
		res->chan = chan[0];
	else if (chan[0] >= 0)
		close(chan[0]); /* tells the supervisor to kill the run, if it still lives */
	return rc;
}

void execute_result_free(struct run_result *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}
