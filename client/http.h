/*
 * http.h - one HTTP/1.1 request over mutual TLS (OpenSSL), one connection.
 *
 * The connection is the relay's when one runs for this identity (relay.h),
 * else one of this process's own (tls.h: the checks of the daemon's
 * certificate, the ticket).  The request carries Content-Length and
 * "Connection: close"; the reply may use Content-Length, chunked encoding
 * or close-delimiting.  After a request of its own worked and no relay
 * answered, the relay is started for the next process.
 */
#ifndef SHARNESS_CLIENT_HTTP_H
#define SHARNESS_CLIENT_HTTP_H

#include <stddef.h>

#include "conf.h"

/* A reply body larger than this is refused (output caps are far below it). */
#define HTTP_MAX_REPLY (256u << 20)

struct http_reply {
	int status;
	char *body;         /* NUL-terminated, owned */
	size_t len;
	long retry_after;   /* seconds from Retry-After, -1 when absent */
	/* Set by the caller before http_request: a chunked 2xx body is handed
	 * over piece by piece as it arrives (a streamed run), and `body` stays
	 * empty.  NULL: the whole body is read into `body`. */
	void (*on_data)(void *arg, const char *buf, size_t len);
	void *on_data_arg;
	/* Set by the caller, may be NULL: called once, on the calling thread,
	 * when the reply is not complete slow_ms after the request went out
	 * (run.c then starts looking for an approval the run waits for). */
	void (*on_slow)(void *arg);
	void *on_slow_arg;
	long slow_ms;
};

/* Sends METHOD conf->base+path with an optional JSON body.  Returns 0 when an
 * HTTP reply (any status) was read, -1 with err set to one sentence otherwise
 * ("cannot reach sharnessd at https://127.0.0.1:7443: Connection refused").
 * `headers` (may be NULL): more header lines, each ending in "\r\n". */
int http_request(const struct conf *c, const char *method, const char *path, const char *body,
		 size_t body_len, const char *headers, struct http_reply *r, char *err, size_t errlen);
void http_reply_free(struct http_reply *r);

#endif
