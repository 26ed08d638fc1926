/*
 * http.h - what the request handlers share (http.c, runflow.c): replies,
 * error replies and the audit line of a request.
 *
 * Trust: front; messages quote client text, cleaned and cut here.
 */
#ifndef SHARNESS_HTTP_H
#define SHARNESS_HTTP_H

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "front.h"
#include "request.h"
#include "tls.h"

/* "Keep-Alive: timeout=N", N the idle timeout (limits.idle_timeout_s) the
 * connection gets after a reply: how a client that keeps connections ready
 * (the relay, client/relay.h) learns when the daemon would cut them.  Each
 * reply of ours carries it (http_respond, and runflow.c's streamed one);
 * libmicrohttpd's own refusals of malformed HTTP do not. */
void http_keep_alive(struct MHD_Connection *c, struct MHD_Response *r);
/* A JSON reply (the body is copied), with one extra header when hname. */
enum MHD_Result http_respond(struct MHD_Connection *c, unsigned status, const char *body, const char *hname,
                             const char *hvalue);
/* An error's body {"error":{"code","message"}} (malloc'd) and the header it
 * needs (Retry-After for a 503, Allow for a 405; *hname NULL: none). */
char *http_error_body(const struct request_error *e, const char *url, const char **hname, const char **hvalue);
/* Reply with `e` and write the request's audit line (`audit_line` is
 * taken; NULL: a line of its own). */
enum MHD_Result http_respond_error(const struct front *f, struct MHD_Connection *c, const struct tls_peer *peer,
                                   const char *method, const char *url, const struct request_error *e,
                                   cJSON *audit_line);
/* The request's audit line: `line` (taken; NULL: a new one) with method,
 * path, status, the peer and the error code. */
void http_audit(const struct front *f, const struct tls_peer *peer, const char *method, const char *url,
                unsigned status, const char *code, cJSON *line);

#endif
