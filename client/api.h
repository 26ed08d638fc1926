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
/* The same with more request header lines (`headers`, may be NULL, each
 * ending in "\r\n"); *retry_after gets the reply's Retry-After in seconds
 * (-1 when absent or no reply). */
int api_call_ra(const struct conf *c, const char *method, const char *path, json_t *body, const char *headers,
		json_t **out, int *status, long *retry_after, char *err, size_t errlen);
/* The same, and a chunked 2xx body (a streamed run's NDJSON) goes to
 * `on_data` piece by piece as it arrives: 0 with *out NULL then.  An error
 * reply is read and reported as above. */
int api_call_stream(const struct conf *c, const char *method, const char *path, json_t *body, const char *headers,
		    void (*on_data)(void *, const char *, size_t), void *arg, json_t **out, int *status,
		    long *retry_after, char *err, size_t errlen);

#endif
