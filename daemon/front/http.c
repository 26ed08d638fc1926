/*
 * http.c - the HTTPS API (SPEC §3) on libmicrohttpd, one thread per
 * connection: a run blocks its connection's thread, and the connection
 * limit bounds the threads.
 *
 * Order per request (the access handler's first call): verify the client
 * certificate, route, check the role, check the content type and declared
 * length; only then is a body accepted, and never more than max_body.
 */
#include "front.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "approval.h"
#include "audit.h"
#include "capture.h"
#include "connguard.h"
#include "utf8.h"
#include "execute.h"
#include "jobs.h"
#include "live.h"
#include "log.h"
#include "privsep.h"
#include "request.h"
#include "runq.h"
#include "scrub.h"
#include "tls.h"

enum route {
	ROUTE_NONE, ROUTE_RUN, ROUTE_PROFILES, ROUTE_POLICY, ROUTE_APPROVALS, ROUTE_DECIDE,
	ROUTE_JOB_START, ROUTE_JOB_LIST, ROUTE_JOB_GET, ROUTE_JOB_KILL,
};

struct conn_ctx {
	enum route route;
	struct tls_peer peer;
	char *body;
	size_t len;
	bool too_large;
	size_t discarded; /* body bytes past max_body, thrown away */
	int run_chan;     /* a run's channel: its slot is freed once this reaches EOF */
	bool has_slot;
};

enum who { WHO_ANY, WHO_RUNNER, WHO_PERSON };

/* What lives as long as one TCP connection (MHD's socket context). */
struct socket_state {
	struct tls_seen *seen;          /* NULL: every request verified in full */
	struct connguard_entry *guard;  /* NULL: only MHD's idle timeout */
};

static struct socket_state *socket_state_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *sc = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return sc ? sc->socket_context : NULL;
}

static const struct {
	const char *path;
	bool prefix;   /* path is a prefix: "/v0/approvals/" + id */
	const char *method;
	enum route route;
	enum who who;  /* runners are app and orchestrator */
} routes[] = {
	{"/v0/run", false, "POST", ROUTE_RUN, WHO_RUNNER},
	{"/v0/profiles", false, "GET", ROUTE_PROFILES, WHO_ANY},
	{"/v0/policy", false, "GET", ROUTE_POLICY, WHO_ANY},
	{"/v0/approvals", false, "GET", ROUTE_APPROVALS, WHO_ANY},
	{"/v0/approvals/", true, "POST", ROUTE_DECIDE, WHO_PERSON},
	{"/v0/jobs", false, "POST", ROUTE_JOB_START, WHO_RUNNER},
	{"/v0/jobs", false, "GET", ROUTE_JOB_LIST, WHO_RUNNER},
	{"/v0/jobs/", true, "GET", ROUTE_JOB_GET, WHO_RUNNER},
	{"/v0/jobs/", true, "DELETE", ROUTE_JOB_KILL, WHO_RUNNER},
};

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *body,
                               const char *hname, const char *hvalue)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void audit_request(const struct front *f, const struct conn_ctx *x, const char *method,
                          const char *url, unsigned status, const char *code, cJSON *line)
{
	if (!line)
		line = cJSON_CreateObject();
	cJSON_AddStringToObject(line, "method", method);
	cJSON_AddStringToObject(line, "path", url);
	cJSON_AddNumberToObject(line, "status", status);
	if (x && x->peer.cn[0]) {
		cJSON_AddStringToObject(line, "peer_cn", x->peer.cn);
		cJSON_AddStringToObject(line, "peer_role", tls_role_name(x->peer.role));
	}
	if (code)
		cJSON_AddStringToObject(line, "error", code);
	if (audit_write(f->audit_fd, line) < 0)
		/* Never silent; the next run is refused unless its start line is written. */
		log_warn("the audit log could not be written (%s): the line for %s %s (status %u) is lost",
		         strerror(errno), method, url, status);
	cJSON_Delete(line);
}

static enum MHD_Result respond_error(const struct front *f, struct MHD_Connection *c,
                                     const struct conn_ctx *x, const char *method, const char *url,
                                     const struct request_error *e, cJSON *audit_line)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *err = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(err, "code", e->code);
	cJSON_AddStringToObject(err, "message", e->message);
	audit_clean_strings(o); /* messages quote client text, cut at byte limits */
	char *body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	const char *hname = NULL, *hvalue = NULL;
	if (e->status == 503) {
		hname = "Retry-After";
		hvalue = "1";
	} else if (e->status == 405) {
		hname = "Allow";
		hvalue = strcmp(url, "/v0/run") == 0 || strncmp(url, "/v0/approvals/", 14) == 0 ? "POST" : "GET";
	}
	enum MHD_Result r = respond(c, (unsigned)e->status, body ? body : "{}", hname, hvalue);
	free(body);
	audit_request(f, x, method, url, (unsigned)e->status, e->code, audit_line);
	return r;
}

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

/* The rest of a run a person must see to decide: stdin (size, hash and a
 * preview) and the extra environment; filtered, or exact when `raw` (the
 * person's view). */
#define APPROVAL_STDIN_PREVIEW 4096
static char *approval_text(const struct front *f, const char *buf, size_t len, bool raw)
{
	unsigned long n;
	size_t flen;
	bool replaced;
	if (raw)
		return utf8_clean(buf, len, &replaced);
	char *filtered = scrub_buffer(f->scrub, buf, len, &flen, &n);
	char *clean = filtered ? utf8_clean(filtered, flen, &replaced) : NULL;
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
		size_t shown = r->stdin_len < APPROVAL_STDIN_PREVIEW ? r->stdin_len : APPROVAL_STDIN_PREVIEW;
		char *clean = approval_text(f, r->stdin_data, shown, raw);
		cJSON_AddStringToObject(x, "stdin", clean ? clean : "[unavailable]");
		free(clean);
	}
	cJSON *env = cJSON_AddArrayToObject(x, "env");
	for (size_t off = 0; off < r->env_len; off += strlen(r->env + off) + 1) {
		char *clean = approval_text(f, r->env + off, strlen(r->env + off), raw);
		cJSON_AddItemToArray(env, cJSON_CreateString(clean ? clean : "[unavailable]"));
		free(clean);
	}
	return x;
}

/* Park an approval-"each" run until a person decides (SPEC §9).  Returns 0
 * when allowed; otherwise -1 with `e` set (499: the requester left). */
static int wait_for_person(struct front *f, const struct conn_ctx *x, const struct run_request *r,
                           cJSON *line, int client_fd, struct request_error *e)
{
	enum approval_outcome out;
	char id[33];
	cJSON *cmd = cJSON_GetObjectItem(line, "cmd");
	cJSON *extra = approval_extra(f, r, false), *extra_raw = approval_extra(f, r, true);
	const char *rid = cJSON_GetStringValue(cJSON_GetObjectItem(line, "request_id"));
	if (rid) /* the client finds its own approval by it (client/run.c) */
		cJSON_AddStringToObject(extra, "request_id", rid), cJSON_AddStringToObject(extra_raw, "request_id", rid);
	bool invalid = false;
	char *cmd_raw = utf8_clean(r->cmd, r->cmd_len, &invalid);
	struct approval_info info = {
		.requester_cn = x->peer.cn, .requester_role = tls_role_name(x->peer.role),
		.profile = r->profile->name, .cmd = cJSON_GetStringValue(cmd),
		.cmd_raw = cmd_raw ? cmd_raw : "[unavailable]",
		.cmd_sha256 = cJSON_GetStringValue(cJSON_GetObjectItem(line, "cmd_sha256")),
		.cmd_filtered = (unsigned long)cJSON_GetNumberValue(cJSON_GetObjectItem(line, "cmd_filtered_parts")),
		.cmd_invalid_utf8 = invalid, .cwd = r->cwd, .timeout_s = r->timeout_s, .extra = extra,
		.extra_raw = extra_raw,
	};
	int waited = approvals_wait(f->approvals, &info, client_fd, f->cfg->approval_timeout_s, id, &out);
	cJSON_Delete(extra);
	if (extra_raw) /* the exact stdin and env leave memory like the body does */
		for (cJSON *it = extra_raw->child; it; it = it->next)
			if (cJSON_IsString(it) && it->valuestring)
				explicit_bzero(it->valuestring, strlen(it->valuestring));
	cJSON_Delete(extra_raw);
	if (cmd_raw)
		explicit_bzero(cmd_raw, strlen(cmd_raw));
	free(cmd_raw);
	if (waited < 0) {
		request_error_set(e, 503, "at_capacity", "Too many runs are waiting for approval; retry later.");
		return -1;
	}
	cJSON_AddStringToObject(line, "approval_id", id);
	switch (out) {
	case APPROVAL_ALLOWED:
		cJSON_AddStringToObject(line, "approval", "allowed");
		return 0;
	case APPROVAL_DENIED:
		request_error_set(e, 403, "approval_denied", "A person denied this run (approval %s).", id);
		break;
	case APPROVAL_EXPIRED:
		request_error_set(e, 403, "approval_expired", "No person approved this run within %u seconds (approval %s).",
		                  f->cfg->approval_timeout_s, id);
		break;
	case APPROVAL_WITHDRAWN:
		request_error_set(e, 499, "approval_withdrawn", "The requester went away; the approval was withdrawn.");
		break;
	}
	return -1;
}

static enum MHD_Result handle_decide(struct front *f, struct MHD_Connection *c, struct conn_ctx *x,
                                     const char *method, const char *url)
{
	struct request_error e;
	const char *id = url + strlen("/v0/approvals/");
	cJSON *root = cJSON_ParseWithLength(x->body ? x->body : "", x->len);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "decision");
	cJSON *line = cJSON_CreateObject();
	cJSON_AddStringToObject(line, "approval_id", id);

	if (strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32) {
		request_error_set(&e, 404, "unknown_approval", "There is no approval with id '%.40s'.", id);
	} else if (!cJSON_IsObject(root) || cJSON_GetArraySize(root) != 1 || !cJSON_IsString(d) ||
	           (strcmp(d->valuestring, "allow") != 0 && strcmp(d->valuestring, "deny") != 0)) {
		request_error_set(&e, 400, "bad_decision", "The body must be {\"decision\": \"allow\"} or {\"decision\": \"deny\"}.");
	} else if (approvals_decide(f->approvals, id, strcmp(d->valuestring, "allow") == 0, x->peer.cn) < 0) {
		request_error_set(&e, 404, "unknown_approval",
		                  "No run with approval id %s is waiting: it was decided, expired or withdrawn.", id);
	} else {
		char body[128];
		snprintf(body, sizeof(body), "{\"id\":\"%s\",\"decision\":\"%s\"}", id, d->valuestring);
		cJSON_AddStringToObject(line, "decision", d->valuestring);
		cJSON_Delete(root);
		enum MHD_Result r = respond(c, 200, body, NULL, NULL);
		audit_request(f, x, method, url, 200, NULL, line);
		return r;
	}
	cJSON_Delete(root);
	return respond_error(f, c, x, method, url, &e, line);
}

/* A slot in FIFO order (runq.h), waiting up to queue_timeout_s; on
 * failure `e` is the 503 (Retry-After) or the 499 of a client gone. */
static int queue_for_slot(struct front *f, int client_fd, const char *run_id, bool approved,
                          struct request_error *e)
{
	unsigned ahead = 0, wait_s = f->cfg->queue_timeout_s;
	enum runq_result q = runq_take(f->runq, client_fd, wait_s * 1000u, &ahead);
	switch (q) {
	case RUNQ_OK:
		atomic_fetch_add(&f->runs, 1);
		return 0;
	case RUNQ_GONE:
		request_error_set(e, 499, "client_gone", "The client went away while its run waited for a slot.");
		break;
	case RUNQ_FULL:
		request_error_set(e, 503, "at_capacity",
		                  "All %u run slots are busy and %u request(s) wait already (queue_max)%s; retry in a moment.",
		                  f->cfg->max_runs, f->cfg->queue_max, approved ? "; the approval is spent" : "");
		break;
	case RUNQ_TIMEOUT:
		log_info("run %s: no run slot came free within %u s (queue_timeout_s; %u ahead on arrival)", run_id,
		         wait_s, ahead);
		request_error_set(e, 503, "at_capacity",
		                  "All %u run slots stayed busy for the %u s this request waited in the queue%s; retry in a moment.",
		                  f->cfg->max_runs, wait_s, approved ? "; the approval is spent, ask again" : "");
		break;
	case RUNQ_ERROR:
		request_error_set(e, 503, "at_capacity", "The run could not join the queue (%s); retry in a moment.",
		                  strerror(errno));
		break;
	}
	return -1;
}

/* "denials" (SPEC §15.3): every lock that refused something, with a hint;
 * an empty list when nothing was. */
static void add_denials(cJSON *o, const struct run_denials *d)
{
	cJSON *a = cJSON_AddArrayToObject(o, "denials");
	for (size_t i = 0; a && i < d->n; i++) {
		cJSON *x = cJSON_CreateObject();
		if (!x)
			break;
		cJSON_AddStringToObject(x, "lock", d->v[i].lock);
		cJSON_AddStringToObject(x, "detail", d->v[i].detail);
		cJSON_AddStringToObject(x, "hint", d->v[i].hint);
		if (d->v[i].inferred)
			cJSON_AddBoolToObject(x, "inferred", true);
		cJSON_AddItemToArray(a, x);
	}
}

/* The audit line names the locks only (details may hold paths). */
static void add_denied_locks(cJSON *o, const struct run_denials *d)
{
	if (d->n == 0)
		return;
	cJSON *a = cJSON_AddArrayToObject(o, "denials");
	for (size_t i = 0; a && i < d->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(d->v[i].lock));
}

/* "usage" (SPEC §15.3): what the kernel could not give is null. */
static void add_usage(cJSON *o, const struct privsep_usage *u)
{
	cJSON *j = cJSON_AddObjectToObject(o, "usage");
	if (u->have & PRIVSEP_USAGE_CPU)
		cJSON_AddNumberToObject(j, "cpu_ms", (double)(uint64_t)(u->cpu_us / 1000)); /* whole ms */
	else
		cJSON_AddNullToObject(j, "cpu_ms");
	if (u->have & PRIVSEP_USAGE_PEAK_MEMORY)
		cJSON_AddNumberToObject(j, "peak_memory_bytes", (double)u->peak_memory_bytes);
	else
		cJSON_AddNullToObject(j, "peak_memory_bytes");
	if (u->have & PRIVSEP_USAGE_PEAK_PIDS)
		cJSON_AddNumberToObject(j, "peak_pids", (double)u->peak_pids);
	else
		cJSON_AddNullToObject(j, "peak_pids");
	if (u->have & PRIVSEP_USAGE_OOM)
		cJSON_AddBoolToObject(j, "oom_killed", u->oom_killed != 0);
	else
		cJSON_AddNullToObject(j, "oom_killed");
	if (u->have & PRIVSEP_USAGE_PIDS_LIMITED)
		cJSON_AddBoolToObject(j, "pids_limited", u->pids_limited != 0);
	else
		cJSON_AddNullToObject(j, "pids_limited");
}

/* A run's slot goes back once its supervisor has torn the run down (the
 * run channel's EOF; bounded: a stuck teardown is the launcher's to
 * report): the launcher counts a run until then, and a queue that handed
 * slots over at once would outrun the teardowns.  chan < 0: nothing to
 * wait for (the run never started). */
static void run_done(struct front *f, int chan)
{
	if (chan >= 0) {
		struct pollfd p = {.fd = chan, .events = POLLIN};
		(void)poll(&p, 1, 5000);
		close(chan);
	}
	atomic_fetch_sub(&f->runs, 1);
	runq_release(f->runq);
}

/* The reply of a run (SPEC §5, §15.3).  A stream's last event has every
 * field but stdout and stderr, which it sent as it went. */
static char *reply_body(const struct run_result *res, const struct run_request *r, const char *run_id,
                        bool stream_exit)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (stream_exit)
		cJSON_AddStringToObject(o, "event", "exit");
	if (res->signal) {
		cJSON_AddNullToObject(o, "exit");
		const char *sig = sigabbrev_np(res->signal);
		cJSON_AddStringToObject(o, "signal", sig ? sig : "UNKNOWN");
	} else {
		cJSON_AddNumberToObject(o, "exit", res->exit_code);
		cJSON_AddNullToObject(o, "signal");
	}
	cJSON_AddBoolToObject(o, "timed_out", res->timed_out);
	if (res->disk_limited) {
		cJSON_AddBoolToObject(o, "disk_limited", true);
		cJSON_AddStringToObject(o, "message", res->message);
	}
	if (!stream_exit) {
		cJSON_AddStringToObject(o, "stdout", res->out);
		cJSON_AddStringToObject(o, "stderr", res->err);
	}
	cJSON_AddNumberToObject(o, "filtered", (double)res->filtered);
	cJSON_AddBoolToObject(o, "truncated", res->truncated);
	if (res->utf8_replaced)
		cJSON_AddBoolToObject(o, "invalid_utf8_replaced", true);
	cJSON_AddNumberToObject(o, "ms", (double)res->ms);
	add_usage(o, &res->usage);
	add_denials(o, &res->denials);
	cJSON_AddStringToObject(o, "profile", r->profile->name);
	cJSON_AddStringToObject(o, "policy_hash", r->profile->policy_hash);
	cJSON_AddStringToObject(o, "run_id", run_id);
	cJSON_AddNumberToObject(o, "timeout_s", r->timeout_s);
	if (r->timeout_capped)
		cJSON_AddBoolToObject(o, "timeout_capped", true);
	char *body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return body;
}

/* The run's outcome on its audit line. */
static void add_result_to_audit(cJSON *line, const struct run_result *res)
{
	cJSON_AddNumberToObject(line, "uid", res->uid);
	if (res->signal) {
		cJSON_AddNullToObject(line, "exit");
		cJSON_AddStringToObject(line, "signal", sigabbrev_np(res->signal) ? sigabbrev_np(res->signal) : "UNKNOWN");
	} else {
		cJSON_AddNumberToObject(line, "exit", res->exit_code);
		cJSON_AddNullToObject(line, "signal");
	}
	cJSON_AddBoolToObject(line, "timed_out", res->timed_out);
	if (res->disk_limited)
		cJSON_AddBoolToObject(line, "disk_limited", true);
	cJSON_AddNumberToObject(line, "ms", (double)res->ms);
	add_usage(line, &res->usage);
	add_denied_locks(line, &res->denials);
	cJSON_AddNumberToObject(line, "filtered", (double)res->filtered);
	cJSON_AddBoolToObject(line, "truncated", res->truncated);
	if (res->cleanup_failed)
		cJSON_AddBoolToObject(line, "cleanup_failed", true);
}

/* ---- "stream": true (SPEC §15.3) ----------------------------------------
 * The run goes on in a thread of its own, which hands its filtered output
 * to a live buffer (live.c) as it comes; libmicrohttpd's connection thread
 * sends the buffer as a chunked application/x-ndjson body.  The last line is
 * {"event":"exit", ...} (the plain reply without stdout and stderr), or
 * {"event":"error","error":{...}} when the run failed after the stream
 * began.  The thread owns the request and frees the run's slot itself,
 * once the supervisor is gone, like on_completed does for a plain run. */
/* A run in a thread of its own: a stream (output to a live buffer, the
 * client's socket watched for a hang-up) or a job (output to the job
 * table, a pipe that DELETE closes watched instead). */
struct bg_run {
	struct front *f;
	struct conn_ctx who;        /* the peer, for the audit line (the connection may be gone) */
	char method[8], url[64];
	struct run_request r;
	char run_id[RUN_ID_LEN + 1];
	cJSON *line;
	struct execute_env env;
	int watch_fd;               /* execute_run ends the run when it hangs up */
	struct live *live;          /* a stream's, else NULL */
	struct job *job;            /* a job's, else NULL */
};

static struct bg_run *bg_new(struct front *f, const struct conn_ctx *x, const char *method, const char *url,
                             const struct run_request *r, const char *run_id, cJSON *line,
                             const struct execute_env *env)
{
	struct bg_run *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->f = f;
	s->who.peer = x->peer;
	snprintf(s->method, sizeof(s->method), "%s", method);
	snprintf(s->url, sizeof(s->url), "%s", url);
	s->r = *r;
	snprintf(s->run_id, sizeof(s->run_id), "%s", run_id);
	s->line = line;
	s->env = *env;
	s->watch_fd = -1;
	return s;
}

/* {"code","message","status"} of a failed run, compact (malloc'd). */
static char *error_json(const struct request_error *e, bool as_event)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *err = o;
	if (as_event) {
		cJSON_AddStringToObject(o, "event", "error");
		err = cJSON_AddObjectToObject(o, "error");
	}
	cJSON_AddStringToObject(err, "code", e->code);
	cJSON_AddStringToObject(err, "message", e->message);
	cJSON_AddNumberToObject(err, "status", e->status);
	char *j = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return j;
}

/* A stream ends with its exit event (or an error event); a job keeps the
 * reply, or the error (none when DELETE killed it: 499, output kept). */
static void bg_finish(struct bg_run *s, const char *body, const struct request_error *e)
{
	if (s->live) {
		char *j = body ? NULL : error_json(e, true);
		live_finish(s->live, body ? body : j);
		free(j);
	} else {
		char *j = body || e->status == 499 ? NULL : error_json(e, false);
		job_finish(s->f->jobs, s->job, body, j ? j : (body || e->status == 499 ? NULL : "{}"));
		free(j);
	}
}

static void *bg_main(void *arg)
{
	struct bg_run *s = arg;
	struct run_result res;
	struct request_error e;
	s->env.output = s->live ? live_output : job_output;
	s->env.output_arg = s->live ? (void *)s->live : (void *)s->job;
	int rc = execute_run(&s->env, &s->r, s->run_id, s->watch_fd, &res, &e);
	if (rc == 0) {
		char *body = reply_body(&res, &s->r, s->run_id, true);
		bg_finish(s, body ? body
		                  : s->live ? "{\"event\":\"error\",\"error\":{\"code\":\"internal\",\"message\":\"The reply could not be built.\"}}"
		                            : "{}",
		          &e);
		free(body);
		add_result_to_audit(s->line, &res);
		audit_request(s->f, &s->who, s->method, s->url, 200, NULL, s->line);
	} else {
		bg_finish(s, NULL, &e);
		audit_request(s->f, &s->who, s->method, s->url, (unsigned)e.status,
		              s->job && e.status == 499 ? "job_killed" : e.code, s->line);
	}
	/* The slot: once the supervisor has torn the run down (on_completed). */
	run_done(s->f, res.chan);
	if (rc == 0)
		execute_result_free(&res);
	request_free(&s->r);
	if (s->live)
		live_release(s->live);
	else
		close(s->watch_fd); /* the job's end of its kill pipe */
	free(s);
	return NULL;
}

static enum MHD_Result start_stream(struct front *f, struct MHD_Connection *c, struct conn_ctx *x,
                                    const char *method, const char *url, struct run_request *r,
                                    const char *run_id, cJSON *line, const struct execute_env *env,
                                    int client_fd)
{
	struct request_error e;
	struct bg_run *s = bg_new(f, x, method, url, r, run_id, line, env);
	struct live *l = s ? live_new() : NULL;
	struct MHD_Response *resp =
	    l ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, live_read, l, live_gone) : NULL;
	pthread_t th;
	pthread_attr_t attr;
	if (resp) {
		s->watch_fd = client_fd;
		s->live = l;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	}
	if (!resp || pthread_create(&th, &attr, bg_main, s) != 0) {
		if (resp) {
			pthread_attr_destroy(&attr);
			MHD_destroy_response(resp); /* calls live_gone: one hold */
			live_release(l);            /* and the run's */
		} else if (l) {
			live_release(l);
			live_release(l);
		}
		free(s);
		run_done(f, -1);
		request_free(r);
		request_error_set(&e, 500, "internal", "The stream could not be started.");
		return respond_error(f, c, x, method, url, &e, line);
	}
	pthread_attr_destroy(&attr);
	MHD_add_response_header(resp, "Content-Type", "application/x-ndjson");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	enum MHD_Result ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ---- jobs (SPEC §15.3): POST /v0/jobs, GET /v0/jobs[/ID[/output]], DELETE ----
 * A job is a run in a thread of its own, like a stream, whose output goes to
 * the job table (jobs.c) instead of a client.  It does not watch any client:
 * its "client" is a pipe that DELETE closes, which kills the run the way a
 * hang-up does; its timeout is the run's. */
static enum MHD_Result start_job(struct front *f, struct MHD_Connection *c, struct conn_ctx *x,
                                 const char *method, const char *url, struct run_request *r, const char *run_id,
                                 cJSON *line, const struct execute_env *env)
{
	struct request_error e;
	char why[200] = "";
	int kp[2] = {-1, -1};
	struct bg_run *s = bg_new(f, x, method, url, r, run_id, line, env);
	struct job *b = NULL;
	if (s && pipe2(kp, O_CLOEXEC) == 0)
		b = jobs_add(f->jobs, run_id, x->peer.fp, x->peer.cn, r->profile->name, r->profile->output_max,
		             r->timeout_s, kp[1], why, sizeof(why));
	pthread_t th;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (b) {
		s->watch_fd = kp[0];
		s->job = b;
		cJSON_AddBoolToObject(line, "job", true);
	}
	if (!b || pthread_create(&th, &attr, bg_main, s) != 0) {
		pthread_attr_destroy(&attr);
		if (b)
			job_finish(f->jobs, b, NULL, "{\"code\":\"internal\",\"message\":\"The job could not start.\"}");
		else if (kp[1] >= 0)
			close(kp[1]);
		if (kp[0] >= 0)
			close(kp[0]);
		free(s);
		run_done(f, -1);
		request_free(r);
		if (why[0] && strstr(why, "max_jobs"))
			request_error_set(&e, 429, "too_many_jobs", "%s", why);
		else
			request_error_set(&e, 503, "at_capacity", "%s", why[0] ? why : "The job could not start; retry in a moment.");
		return respond_error(f, c, x, method, url, &e, line);
	}
	pthread_attr_destroy(&attr);
	char body[96];
	snprintf(body, sizeof(body), "{\"job_id\":\"%s\",\"state\":\"running\"}", run_id);
	return respond(c, 202, body, NULL, NULL);
}

static enum MHD_Result handle_job(struct front *f, struct MHD_Connection *c, struct conn_ctx *x,
                                  const char *method, const char *url)
{
	struct request_error e;
	char *body = NULL;
	if (x->route == ROUTE_JOB_LIST) {
		body = jobs_list(f->jobs, x->peer.fp);
		goto reply;
	}
	const char *rest = url + strlen("/v0/jobs/");
	char id[33] = "";
	size_t idlen = strcspn(rest, "/");
	const char *tail = rest + idlen;
	if (idlen == 32)
		memcpy(id, rest, 32);
	bool output = strcmp(tail, "/output") == 0;
	if (!(tail[0] == '\0' || (output && x->route == ROUTE_JOB_GET))) {
		request_error_set(&e, 404, "not_found", "There is no endpoint %.64s; see GET /v0/policy.", url);
		return respond_error(f, c, x, method, url, &e, NULL);
	}
	if (x->route == ROUTE_JOB_KILL) {
		bool ended = false;
		if (jobs_kill(f->jobs, id, x->peer.fp, &ended) == 0) {
			char b[128];
			snprintf(b, sizeof(b), "{\"job_id\":\"%s\",\"state\":\"%s\"}", id, ended ? "ended" : "killed");
			body = strdup(b);
		}
	} else if (output) {
		const char *st = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "stream");
		const char *since = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since");
		int which = -1;
		if (!st || strcmp(st, "stdout") == 0)
			which = 0;
		else if (strcmp(st, "stderr") == 0)
			which = 1;
		char *end = NULL;
		errno = 0;
		unsigned long long n = since ? strtoull(since, &end, 10) : 0;
		if (which < 0 || (since && (!*since || *end || errno || since[0] == '-' || n > (1ULL << 62)))) {
			request_error_set(&e, 400, "bad_field",
			                  "Query 'stream' is stdout or stderr, and 'since' a byte offset (0 or more).");
			return respond_error(f, c, x, method, url, &e, NULL);
		}
		body = jobs_output(f->jobs, id, x->peer.fp, which, n);
	} else {
		body = jobs_status(f->jobs, id, x->peer.fp);
	}
	if (!body) {
		/* Another certificate's job is no job at all. */
		request_error_set(&e, 404, "unknown_job", "There is no job '%.40s' of this certificate (it may have ended more than job_retain_s ago); GET /v0/jobs lists them.", id[0] ? id : rest);
		return respond_error(f, c, x, method, url, &e, NULL);
	}
reply:
	if (!body) {
		request_error_set(&e, 500, "internal", "The front is out of memory.");
		return respond_error(f, c, x, method, url, &e, NULL);
	}
	audit_request(f, x, method, url, 200, NULL, NULL);
	enum MHD_Result ret = respond(c, 200, body, NULL, NULL);
	free(body);
	return ret;
}

static enum MHD_Result handle_run(struct front *f, struct MHD_Connection *c, struct conn_ctx *x,
                                  const char *method, const char *url, bool as_job)
{
	struct request_error e;
	struct run_request r;
	struct run_result res;
	char run_id[RUN_ID_LEN + 1];

	if (request_parse_run(x->body ? x->body : "", x->len, f->cfg, f->profiles, &r, &e) < 0)
		return respond_error(f, c, x, method, url, &e, NULL);
	if (as_job && r.stream) {
		request_free(&r);
		request_error_set(&e, 400, "bad_field",
		                  "Field 'stream' is for POST /v0/run; a job's output is read with GET /v0/jobs/ID/output.");
		return respond_error(f, c, x, method, url, &e, NULL);
	}
	new_run_id(run_id);
	cJSON *line = run_audit_line(f, &r, run_id);
	/* The client's nonce for this request (32 hex digits, else ignored):
	 * shown in the approval record so the client can name its approval. */
	const char *rid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sharness-Request-Id");
	if (rid && strlen(rid) == 32 && strspn(rid, "0123456789abcdef") == 32)
		cJSON_AddStringToObject(line, "request_id", rid);
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	int client_fd = ci ? ci->connect_fd : -1;
	bool gated = r.profile->approval == PROFILE_APPROVAL_EACH;
	/* A person is not asked about a run the queue would refuse now; an
	 * approved run then queues like any other (SPEC §15.3). */
	if (gated && runq_full(f->runq)) {
		request_error_set(&e, 503, "at_capacity", "All %u run slots are busy and the queue is full; retry in a moment.",
		                  f->cfg->max_runs);
		request_free(&r);
		return respond_error(f, c, x, method, url, &e, line);
	}
	if (gated && wait_for_person(f, x, &r, line, client_fd, &e) < 0) {
		request_free(&r);
		if (e.status == 499) {
			audit_request(f, x, method, url, 499, e.code, line);
			return MHD_NO;
		}
		return respond_error(f, c, x, method, url, &e, line);
	}
	if (queue_for_slot(f, client_fd, run_id, gated, &e) < 0) {
		request_free(&r);
		if (e.status == 499) {
			audit_request(f, x, method, url, 499, e.code, line);
			return MHD_NO;
		}
		return respond_error(f, c, x, method, url, &e, line);
	}
	/* The run is on record before it starts, so a crash mid-run still
	 * leaves a trace; a log that cannot take the line means no run. */
	cJSON *started = cJSON_Duplicate(line, true);
	cJSON_AddStringToObject(started, "event", "run_started");
	cJSON_AddStringToObject(started, "peer_cn", x->peer.cn);
	cJSON_AddStringToObject(started, "peer_role", tls_role_name(x->peer.role));
	cJSON_AddNumberToObject(started, "timeout_s", r.timeout_s);
	int logged = audit_write(f->audit_fd, started);
	cJSON_Delete(started);
	if (logged < 0) {
		run_done(f, -1);
		log_warn("the audit log could not be written (%s): run refused", strerror(errno));
		request_error_set(&e, 503, "audit_unavailable",
		                  "The audit log cannot be written (is its disk full?); runs are refused until it can.");
		request_free(&r);
		return respond_error(f, c, x, method, url, &e, line);
	}
	struct execute_env env = {.ctl = f->ctl, .scrub = f->scrub, .audit_fd = f->audit_fd,
	                          .daemon_host = f->cfg->listen_host, .daemon_port = f->cfg->listen_port};
	if (as_job)
		return start_job(f, c, x, method, url, &r, run_id, line, &env);
	if (r.stream)
		return start_stream(f, c, x, method, url, &r, run_id, line, &env, client_fd);
	int rc = execute_run(&env, &r, run_id, client_fd, &res, &e);
	/* The slot is freed in on_completed, after the reply left and once the
	 * supervisor is gone (its channel's EOF): the launcher counts a run
	 * until then, and a queue that hands slots over at once would
	 * otherwise outrun the teardowns. */
	x->run_chan = res.chan;
	x->has_slot = true;
	if (rc < 0) {
		request_free(&r);
		if (e.status == 499) {
			audit_request(f, x, method, url, 499, e.code, line);
			return MHD_NO; /* nobody is listening; close */
		}
		return respond_error(f, c, x, method, url, &e, line);
	}
	char *body = reply_body(&res, &r, run_id, false);
	add_result_to_audit(line, &res);
	execute_result_free(&res);
	request_free(&r);
	enum MHD_Result ret;
	if (!body) {
		request_error_set(&e, 500, "internal", "The reply could not be built.");
		return respond_error(f, c, x, method, url, &e, line);
	}
	ret = respond(c, 200, body, NULL, NULL);
	free(body);
	audit_request(f, x, method, url, 200, NULL, line);
	return ret;
}

/* First call for a request: everything that can be decided before a body. */
static int admit(struct front *f, struct MHD_Connection *c, struct conn_ctx *x, const char *method,
                 const char *url, struct request_error *e)
{
	char why[320];
	struct socket_state *st = socket_state_of(c);
	if (tls_identify(c, st ? st->seen : NULL, &x->peer, why, sizeof(why)) < 0) {
		request_error_set(e, 401, "bad_certificate", "%s", why);
		return -1;
	}
	if (st)
		connguard_verified(st->guard);
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, f->cfg->connection_timeout_s);
	if (x->peer.role == TLS_ROLE_NONE) {
		request_error_set(e, 403, "no_role", "Certificate '%.64s' carries no known role (OU '%.32s'); roles are app, orchestrator and person.",
		                  x->peer.cn, x->peer.ou);
		return -1;
	}
	bool path_known = false;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t plen = strlen(routes[i].path);
		if (routes[i].prefix ? (strncmp(url, routes[i].path, plen) != 0 || url[plen] == '\0')
		                     : strcmp(url, routes[i].path) != 0)
			continue;
		path_known = true;
		if (strcmp(method, routes[i].method) != 0)
			continue;
		if (routes[i].who == WHO_RUNNER && x->peer.role == TLS_ROLE_PERSON) {
			request_error_set(e, 403, "role_not_allowed", "Role 'person' may read and approve but not run commands.");
			return -1;
		}
		if (routes[i].who == WHO_PERSON && x->peer.role != TLS_ROLE_PERSON) {
			request_error_set(e, 403, "role_not_allowed", "Only a certificate with role 'person' may decide approvals.");
			return -1;
		}
		x->route = routes[i].route;
	}
	if (x->route == ROUTE_NONE) {
		if (path_known)
			request_error_set(e, 405, "method_not_allowed", "%.8s is not allowed on %.64s.", method, url);
		else
			request_error_set(e, 404, "not_found", "There is no endpoint %.64s; see GET /v0/policy.", url);
		return -1;
	}
	if (x->route == ROUTE_RUN || x->route == ROUTE_DECIDE || x->route == ROUTE_JOB_START) {
		const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
		if (!ct || (strncasecmp(ct, "application/json", 16) != 0) || (ct[16] != '\0' && ct[16] != ';')) {
			request_error_set(e, 415, "unsupported_media_type", "POST %.64s takes Content-Type: application/json.", url);
			return -1;
		}
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > f->cfg->max_body) {
			request_error_set(e, 413, "body_too_large", "The body is larger than %zu bytes.", f->cfg->max_body);
			return -1;
		}
	}
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	struct front *f = cls;
	struct conn_ctx *x = *con_cls;
	struct request_error e;
	(void)version;

	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x)
			return MHD_NO;
		x->run_chan = -1;
		*con_cls = x;
		if (admit(f, c, x, method, url, &e) < 0)
			return respond_error(f, c, x, method, url, &e, NULL);
		return MHD_YES;
	}
	if (*upload_size) {
		if (!x->too_large && x->len + *upload_size <= f->cfg->max_body) {
			char *nb = realloc(x->body, x->len + *upload_size + 1);
			if (!nb)
				return MHD_NO;
			x->body = nb;
			memcpy(x->body + x->len, upload, *upload_size);
			x->len += *upload_size;
			x->body[x->len] = '\0';
		} else {
			x->too_large = true;
			x->discarded += *upload_size;
			/* A 413 can only be queued once the body has ended; a body
			 * that keeps coming (chunked, no end) is cut off instead of
			 * being read forever. */
			if (x->discarded > f->cfg->max_body) {
				log_info("closing a connection from '%s' whose body went on past twice the %zu-byte limit",
				         x->peer.cn, f->cfg->max_body);
				audit_request(f, x, method, url, 413, "body_too_large", NULL);
				return MHD_NO;
			}
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (x->too_large) {
		request_error_set(&e, 413, "body_too_large", "The body is larger than %zu bytes.", f->cfg->max_body);
		return respond_error(f, c, x, method, url, &e, NULL);
	}
	switch (x->route) {
	case ROUTE_RUN:
		return handle_run(f, c, x, method, url, false);
	case ROUTE_JOB_START:
		return handle_run(f, c, x, method, url, true);
	case ROUTE_JOB_LIST:
	case ROUTE_JOB_GET:
	case ROUTE_JOB_KILL:
		return handle_job(f, c, x, method, url);
	case ROUTE_PROFILES:
		audit_request(f, x, method, url, 200, NULL, NULL);
		return respond(c, 200, f->profiles_json, NULL, NULL);
	case ROUTE_POLICY:
		audit_request(f, x, method, url, 200, NULL, NULL);
		return respond(c, 200, f->policy_json, NULL, NULL);
	case ROUTE_APPROVALS: {
		/* Only a person sees the exact commands (approval.h). */
		char *list = approvals_list_json(f->approvals, x->peer.role == TLS_ROLE_PERSON);
		enum MHD_Result r = respond(c, 200, list ? list : "{\"approvals\":[]}", NULL, NULL);
		free(list);
		audit_request(f, x, method, url, 200, NULL, NULL);
		return r;
	}
	case ROUTE_DECIDE:
		return handle_decide(f, c, x, method, url);
	case ROUTE_NONE:
		break;
	}
	return MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct conn_ctx *x = *con_cls;
	struct front *f = cls;
	(void)c;
	(void)toe;
	if (!x)
		return;
	if (x->has_slot)
		run_done(f, x->run_chan);
	else if (x->run_chan >= 0)
		close(x->run_chan);
	if (x->body)
		explicit_bzero(x->body, x->len);
	free(x->body);
	free(x);
	*con_cls = NULL;
}

/* Until it has shown a verified certificate, a connection gets at most
 * PREAUTH_TIMEOUT_S of silence: strangers who connect and stall hold a slot
 * of the connection limit for seconds, not the whole idle timeout. */
#define PREAUTH_TIMEOUT_S 5u

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
	const struct front *f = cls;
	struct socket_state *st = *socket_ctx;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		/* Before MHD closes the socket (connguard.h relies on it). */
		if (st) {
			connguard_remove(f->guard, st->guard);
			tls_seen_free(st->seen);
			free(st);
		}
		*socket_ctx = NULL;
		return;
	}
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	st = calloc(1, sizeof(*st));
	if (st) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		st->seen = tls_seen_new();
		st->guard = ci && f->guard ? connguard_add(f->guard, ci->connect_fd) : NULL;
	}
	*socket_ctx = st;
	tls_require_client_cert(c);
	unsigned t = f->cfg->connection_timeout_s;
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, t < PREAUTH_TIMEOUT_S ? t : PREAUTH_TIMEOUT_S);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("libmicrohttpd: %s", msg);
}

struct MHD_Daemon *http_start(struct front *f)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS |
	                 MHD_USE_ERROR_LOG | MHD_USE_ITC;
	return MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, f,
		MHD_OPTION_LISTEN_SOCKET, f->listen_fd,
		MHD_OPTION_HTTPS_MEM_KEY, f->tls_key,
		MHD_OPTION_HTTPS_MEM_CERT, f->tls_cert,
		MHD_OPTION_HTTPS_MEM_TRUST, f->tls_ca,
		MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES,
		MHD_OPTION_CONNECTION_LIMIT, f->cfg->connection_limit,
		MHD_OPTION_CONNECTION_TIMEOUT, f->cfg->connection_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, f,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, f,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, f,
		MHD_OPTION_END);
}
