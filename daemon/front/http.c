/*
 * http.c - the HTTPS API (SPEC §3) on libmicrohttpd, run from the front's
 * loop (loop.h): no thread of its own.  A request that waits (for a
 * person, a slot or its run) is a runflow (runflow.h) whose connection is
 * suspended meanwhile; everything else is answered at once.
 *
 * Order per request (the access handler's first call): verify the client
 * certificate, route, check the role, check the content type and declared
 * length; only then is a body accepted, and never more than max_body.
 */
#include "http.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "approval.h"
#include "audit.h"
#include "connguard.h"
#include "peeruid.h"
#include "jobs.h"
#include "log.h"
#include "runflow.h"
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
	struct runflow *flow; /* a run request past its body (runflow.h) */
};

enum who { WHO_ANY, WHO_RUNNER, WHO_PERSON };

/* What lives as long as one TCP connection (MHD's socket context). */
struct socket_state {
	struct tls_seen *seen;          /* NULL: every request verified in full */
	struct connguard_entry *guard;  /* NULL: only MHD's idle timeout */
	unsigned idle_s;                /* limits.idle_timeout_s, for Keep-Alive */
};

static struct socket_state *socket_state_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *sc = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return sc ? sc->socket_context : NULL;
}

static const struct {
	const char *path;
	bool prefix;   /* path is a prefix: "/v0/approvals/" + id */
	const char *sub; /* after a prefix's id: nothing or this ("": nothing; NULL: anything) */
	const char *method;
	enum route route;
	enum who who;  /* runners are app and orchestrator */
} routes[] = {
	{"/v0/run", false, NULL, "POST", ROUTE_RUN, WHO_RUNNER},
	{"/v0/profiles", false, NULL, "GET", ROUTE_PROFILES, WHO_ANY},
	{"/v0/policy", false, NULL, "GET", ROUTE_POLICY, WHO_ANY},
	{"/v0/approvals", false, NULL, "GET", ROUTE_APPROVALS, WHO_ANY},
	{"/v0/approvals/", true, NULL, "POST", ROUTE_DECIDE, WHO_PERSON},
	{"/v0/jobs", false, NULL, "POST", ROUTE_JOB_START, WHO_RUNNER},
	{"/v0/jobs", false, NULL, "GET", ROUTE_JOB_LIST, WHO_RUNNER},
	{"/v0/jobs/", true, "/output", "GET", ROUTE_JOB_GET, WHO_RUNNER},
	{"/v0/jobs/", true, "", "DELETE", ROUTE_JOB_KILL, WHO_RUNNER},
};
#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

static bool route_matches(size_t i, const char *url)
{
	size_t plen = strlen(routes[i].path);
	if (!routes[i].prefix)
		return strcmp(url, routes[i].path) == 0;
	if (strncmp(url, routes[i].path, plen) != 0 || url[plen] == '\0')
		return false;
	const char *slash = strchr(url + plen, '/');
	return !routes[i].sub || !slash || strcmp(slash, routes[i].sub) == 0;
}

/* A 405's Allow: every method of the routes the path matches. */
static const char *allow_of(const char *url)
{
	static const char *const methods[] = {"GET", "POST", "DELETE"};
	static const char *const allow[] = {"",       "GET",         "POST",         "GET, POST",
	                                    "DELETE", "GET, DELETE", "POST, DELETE", "GET, POST, DELETE"};
	unsigned mask = 0;
	for (size_t i = 0; i < N_ROUTES; i++)
		for (unsigned m = 0; m < 3; m++)
			if (route_matches(i, url) && strcmp(routes[i].method, methods[m]) == 0)
				mask |= 1u << m;
	return allow[mask];
}

void http_keep_alive(struct MHD_Connection *c, struct MHD_Response *r)
{
	const struct socket_state *st = socket_state_of(c);
	char v[32];
	if (st && st->idle_s && snprintf(v, sizeof v, "timeout=%u", st->idle_s) < (int)sizeof v)
		MHD_add_response_header(r, "Keep-Alive", v);
}

enum MHD_Result http_respond(struct MHD_Connection *c, unsigned status, const char *body, const char *hname,
                             const char *hvalue)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	http_keep_alive(c, r);
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

void http_audit(const struct front *f, const struct tls_peer *peer, const char *method, const char *url,
                unsigned status, const char *code, cJSON *line)
{
	if (!line)
		line = cJSON_CreateObject();
	cJSON_AddStringToObject(line, "method", method);
	cJSON_AddStringToObject(line, "path", url);
	cJSON_AddNumberToObject(line, "status", status);
	if (peer && peer->cn[0]) {
		cJSON_AddStringToObject(line, "peer_cn", peer->cn);
		cJSON_AddStringToObject(line, "peer_role", tls_role_name(peer->role));
	}
	/* Also on a 401: a resumed session whose certificate failed anew. */
	if (peer)
		cJSON_AddBoolToObject(line, "tls_resumed", peer->resumed);
	if (code)
		cJSON_AddStringToObject(line, "error", code);
	if (audit_write(f->audit_fd, line) < 0)
		/* Never silent; the next run is refused unless its start line is written. */
		log_warn("the audit log could not be written (%s): the line for %s %s (status %u) is lost",
		         strerror(errno), method, url, status);
	cJSON_Delete(line);
}

char *http_error_body(const struct request_error *e, const char *url, const char **hname, const char **hvalue)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *err = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(err, "code", e->code);
	cJSON_AddStringToObject(err, "message", e->message);
	audit_clean_strings(o); /* messages quote client text, cut at byte limits */
	char *body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	*hname = *hvalue = NULL;
	if (e->status == 503) {
		*hname = "Retry-After";
		*hvalue = "1";
	} else if (e->status == 405) {
		*hname = "Allow";
		*hvalue = allow_of(url);
	}
	return body;
}

enum MHD_Result http_respond_error(const struct front *f, struct MHD_Connection *c, const struct tls_peer *peer,
                                   const char *method, const char *url, const struct request_error *e,
                                   cJSON *audit_line)
{
	const char *hname, *hvalue;
	char *body = http_error_body(e, url, &hname, &hvalue);
	enum MHD_Result r = http_respond(c, (unsigned)e->status, body ? body : "{}", hname, hvalue);
	free(body);
	http_audit(f, peer, method, url, (unsigned)e->status, e->code, audit_line);
	return r;
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
		enum MHD_Result r = http_respond(c, 200, body, NULL, NULL);
		http_audit(f, &x->peer, method, url, 200, NULL, line);
		return r;
	}
	cJSON_Delete(root);
	return http_respond_error(f, c, &x->peer, method, url, &e, line);
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
		return http_respond_error(f, c, &x->peer, method, url, &e, NULL);
	}
	if (x->route == ROUTE_JOB_KILL) {
		const char *state;
		if (jobs_kill(f->jobs, id, x->peer.fp, &state) == 0) {
			char b[128];
			snprintf(b, sizeof(b), "{\"job_id\":\"%s\",\"state\":\"%s\"}", id, state);
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
			return http_respond_error(f, c, &x->peer, method, url, &e, NULL);
		}
		body = jobs_output(f->jobs, id, x->peer.fp, which, n);
	} else {
		body = jobs_status(f->jobs, id, x->peer.fp);
	}
	if (!body) {
		/* Another certificate's job is no job at all. */
		request_error_set(&e, 404, "unknown_job", "There is no job '%.40s' of this certificate (it may have ended more than job_retain_s ago); GET /v0/jobs lists them.", id[0] ? id : rest);
		return http_respond_error(f, c, &x->peer, method, url, &e, NULL);
	}
reply:
	if (!body) {
		request_error_set(&e, 500, "internal", "The front is out of memory.");
		return http_respond_error(f, c, &x->peer, method, url, &e, NULL);
	}
	http_audit(f, &x->peer, method, url, 200, NULL, NULL);
	enum MHD_Result ret = http_respond(c, 200, body, NULL, NULL);
	free(body);
	return ret;
}

/* First call for a request: everything that can be decided before a body. */
static int admit(struct front *f, struct MHD_Connection *c, struct conn_ctx *x, const char *method,
                 const char *url, struct request_error *e)
{
	char why[320];
	struct socket_state *st = socket_state_of(c);
	if (tls_identify(c, st ? st->seen : NULL, f->recent, &x->peer, why, sizeof(why)) < 0) {
		request_error_set(e, 401, "bad_certificate", "%s", why);
		return -1;
	}
	if (st)
		connguard_verified(f->guard, st->guard);
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, f->cfg->connection_timeout_s);
	if (x->peer.role == TLS_ROLE_NONE) {
		request_error_set(e, 403, "no_role", "Certificate '%.64s' carries no known role (OU '%.32s'); roles are app, orchestrator and person.",
		                  x->peer.cn, x->peer.ou);
		return -1;
	}
	bool path_known = false;
	for (size_t i = 0; i < N_ROUTES; i++) {
		if (!route_matches(i, url))
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
		*con_cls = x;
		if (admit(f, c, x, method, url, &e) < 0)
			return http_respond_error(f, c, &x->peer, method, url, &e, NULL);
		return MHD_YES;
	}
	if (x->flow) /* resumed: its reply is ready */
		return runflow_resumed(x->flow, c);
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
				http_audit(f, &x->peer, method, url, 413, "body_too_large", NULL);
				return MHD_NO;
			}
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (x->too_large) {
		request_error_set(&e, 413, "body_too_large", "The body is larger than %zu bytes.", f->cfg->max_body);
		return http_respond_error(f, c, &x->peer, method, url, &e, NULL);
	}
	switch (x->route) {
	case ROUTE_RUN:
	case ROUTE_JOB_START:
		return runflow_request(f, c, &x->peer, method, url, x->body, x->len, x->route == ROUTE_JOB_START,
		                       &x->flow);
	case ROUTE_JOB_LIST:
	case ROUTE_JOB_GET:
	case ROUTE_JOB_KILL:
		return handle_job(f, c, x, method, url);
	case ROUTE_PROFILES:
		http_audit(f, &x->peer, method, url, 200, NULL, NULL);
		return http_respond(c, 200, f->profiles_json, NULL, NULL);
	case ROUTE_POLICY:
		http_audit(f, &x->peer, method, url, 200, NULL, NULL);
		return http_respond(c, 200, f->policy_json, NULL, NULL);
	case ROUTE_APPROVALS: {
		/* Only a person sees the exact commands, and every identity's
		 * (approval.h); an agent its own. */
		char *list = approvals_list_json(f->approvals, x->peer.role == TLS_ROLE_PERSON, x->peer.fp);
		enum MHD_Result r = http_respond(c, 200, list ? list : "{\"approvals\":[]}", NULL, NULL);
		free(list);
		http_audit(f, &x->peer, method, url, 200, NULL, NULL);
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
	(void)cls;
	(void)c;
	(void)toe;
	if (!x)
		return;
	if (x->flow)
		runflow_completed(x->flow);
	if (x->body)
		explicit_bzero(x->body, x->len);
	free(x->body);
	free(x);
	*con_cls = NULL;
}

/* Until it has shown a verified certificate, a connection gets at most
 * PREAUTH_TIMEOUT_S of silence: strangers who connect and stall hold a slot
 * of the connection limit for seconds, not the whole idle timeout.  Silence
 * is libmicrohttpd's to see; connguard.h bounds the whole time instead,
 * for strangers who trickle a byte at a time (two bounds, two attacks). */
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
		st->guard = ci && f->guard ? connguard_add(f->guard, ci->connect_fd,
		                                           peeruid_of(f->peer_diag, ci->connect_fd))
		                           : NULL;
		st->idle_s = f->cfg->connection_timeout_s;
	}
	*socket_ctx = st;
	tls_require_client_cert(c);
	if (tls_tickets_enable(f->tickets, c) < 0)
		log_debug("session tickets are off for a connection: GnuTLS refused the key");
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
	/* No thread of libmicrohttpd's own: its epoll descriptor is watched by
	 * the front's loop, which calls MHD_run (front.c). */
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TLS | MHD_USE_ERROR_LOG;
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
