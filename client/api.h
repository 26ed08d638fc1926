/*
 * api.h - the daemon's JSON API (SPEC §3) on top of http.h, with jansson.
 *
 * Every failure, local or remote, becomes one sentence a person can act on:
 * transport and TLS problems from http.c, and for 4xx/5xx the daemon's own
 * error.message.
 */
#ifndef SHARNESS_CLIENT_API_H
#define SHARNESS_CLIENT_API_H

#include <stddef.h>

#include <jansson.h>

#include "conf.h"

/* Calls METHOD path with `body` (may be NULL; not stolen).  On a 2xx reply
 * with a JSON body returns 0 and sets *out (caller json_decref's).  Otherwise
 * returns -1 with err set; *status is the HTTP status or 0 when no reply. */
int api_call(const struct conf *c, const char *method, const char *path, json_t *body, json_t **out,
	     int *status, char *err, size_t errlen);
/* What a run's request adds (run.c); every field may be 0 or NULL. */
struct api_extra {
	const char *headers; /* more request header lines, each ending in "\r\n" */
	/* A chunked 2xx body (a streamed run's NDJSON) goes to on_data piece
	 * by piece as it arrives, and *out stays NULL. */
	void (*on_data)(void *arg, const char *buf, size_t len);
	void *arg;
	/* Called once, on this thread, when the reply is not complete slow_ms
	 * after the request went out (http.h). */
	void (*on_slow)(void *arg);
	void *slow_arg;
	long slow_ms;
	long retry_after; /* set: the reply's Retry-After in seconds, -1 when absent or no reply */
};

/* api_call with `x`.  An error reply is read and reported as above. */
int api_call_ex(const struct conf *c, const char *method, const char *path, json_t *body, struct api_extra *x,
		json_t **out, int *status, char *err, size_t errlen);

#endif
