/*
 * run.c - POST /v0/run request and exit-record mapping (see run.h).
 */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "buf.h"
#include "monotime.h"

/*
 * Approvals in sight (SPEC §15.3): the request carries a nonce of ours in
 * Sharness-Request-Id, which the daemon copies into the approval record.
 * When no reply has ended WATCH_FIRST_MS after the request went out, a
 * watcher thread looks for the nonce in GET /v0/approvals and prints the
 * approval's id at once.  The daemon asks a person before the run queues
 * for a slot, so the record exists within milliseconds of the body's
 * arrival: a few looks (WATCH_LOOKS, spaced out) suffice.  A run that ends
 * first, nearly every run, never starts the thread (a thread's start and
 * end were a tenth of a fresh client's time: docs/bench.md).
 */
#define WATCH_FIRST_MS 300
#define WATCH_LOOKS 3

struct watch {
	const struct conf *c;
	char nonce[33];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	bool started; /* the thread runs: join it */
	pthread_t tid;
};

static void deadline_in(struct timespec *t, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* Sleeps ms unless the run ended; true when it did. */
static bool watch_ended(struct watch *w, long ms)
{
	struct timespec t;
	deadline_in(&t, ms);
	pthread_mutex_lock(&w->mu);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &t) == 0)
		;
	bool done = w->done;
	pthread_mutex_unlock(&w->mu);
	return done;
}

/* Looks at once (WATCH_FIRST_MS have passed), then 3 and 9 times later. */
static void *watch_main(void *arg)
{
	struct watch *w = arg;
	char err[512];
	long wait_ms = WATCH_FIRST_MS;
	for (int look = 0; look < WATCH_LOOKS; look++, wait_ms *= 3) {
		if (look > 0 && watch_ended(w, wait_ms))
			break;
		json_t *list = NULL, *p;
		int status;
		size_t i;
		if (api_call(w->c, "GET", "/v0/approvals", NULL, &list, &status, err, sizeof err) < 0)
			continue;
		json_array_foreach(json_object_get(list, "approvals"), i, p) {
			const char *rid = json_string_value(json_object_get(p, "request_id"));
			const char *id = json_string_value(json_object_get(p, "id"));
			if (!rid || !id || strcmp(rid, w->nonce) != 0 || strspn(id, "0123456789abcdef") != strlen(id))
				continue;
			fprintf(stderr, "waiting for a person's approval: %s (sharness-client approve %s)\n", id, id);
			fflush(stderr);
			json_decref(list);
			return NULL;
		}
		json_decref(list);
	}
	return NULL;
}

/* http.h's on_slow: the reply is late, so perhaps a person is asked. */
static void watch_start(void *arg)
{
	struct watch *w = arg;
	if (!w->started)
		w->started = pthread_create(&w->tid, NULL, watch_main, w) == 0;
}

static void watch_stop(struct watch *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->tid, NULL);
}

/*
 * A 503 (every slot busy and the daemon's queue full, or its queue wait ran
 * out) is retried within SHARNESS_RETRY_S seconds (default RETRY_DEFAULT_S,
 * 0 = never): each wait is the reply's Retry-After or the backoff, whichever
 * is longer; the backoff doubles from 0.5 s up to RETRY_STEP_MAX_MS, with up
 * to a fifth of jitter so that many clients do not come back in step.
 */
#define RETRY_DEFAULT_S 60
#define RETRY_MAX_S 3600
#define RETRY_STEP_MAX_MS 8000

static long retry_window_s(void)
{
	const char *v = getenv("SHARNESS_RETRY_S");
	char *end;
	if (!v || !*v)
		return RETRY_DEFAULT_S;
	errno = 0;
	long s = strtol(v, &end, 10);
	if (errno || *end || s < 0 || s > RETRY_MAX_S)
		return RETRY_DEFAULT_S;
	return s;
}

/* A streamed reply: NDJSON lines, each one event (SPEC §15.3). */
struct events {
	const struct run_opts *o;
	struct buf line;
	json_t *exit;      /* the last event, the reply */
	json_t *error;     /* {"event":"error"}'s error object */
	bool bad;
};

static void one_event(struct events *ev, const char *text, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_ALLOW_NUL, &je);
	const char *kind = json_string_value(json_object_get(j, "event"));
	if (!kind) {
		ev->bad = true;
	} else if (strcmp(kind, "stdout") == 0 || strcmp(kind, "stderr") == 0) {
		json_t *d = json_object_get(j, "data");
		if (json_is_string(d) && ev->o->on_output)
			ev->o->on_output(ev->o->on_output_arg, kind[3] == 'o' ? 1 : 2, json_string_value(d),
			                 json_string_length(d));
	} else if (strcmp(kind, "exit") == 0) {
		json_decref(ev->exit);
		ev->exit = json_incref(j);
	} else if (strcmp(kind, "error") == 0) {
		json_decref(ev->error);
		ev->error = json_incref(json_object_get(j, "error"));
	}
	json_decref(j);
}

static void on_ndjson(void *arg, const char *buf, size_t len)
{
	struct events *ev = arg;
	if (buf_append(&ev->line, buf, len) < 0) {
		ev->bad = true;
		return;
	}
	size_t start = 0;
	for (;;) {
		char *nl = memchr(ev->line.data + start, '\n', ev->line.len - start);
		if (!nl)
			break;
		size_t end = (size_t)(nl - ev->line.data);
		if (end > start)
			one_event(ev, ev->line.data + start, end - start);
		start = end + 1;
	}
	memmove(ev->line.data, ev->line.data + start, ev->line.len - start);
	ev->line.len -= start;
}

/* One POST /v0/run, plain or streamed. */
static int post_run(const struct conf *c, json_t *req, struct api_extra *x, const struct run_opts *o,
		    json_t **reply, int *status, char *err, size_t errlen)
{
	x->on_data = NULL;
	if (!o->on_output)
		return api_call_ex(c, "POST", o->path ? o->path : "/v0/run", req, x, reply, status, err, errlen);
	struct events ev = {.o = o, .line = {.max = 64u << 20}};
	x->on_data = on_ndjson;
	x->arg = &ev;
	int rc = api_call_ex(c, "POST", "/v0/run", req, x, reply, status, err, errlen);
	if (rc == 0) {
		if (ev.exit) {
			*reply = ev.exit;
			ev.exit = NULL;
		} else if (ev.error) {
			const char *m = json_string_value(json_object_get(ev.error, "message"));
			const char *code = json_string_value(json_object_get(ev.error, "code"));
			snprintf(err, errlen, "%s (HTTP %lld %s)", m ? m : "the run failed",
				 (long long)json_integer_value(json_object_get(ev.error, "status")), code ? code : "error");
			rc = -1;
		} else {
			snprintf(err, errlen, "sharnessd at %s ended the stream without an exit event%s", c->url,
				 ev.bad ? " (and sent lines that are not events)" : "");
			rc = -1;
		}
	}
	json_decref(ev.exit);
	json_decref(ev.error);
	buf_free(&ev.line);
	return rc;
}

static int call_with_retry(const struct conf *c, json_t *req, const struct run_opts *o, json_t **reply, char *err,
			   size_t errlen)
{
	struct watch w = {.c = c};
	unsigned char rnd[16];
	char hdr[64] = "";
	struct api_extra x = {0};
	if (getrandom(rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd) {
		for (size_t i = 0; i < sizeof rnd; i++)
			snprintf(w.nonce + 2 * i, 3, "%02x", rnd[i]);
		snprintf(hdr, sizeof hdr, "Sharness-Request-Id: %s\r\n", w.nonce);
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&w.cv, &ca);
		pthread_condattr_destroy(&ca);
		pthread_mutex_init(&w.mu, NULL);
		x.headers = hdr;
		x.on_slow = watch_start;
		x.slow_arg = &w;
		x.slow_ms = WATCH_FIRST_MS;
	}
	int64_t end = monotime_ms() + (int64_t)retry_window_s() * 1000;
	long step_ms = 500;
	int rc, status;
	for (;;) {
		rc = post_run(c, req, &x, o, reply, &status, err, errlen);
		if (rc == 0 || status != 503)
			break;
		long ra = x.retry_after;
		long wait_ms = ra > 0 ? (ra > RETRY_MAX_S ? RETRY_MAX_S : ra) * 1000L : 0;
		if (wait_ms < step_ms)
			wait_ms = step_ms;
		wait_ms += (long)(random() % (wait_ms / 5 + 1));
		if (monotime_ms() + wait_ms > end)
			break; /* err holds the daemon's 503 sentence */
		struct timespec t = {.tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1000000L};
		while (nanosleep(&t, &t) < 0 && errno == EINTR)
			;
		step_ms = step_ms * 2 > RETRY_STEP_MAX_MS ? RETRY_STEP_MAX_MS : step_ms * 2;
	}
	watch_stop(&w);
	if (hdr[0]) {
		pthread_cond_destroy(&w.cv);
		pthread_mutex_destroy(&w.mu);
	}
	return rc;
}

int run_call(const struct conf *c, const char *cmd, size_t len, const struct run_opts *o, json_t **reply,
	     char *err, size_t errlen)
{
	char cwdbuf[PATH_MAX];
	int rc = -1;
	*reply = NULL;
	if (len == 0) {
		snprintf(err, errlen, "no command given: put the command after --");
		return -1;
	}
	if (len > RUN_MAX_CMD) {
		snprintf(err, errlen, "the command is %zu bytes, more than the %u KiB sharnessd accepts", len,
			 RUN_MAX_CMD >> 10);
		return -1;
	}
	const char *cwd = o->cwd;
	if (!cwd) {
		cwd = getcwd(cwdbuf, sizeof cwdbuf);
		if (!cwd) {
			snprintf(err, errlen, "cannot find the current directory: %s (pass --cwd)", strerror(errno));
			return -1;
		}
	}
	json_t *req = json_object();
	json_t *jcmd = json_stringn(cmd, len);
	json_t *jcwd = json_string(cwd);
	if (!req || !jcmd || !jcwd) {
		json_decref(jcmd);
		json_decref(jcwd);
		snprintf(err, errlen, "%s is not valid UTF-8 text, which the JSON API requires",
			 !jcmd ? "the command" : "the working directory");
		goto out;
	}
	json_object_set_new(req, "cmd", jcmd);
	json_object_set_new(req, "cwd", jcwd);
	if (o->profile)
		json_object_set_new(req, "profile", json_string(o->profile));
	if (o->timeout_s > 0)
		json_object_set_new(req, "timeout_s", json_integer(o->timeout_s));
	if (o->stdin_data) {
		json_t *s = json_stringn(o->stdin_data, o->stdin_len);
		if (!s) {
			snprintf(err, errlen, "stdin is not valid UTF-8 text, which the JSON API requires");
			goto out;
		}
		json_object_set_new(req, "stdin", s);
	}
	if (o->env)
		json_object_set(req, "env", o->env);
	if (o->on_output)
		json_object_set_new(req, "stream", json_true());
	rc = call_with_retry(c, req, o, reply, err, errlen);
out:
	json_decref(req);
	return rc;
}

static int signo_of(json_t *sig)
{
	if (json_is_integer(sig))
		return (int)json_integer_value(sig);
	const char *name = json_string_value(sig);
	if (!name)
		return -1;
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (int i = 1; i < NSIG; i++) {
		const char *abbrev = sigabbrev_np(i);
		if (abbrev && strcasecmp(abbrev, name) == 0)
			return i;
	}
	return -1;
}

int run_exit_code(json_t *reply, char *err, size_t errlen)
{
	json_t *ex = json_object_get(reply, "exit");
	if (json_is_true(json_object_get(reply, "timed_out")))
		return RUN_EXIT_TIMEOUT;
	if (json_is_integer(ex)) {
		json_int_t v = json_integer_value(ex);
		if (v >= 0 && v <= 255)
			return (int)v;
	}
	json_t *sig = json_object_get(reply, "signal");
	if (sig && !json_is_null(sig)) {
		int s = signo_of(sig);
		if (s > 0 && s < 128)
			return 128 + s;
		snprintf(err, errlen, "sharnessd reported an unknown signal for the command");
		return RUN_EXIT_ERROR;
	}
	snprintf(err, errlen, "sharnessd's reply carries no exit status");
	return RUN_EXIT_ERROR;
}

const char *run_stream(json_t *reply, const char *name, size_t *len)
{
	json_t *s = json_object_get(reply, name);
	if (!json_is_string(s)) {
		*len = 0;
		return "";
	}
	*len = json_string_length(s);
	return json_string_value(s);
}

int run_denial_line(json_t *reply, size_t i, char *line, size_t len)
{
	json_t *d = json_array_get(json_object_get(reply, "denials"), i);
	if (!json_is_object(d))
		return -1;
	const char *lock = json_string_value(json_object_get(d, "lock"));
	const char *detail = json_string_value(json_object_get(d, "detail"));
	const char *hint = json_string_value(json_object_get(d, "hint"));
	snprintf(line, len, "sharness: %s%s: %s; %s", lock ? lock : "?",
	         json_is_true(json_object_get(d, "inferred")) ? " (inferred from the output)" : "", detail ? detail : "",
	         hint ? hint : "");
	/* One line: the daemon's strings are escaped JSON, but a newline or a
	 * control character must not reach the terminal either. */
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	return 0;
}
