/*
 * proxy_request.h - what a client of the egress proxy asks, read from its
 * bytes alone: the request head parsed and checked, the head the origin
 * gets instead, and where the request's body ends.  Pure functions: no
 * sockets, no threads (proxy.c does the I/O); tests/fuzz/fuzz_proxy.c feeds
 * proxy_parse_head.
 *
 * Trust: every byte comes from the sandboxed command and is hostile.  The
 * proxy and the origin must never disagree on where a line, the head or
 * the body ends (request smuggling), so each is read strictly and anything
 * ambiguous is refused, never guessed at.
 */
#ifndef SHARNESS_PROXY_REQUEST_H
#define SHARNESS_PROXY_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy_host.h"

#define PROXY_CONNECTION_NAMES_MAX 16 /* names a request's Connection headers may list */

/* A request head's first line, parsed and checked (proxy_parse_head). */
struct proxy_request {
	char method[17];
	char host_text[PROXY_HOST_MAX + 1]; /* canonical, or a printable copy of the raw host */
	unsigned port;
	bool connect;                       /* CONNECT host:port; else an absolute http:// URL */
	const char *target_path;            /* plain HTTP: the origin-form path, inside the head */
	size_t target_path_len;
	uint64_t body_len;                  /* plain HTTP: its Content-Length (0 without one) */
	bool chunked;                       /* plain HTTP: Transfer-Encoding: chunked instead */
	struct proxy_host host;
};

/* Parse a request head (`len` bytes, ending in CRLFCRLF): every line ends
 * in CRLF with no other control byte, the request line is METHOD SP target
 * SP HTTP/1.x, the target is CONNECT's host:port or an http:// URL whose
 * host proxy_authority_parse accepts.  0, or -1 with one sentence in `why`
 * (the proxy answers 400 with it).  Pure: tests/fuzz/fuzz_proxy.c feeds it. */
int proxy_parse_head(const char *head, size_t len, struct proxy_request *rq, char *why, size_t whylen);

/* The head the origin gets for a plain request `rq` parsed from `head`:
 * "METHOD /path HTTP/1.1", a Host rebuilt from the checked URL, the
 * end-to-end headers (not the hop-by-hop ones, not those its Connection
 * headers name, not Proxy-*), "Connection: close".  malloc'd, its length
 * in *outlen; NULL with errno EINVAL past PROXY_CONNECTION_NAMES_MAX
 * Connection names, ENOMEM. */
char *proxy_rewrite_head(const char *head, size_t head_len, const struct proxy_request *rq, size_t *outlen);

/* The client's bytes that belong to its request: a tunnel's all, a plain
 * request's body (its Content-Length, or its chunks up to the last one's
 * end), so that whatever follows is dropped.  Chunks are forwarded as they
 * came; only their framing is read, strictly (CRLF, 1-15 hex digits within
 * `max`, spaces then ';' before an extension, no control byte in one, no
 * trailer fields).  Set chunked, left (the Content-Length, or UINT64_MAX
 * for a tunnel) and max; the rest zero. */
struct proxy_body {
	bool chunked;
	uint64_t left; /* bytes of the body, or of the current chunk, still to come */
	uint64_t max;  /* a chunk larger than this (the connection's byte limit) can never end */
	enum proxy_body_step {
		PROXY_BODY_SIZE,
		PROXY_BODY_BWS,
		PROXY_BODY_EXT,
		PROXY_BODY_SIZE_LF,
		PROXY_BODY_DATA,
		PROXY_BODY_DATA_CR,
		PROXY_BODY_DATA_LF,
		PROXY_BODY_END_CR,
		PROXY_BODY_END_LF,
		PROXY_BODY_DONE,
		PROXY_BODY_BAD /* the chunks' framing is broken: the connection ends */
	} step;
	unsigned digits;
};

/* How many of the `n` bytes at `buf` are the body's (the rest is past its
 * end); b->step is PROXY_BODY_BAD once the framing is broken, and stays. */
size_t proxy_body_take(struct proxy_body *b, const char *buf, size_t n);

#endif
