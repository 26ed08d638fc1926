/*
 * runflow.c - see runflow.h.
 */
#include "runflow.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "approval.h"
#include "audit.h"
#include "execute.h"
#include "http.h"
#include "jobs.h"
#include "live.h"
#include "log.h"
#include "loop.h"
#include "privsep.h"
#include "reply.h"
#include "request.h"
#include "runq.h"
#include "scrub.h"
#include "utf8.h"

enum step { STEP_APPROVAL, STEP_QUEUE, STEP_RUN, STEP_DONE };

struct runflow {
	struct runflow *prev, *next;  /* f->flows */
	struct front *f;
	struct MHD_Connection *c;     /* NULL once libmicrohttpd is done with the request */
	struct tls_peer peer;
	char method[8], url[64];
	bool as_job;
	enum step step;
	struct run_request r;
	char run_id[RUN_ID_LEN + 1];
	cJSON *line;                  /* the run's audit line */
	/* approval */
	struct approval *approval;
	struct approval_info info;
	cJSON *extra, *extra_raw;
	char *cmd_raw;
	/* queue and slot */
	struct runq_waiter waiter;
	bool has_slot;
	/* the run */
	struct execute *ex;
	struct live *live;            /* a stream's */
	struct job *job;              /* a job's */
	bool job_answered;            /* its 202 is set: later errors are the job's */
	bool job_killed;              /* DELETE: its end is audited as job_killed */
	/* the client */
	struct loop_watch w_client;
	bool suspended;
	/* the reply, for the access handler's next call */
	bool reply_ready, reply_close;
	unsigned status;
	char *body;
	const char *hname, *hvalue;
	struct MHD_Response *stream_resp;
};

static void new_run_id(char out[RUN_ID_LEN + 1])
{
	unsigned char b[RUN_ID_LEN / 2];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		abort(); /* no randomness: nothing safe to do */
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static cJSON *run_audit_line(const struct front *f, const struct run_request *r, const char *run_id)
{
	cJSON *a = cJSON_CreateObject();
	unsigned long n = 0;
	size_t len = 0;
	char *cmd = scrub_buffer(f->scrub, r->cmd, r->cmd_len, &len, &n);
	cJSON_AddStringToObject(a, "run_id", run_id);
	cJSON_AddStringToObject(a, "profile", r->profile->name);
	cJSON_AddStringToObject(a, "policy_hash", r->profile->policy_hash);
	bool replaced;
	char *clean = cmd ? utf8_clean(cmd, len, &replaced) : NULL;
	cJSON_AddStringToObject(a, "cmd", clean ? clean : "[unavailable]");
	/* The filtered text may hide parts of the command; the hash of the exact
	 * bytes says what ran (SPEC §15.2), in every line copied from this one. */
	char sha[65];
	audit_sha256_hex(r->cmd, r->cmd_len, sha);
	cJSON_AddStringToObject(a, "cmd_sha256", sha);
	cJSON_AddNumberToObject(a, "cmd_filtered_parts", (double)n);
	free(clean);
	free(cmd);
	cJSON_AddStringToObject(a, "cwd", r->cwd);
	return a;
}

/* ---- the end ------------------------------------------------------------ */

static void maybe_free(struct runflow *fl)
{
	if (fl->c || fl->step != STEP_DONE || fl->ex || fl->has_slot)
		return;
	struct front *f = fl->f;
	if (fl->prev)
		fl->prev->next = fl->next;
	else
		f->flows = fl->next;
	if (fl->next)
		fl->next->prev = fl->prev;
	loop_unwatch(f->loop, &fl->w_client);
	if (fl->live)
		live_release(fl->live);
	if (fl->stream_resp)
		MHD_destroy_response(fl->stream_resp);
	cJSON_Delete(fl->line);
	free(fl->body);
	request_free(&fl->r);
	free(fl);
}

/* This certificate's jobs that wait for a person or a slot. */
static unsigned waiting_jobs(const struct front *f, const char *fp)
{
	unsigned n = 0;
	for (const struct runflow *fl = f->flows; fl; fl = fl->next)
		n += fl->as_job && (fl->step == STEP_APPROVAL || fl->step == STEP_QUEUE) && strcmp(fl->peer.fp, fp) == 0;
	return n;
}

/* The slot goes back (to the next in the queue, or the pool). */
static void give_back_slot(struct runflow *fl)
{
	if (!fl->has_slot)
		return;
	fl->has_slot = false;
	fl->f->runs--;
	runq_release(fl->f->runq);
}

/* The run's audit line, once, as the request ends (http_audit takes it). */
static void audit_end(struct runflow *fl, unsigned status, const char *code)
{
	http_audit(fl->f, &fl->peer, fl->method, fl->url, status, code, fl->line);
	fl->line = NULL;
}

/* The reply is known: hand it to the access handler's next call (resume
 * the connection when it is suspended).  No more watching the client once
 * the run is over: the connection may carry the next request. */
static void set_reply(struct runflow *fl, unsigned status, char *body, const char *hname, const char *hvalue)
{
	fl->reply_ready = true;
	fl->status = status;
	fl->body = body;
	fl->hname = hname;
	fl->hvalue = hvalue;
	if (!fl->stream_resp)
		loop_unwatch(fl->f->loop, &fl->w_client);
	if (fl->suspended && fl->c) {
		fl->suspended = false;
		MHD_resume_connection(fl->c);
	}
}

/* The client went away: no reply, close the connection. */
static void set_gone(struct runflow *fl)
{
	fl->reply_close = true;
	set_reply(fl, 499, NULL, NULL, NULL);
}

/* A failed request: its error reply (none for 499: nobody listens) and
 * its audit line. */
static void fail(struct runflow *fl, const struct request_error *e)
{
	fl->step = STEP_DONE;
	audit_end(fl, (unsigned)e->status, e->code);
	if (fl->job) {
		/* The job's table entry keeps the error for GET (none when
		 * DELETE killed it: 499, output kept). */
		char *j = e->status == 499 ? NULL : reply_error_json(e, false);
		job_finish(fl->job, NULL, j ? j : (e->status == 499 ? NULL : "{}"));
		free(j);
	}
	if (fl->job_answered) { /* its 202 went out long ago: the error is the job's to tell */
		maybe_free(fl);
		return;
	}
	if (fl->live) { /* the stream began: its last event */
		char *j = reply_error_json(e, true);
		live_finish(fl->live, e->status == 499 ? NULL : j);
		free(j);
	} else if (e->status == 499) {
		set_gone(fl);
	} else {
		const char *hname, *hvalue;
		char *body = http_error_body(e, fl->url, &hname, &hvalue);
		set_reply(fl, (unsigned)e->status, body, hname, hvalue);
	}
	maybe_free(fl);
}

/* ---- the run ------------------------------------------------------------ */

static void on_output(void *arg, int which, const char *buf, size_t len)
{
	struct runflow *fl = arg;
	if (fl->live)
		live_output(fl->live, which, buf, len);
	else
		job_output(fl->job, which, buf, len);
}

static void on_pressure(void *arg, bool full)
{
	struct runflow *fl = arg;
	if (fl->ex)
		execute_pause(fl->ex, full);
}

static void on_finished(void *arg, int rc, struct run_result *res, const struct request_error *e)
{
	struct runflow *fl = arg;
	struct front *f = fl->f;
	fl->ex = NULL;
	if (rc < 0) {
		fail(fl, e);
		return;
	}
	bool plain = !fl->live && !fl->job;
	char *body = reply_body(res, &fl->r, fl->run_id, !plain);
	reply_add_result_to_audit(fl->line, res);
	execute_result_free(res);
	if (!body) {
		struct request_error oom;
		request_error_set(&oom, 500, "internal", "The reply could not be built.");
		fail(fl, &oom);
		return;
	}
	fl->step = STEP_DONE;
	if (fl->job_killed)
		audit_end(fl, 499, "job_killed");
	else
		audit_end(fl, 200, NULL);
	if (fl->live) {
		live_finish(fl->live, body);
		free(body);
		loop_unwatch(f->loop, &fl->w_client);
	} else if (fl->job) {
		job_finish(fl->job, body, NULL);
		free(body);
	} else {
		set_reply(fl, 200, body, NULL, NULL);
	}
	maybe_free(fl);
}

static void on_released(void *arg)
{
	struct runflow *fl = arg;
	give_back_slot(fl);
	maybe_free(fl);
}

/* DELETE /v0/jobs/ID (jobs_kill): the run is killed, its output kept.  A
 * running command's end then comes as any run's (on_finished): what it
 * wrote up to the kill, and the exit fields and usage of the kill. */
static void on_job_killed(void *arg)
{
	struct runflow *fl = arg;
	struct request_error e;
	fl->job_killed = true;
	if (execute_kill(fl->ex) == 0)
		return;
	execute_abort(fl->ex); /* the supervisor kills it; the slot comes back with on_released */
	fl->ex = NULL;
	request_error_set(&e, 499, "job_killed", "The job was killed (DELETE).");
	fail(fl, &e);
}

/* A job: its table entry, which DELETE can kill. */
static int add_job(struct runflow *fl, struct request_error *e)
{
	struct front *f = fl->f;
	char why[200] = "";
	fl->job = jobs_add(f->jobs, fl->run_id, fl->peer.fp, fl->peer.cn, fl->r.profile->name,
	                   fl->r.profile->output_max, fl->r.timeout_s, on_job_killed, fl, why, sizeof(why));
	if (!fl->job) {
		if (why[0] && strstr(why, "max_jobs"))
			request_error_set(e, 429, "too_many_jobs", "%s", why);
		else
			request_error_set(e, 503, "at_capacity", "%s", why[0] ? why : "The job could not start; retry in a moment.");
		return -1;
	}
	cJSON_AddBoolToObject(fl->line, "job", true);
	return 0;
}

/* The slot is ours: the audit line, then the run. */
static void start_run(struct runflow *fl)
{
	struct front *f = fl->f;
	struct request_error e;
	fl->step = STEP_RUN;
	f->runs++;
	fl->has_slot = true;
	/* The job's entry first: a run the table refuses never starts, so it
	 * leaves no run_started line. */
	if (fl->as_job && add_job(fl, &e) < 0) {
		give_back_slot(fl);
		fail(fl, &e);
		return;
	}
	/* The run is on record before it starts, so a crash mid-run still
	 * leaves a trace; a log that cannot take the line means no run. */
	cJSON *started = cJSON_Duplicate(fl->line, true);
	cJSON_AddStringToObject(started, "event", "run_started");
	cJSON_AddStringToObject(started, "peer_cn", fl->peer.cn);
	cJSON_AddStringToObject(started, "peer_role", tls_role_name(fl->peer.role));
	cJSON_AddNumberToObject(started, "timeout_s", fl->r.timeout_s);
	int logged = audit_write(f->audit_fd, started);
	cJSON_Delete(started);
	if (logged < 0) {
		log_warn("the audit log could not be written (%s): run refused", strerror(errno));
		if (fl->job) { /* never started, never answered: no job to keep */
			jobs_drop(f->jobs, fl->job);
			fl->job = NULL;
		}
		give_back_slot(fl);
		request_error_set(&e, 503, "audit_unavailable",
		                  "The audit log cannot be written (is its disk full?); runs are refused until it can.");
		fail(fl, &e);
		return;
	}
	if (fl->r.stream) {
		fl->live = live_new(on_pressure, fl);
		fl->stream_resp = fl->live ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, live_read,
		                                                               fl->live, live_gone)
		                           : NULL;
		if (!fl->stream_resp) {
			if (fl->live) {
				live_release(fl->live);
				live_release(fl->live);
				fl->live = NULL;
			}
			give_back_slot(fl);
			request_error_set(&e, 500, "internal", "The stream could not be started.");
			fail(fl, &e);
			return;
		}
		MHD_add_response_header(fl->stream_resp, "Content-Type", "application/x-ndjson");
		MHD_add_response_header(fl->stream_resp, "Cache-Control", "no-store");
	}
	struct execute_env env = {.loop = f->loop, .ctl = f->ctl, .scrub = f->scrub, .audit_fd = f->audit_fd,
	                          .daemon_host = f->cfg->listen_host, .daemon_port = f->cfg->listen_port};
	struct execute_hooks hooks = {.output = fl->live || fl->job ? on_output : NULL,
	                              .finished = on_finished, .released = on_released, .arg = fl};
	fl->ex = execute_start(&env, &fl->r, fl->run_id, &hooks, &e);
	if (!fl->ex) {
		give_back_slot(fl);
		if (fl->stream_resp) { /* never queued: the stream's error is an error reply */
			MHD_destroy_response(fl->stream_resp); /* calls live_gone */
			fl->stream_resp = NULL;
			live_release(fl->live);
			fl->live = NULL;
		}
		fail(fl, &e);
		return;
	}
	if (fl->job) {
		char body[96];
		snprintf(body, sizeof(body), "{\"job_id\":\"%s\",\"state\":\"running\"}", fl->run_id);
		loop_unwatch(f->loop, &fl->w_client); /* a job does not die with its client */
		fl->job_answered = true;
		set_reply(fl, 202, strdup(body), NULL, NULL);
	} else if (fl->stream_resp) {
		live_attach(fl->live, fl->c);
		set_reply(fl, 200, NULL, NULL, NULL);
	}
}

/* ---- the queue ---------------------------------------------------------- */

static void queue_refused(struct runflow *fl, enum runq_result q, unsigned ahead)
{
	struct front *f = fl->f;
	struct request_error e;
	bool approved = fl->r.profile->approval == PROFILE_APPROVAL_EACH;
	unsigned wait_s = f->cfg->queue_timeout_s;
	if (q == RUNQ_FULL) {
		request_error_set(&e, 503, "at_capacity",
		                  "All %u run slots are busy and %u request(s) wait already (queue_max)%s; retry in a moment.",
		                  f->cfg->max_runs, f->cfg->queue_max, approved ? "; the approval is spent" : "");
	} else {
		log_info("run %s: no run slot came free within %u s (queue_timeout_s; %u ahead on arrival)", fl->run_id,
		         wait_s, ahead);
		request_error_set(&e, 503, "at_capacity",
		                  "All %u run slots stayed busy for the %u s this request waited in the queue%s; retry in a moment.",
		                  f->cfg->max_runs, wait_s, approved ? "; the approval is spent, ask again" : "");
	}
	fail(fl, &e);
}

static void on_slot(void *arg, enum runq_result q)
{
	struct runflow *fl = arg;
	if (q == RUNQ_OK)
		start_run(fl);
	else
		queue_refused(fl, q, 0);
}

/* A slot in FIFO order (runq.h), waiting up to queue_timeout_s. */
static void queue_for_slot(struct runflow *fl)
{
	unsigned ahead = 0;
	fl->step = STEP_QUEUE;
	enum runq_result q = runq_take(fl->f->runq, &fl->waiter, fl->f->cfg->queue_timeout_s * 1000u, on_slot, fl,
	                               &ahead);
	if (q == RUNQ_OK)
		start_run(fl);
	else if (q != RUNQ_WAITING)
		queue_refused(fl, q, ahead);
}

/* ---- the approval ------------------------------------------------------- */

/* The rest of a run a person must see to decide: stdin (size, hash and a
 * preview) and the extra environment; filtered, or exact when `raw` (the
 * person's view). */
#define APPROVAL_STDIN_PREVIEW 4096
/* `buf` as the person (`raw`) or another role sees it, at most `max`
 * bytes of it.  Filtered whole, then cut: a secret cut first would be no
 * match, and its head would go out (review s37 front 3). */
static char *approval_text(const struct front *f, const char *buf, size_t len, size_t max, bool raw)
{
	unsigned long n;
	size_t flen;
	bool replaced;
	if (raw)
		return utf8_clean(buf, len < max ? len : max, &replaced);
	char *filtered = scrub_buffer(f->scrub, buf, len, &flen, &n);
	char *clean = filtered ? utf8_clean(filtered, utf8_cut(filtered, flen, max), &replaced) : NULL;
	free(filtered);
	return clean;
}

static cJSON *approval_extra(const struct front *f, const struct run_request *r, bool raw)
{
	cJSON *x = cJSON_CreateObject();

	cJSON_AddNumberToObject(x, "stdin_bytes", (double)r->stdin_len);
	if (r->has_stdin) {
		char sha[65];
		audit_sha256_hex(r->stdin_data, r->stdin_len, sha);
		cJSON_AddStringToObject(x, "stdin_sha256", sha);
		char *clean = approval_text(f, r->stdin_data, r->stdin_len, APPROVAL_STDIN_PREVIEW, raw);
		cJSON_AddStringToObject(x, "stdin", clean ? clean : "[unavailable]");
		free(clean);
	}
	cJSON *env = cJSON_AddArrayToObject(x, "env");
	for (size_t off = 0; off < r->env_len; off += strlen(r->env + off) + 1) {
		char *clean = approval_text(f, r->env + off, strlen(r->env + off), SIZE_MAX, raw);
		cJSON_AddItemToArray(env, cJSON_CreateString(clean ? clean : "[unavailable]"));
		free(clean);
	}
	return x;
}

/* What the person saw leaves memory: the exact stdin, env and command. */
static void approval_forget(struct runflow *fl)
{
	cJSON_Delete(fl->extra);
	fl->extra = NULL;
	if (fl->extra_raw)
		for (cJSON *it = fl->extra_raw->child; it; it = it->next)
			if (cJSON_IsString(it) && it->valuestring)
				explicit_bzero(it->valuestring, strlen(it->valuestring));
	cJSON_Delete(fl->extra_raw);
	fl->extra_raw = NULL;
	if (fl->cmd_raw)
		explicit_bzero(fl->cmd_raw, strlen(fl->cmd_raw));
	free(fl->cmd_raw);
	fl->cmd_raw = NULL;
	fl->approval = NULL;
}

static void on_decided(void *arg, enum approval_outcome out)
{
	struct runflow *fl = arg;
	struct request_error e;
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(fl->line, "approval_id"));
	approval_forget(fl);
	switch (out) {
	case APPROVAL_ALLOWED:
		cJSON_AddStringToObject(fl->line, "approval", "allowed");
		queue_for_slot(fl);
		return;
	case APPROVAL_DENIED:
		request_error_set(&e, 403, "approval_denied", "A person denied this run (approval %s).", id);
		break;
	case APPROVAL_EXPIRED:
		request_error_set(&e, 403, "approval_expired", "No person approved this run within %u seconds (approval %s).",
		                  fl->f->cfg->approval_timeout_s, id);
		break;
	}
	fail(fl, &e);
}

/* Park an approval-"each" run until a person decides (SPEC §9). */
static void wait_for_person(struct runflow *fl)
{
	struct front *f = fl->f;
	struct request_error e;
	char id[33];
	fl->step = STEP_APPROVAL;
	fl->extra = approval_extra(f, &fl->r, false);
	fl->extra_raw = approval_extra(f, &fl->r, true);
	const char *rid = cJSON_GetStringValue(cJSON_GetObjectItem(fl->line, "request_id"));
	if (rid) /* the client finds its own approval by it (client/run.c) */
		cJSON_AddStringToObject(fl->extra, "request_id", rid), cJSON_AddStringToObject(fl->extra_raw, "request_id", rid);
	bool invalid = false;
	fl->cmd_raw = utf8_clean(fl->r.cmd, fl->r.cmd_len, &invalid);
	fl->info = (struct approval_info){
		.requester_cn = fl->peer.cn, .requester_fp = fl->peer.fp, .requester_role = tls_role_name(fl->peer.role),
		.request_id = rid,
		.profile = fl->r.profile->name, .cmd = cJSON_GetStringValue(cJSON_GetObjectItem(fl->line, "cmd")),
		.cmd_raw = fl->cmd_raw ? fl->cmd_raw : "[unavailable]",
		.cmd_sha256 = cJSON_GetStringValue(cJSON_GetObjectItem(fl->line, "cmd_sha256")),
		.cmd_filtered = (unsigned long)cJSON_GetNumberValue(cJSON_GetObjectItem(fl->line, "cmd_filtered_parts")),
		.cmd_invalid_utf8 = invalid, .cwd = fl->r.cwd, .timeout_s = fl->r.timeout_s, .extra = fl->extra,
		.extra_raw = fl->extra_raw,
	};
	fl->approval = approvals_add(f->approvals, &fl->info, f->cfg->approval_timeout_s, id, on_decided, fl);
	if (!fl->approval) {
		int why = errno;
		approval_forget(fl);
		if (why == EEXIST)
			request_error_set(&e, 409, "duplicate_request_id",
			                  "A run waiting for approval carries this Sharness-Request-Id already; send a "
			                  "fresh one for each request.");
		else if (why == EDQUOT)
			request_error_set(&e, 429, "too_many_approvals",
			                  "A quarter of the places for runs waiting for approval (%u) hold this "
			                  "certificate's runs already; wait for a person to decide them.",
			                  f->cfg->max_runs);
		else
			request_error_set(&e, 503, "at_capacity", "Too many runs are waiting for approval; retry later.");
		fail(fl, &e);
		return;
	}
	cJSON_AddStringToObject(fl->line, "approval_id", id);
}

/* ---- the client --------------------------------------------------------- */

/* Leave wherever the request is: the approval withdrawn, the queue left,
 * the run killed.  A run's slot goes back once its supervisor is gone
 * (on_released): the launcher counts the run until then. */
static void leave(struct runflow *fl, const struct request_error *e)
{
	struct front *f = fl->f;
	if (fl->approval) {
		approvals_withdraw(f->approvals, fl->approval);
		approval_forget(fl);
	}
	if (fl->step == STEP_QUEUE)
		runq_cancel(f->runq, &fl->waiter);
	if (fl->ex) {
		execute_abort(fl->ex);
		fl->ex = NULL;
	} else {
		give_back_slot(fl);
	}
	fail(fl, e);
}

static void on_client_gone(struct loop_watch *w, uint32_t revents)
{
	struct runflow *fl = w->arg;
	struct request_error e;
	(void)revents;
	loop_unwatch(fl->f->loop, &fl->w_client);
	switch (fl->step) {
	case STEP_APPROVAL:
		request_error_set(&e, 499, "approval_withdrawn", "The requester went away; the approval was withdrawn.");
		break;
	case STEP_QUEUE:
		request_error_set(&e, 499, "client_gone", "The client went away while its run waited for a slot.");
		break;
	case STEP_RUN:
		request_error_set(&e, 499, "client_gone", "The client went away; the run was killed.");
		break;
	case STEP_DONE:
		return;
	}
	leave(fl, &e);
}

/* ---- libmicrohttpd's side ----------------------------------------------- */

/* End the access handler's call: queue the reply when it is ready, else
 * leave the connection suspended until it is. */
static enum MHD_Result answer(struct runflow *fl, struct MHD_Connection *c)
{
	if (!fl->reply_ready) {
		if (!fl->suspended) {
			fl->suspended = true;
			MHD_suspend_connection(c);
		}
		return MHD_YES;
	}
	fl->reply_ready = false;
	if (fl->reply_close)
		return MHD_NO; /* nobody is listening; close */
	if (fl->stream_resp) {
		http_keep_alive(c, fl->stream_resp);
		enum MHD_Result r = MHD_queue_response(c, 200, fl->stream_resp);
		MHD_destroy_response(fl->stream_resp); /* libmicrohttpd holds it now */
		fl->stream_resp = NULL;
		return r;
	}
	enum MHD_Result r = http_respond(c, fl->status, fl->body ? fl->body : "{}", fl->hname, fl->hvalue);
	free(fl->body);
	fl->body = NULL;
	return r;
}

enum MHD_Result runflow_request(struct front *f, struct MHD_Connection *c, const struct tls_peer *peer,
                                const char *method, const char *url, const char *body, size_t len, bool as_job,
                                struct runflow **flow)
{
	struct request_error e;
	struct run_request r;

	*flow = NULL;
	if (request_parse_run(body ? body : "", len, f->cfg, f->profiles, &r, &e) < 0)
		return http_respond_error(f, c, peer, method, url, &e, NULL);
	if (as_job && r.stream) {
		request_free(&r);
		request_error_set(&e, 400, "bad_field",
		                  "Field 'stream' is for POST /v0/run; a job's output is read with GET /v0/jobs/ID/output.");
		return http_respond_error(f, c, peer, method, url, &e, NULL);
	}
	/* max_jobs before any wait: counting this certificate's jobs that wait
	 * for a person or a slot, so none of them meets it after its wait. */
	char why[240] = "";
	if (as_job && !jobs_may_start(f->jobs, peer->fp, waiting_jobs(f, peer->fp), why, sizeof(why))) {
		request_free(&r);
		request_error_set(&e, 429, "too_many_jobs", "%s", why);
		return http_respond_error(f, c, peer, method, url, &e, NULL);
	}
	bool gated = r.profile->approval == PROFILE_APPROVAL_EACH;
	/* A person is not asked about a run the queue would refuse now; an
	 * approved run then queues like any other (SPEC §15.3). */
	if (gated && runq_full(f->runq)) {
		char run_id[RUN_ID_LEN + 1];
		new_run_id(run_id);
		cJSON *line = run_audit_line(f, &r, run_id);
		request_free(&r);
		request_error_set(&e, 503, "at_capacity", "All %u run slots are busy and the queue is full; retry in a moment.",
		                  f->cfg->max_runs);
		return http_respond_error(f, c, peer, method, url, &e, line);
	}
	struct runflow *fl = calloc(1, sizeof(*fl));
	if (!fl) {
		request_free(&r);
		request_error_set(&e, 500, "internal", "The front is out of memory.");
		return http_respond_error(f, c, peer, method, url, &e, NULL);
	}
	fl->f = f;
	fl->c = c;
	fl->peer = *peer;
	snprintf(fl->method, sizeof(fl->method), "%s", method);
	snprintf(fl->url, sizeof(fl->url), "%s", url);
	fl->as_job = as_job;
	fl->r = r;
	loop_watch_init(&fl->w_client);
	new_run_id(fl->run_id);
	fl->line = run_audit_line(f, &fl->r, fl->run_id);
	/* The client's nonce for this request (32 hex digits, else ignored):
	 * shown in the approval record so the client can name its approval. */
	const char *rid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sharness-Request-Id");
	if (rid && strlen(rid) == 32 && strspn(rid, "0123456789abcdef") == 32)
		cJSON_AddStringToObject(fl->line, "request_id", rid);
	fl->next = f->flows;
	if (f->flows)
		f->flows->prev = fl;
	f->flows = fl;
	*flow = fl;
	/* A hang-up ends whatever the request waits for. */
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || loop_watch(f->loop, &fl->w_client, ci->connect_fd, EPOLLRDHUP, on_client_gone, fl) < 0) {
		request_error_set(&e, 500, "internal", "The front could not watch the connection.");
		fail(fl, &e);
		return answer(fl, c);
	}
	if (gated)
		wait_for_person(fl);
	else
		queue_for_slot(fl);
	return answer(fl, c);
}

enum MHD_Result runflow_resumed(struct runflow *fl, struct MHD_Connection *c)
{
	return answer(fl, c);
}

void runflow_completed(struct runflow *fl)
{
	struct request_error e;
	struct front *f = fl->f;
	loop_unwatch(f->loop, &fl->w_client);
	fl->suspended = false;
	if (fl->live)
		live_attach(fl->live, NULL); /* nothing to resume any more */
	bool going = fl->step != STEP_DONE && !(fl->step == STEP_RUN && fl->job);
	if (going && fl->live && live_lost(fl->live)) {
		request_error_set(&e, 500, "internal", "The front ran out of memory for this stream's output; the run was killed.");
		leave(fl, &e);
	} else if (going) {
		request_error_set(&e, 499, "client_gone", "The client went away; the run was killed.");
		leave(fl, &e);
	}
	fl->c = NULL;
	maybe_free(fl);
}

void runflow_stop_all(struct front *f, bool runs_too)
{
	struct request_error e;
	request_error_set(&e, 503, "at_capacity", "The daemon is stopping; retry once it is back.");
	for (struct runflow *fl = f->flows, *next; fl; fl = next) {
		next = fl->next;
		bool waiting = fl->step == STEP_APPROVAL || fl->step == STEP_QUEUE;
		if (waiting || (runs_too && fl->step == STEP_RUN))
			leave(fl, &e);
	}
}
