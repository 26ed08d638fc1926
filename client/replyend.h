/*
 * replyend.h - where an HTTP/1.1 reply ends, seen as it streams past
 * (RFC 9112 §6.3): what the relay (relay.h) needs to know before it hands
 * the connection that carried the reply to the next client.  It reads the
 * status line and the framing headers (Content-Length, Transfer-Encoding,
 * Connection), Keep-Alive's timeout and the chunk sizes, and nothing else;
 * it changes nothing.
 *
 * A reply it cannot frame for sure (a length it cannot parse, no length,
 * HTTP/1.0, a header block over REPLYEND_HEAD_MAX) makes the connection
 * unfit for another request, never fit: the cost of a mistake is one new
 * connection, not a reply spliced into the next one.
 *
 * Trust: the bytes are the daemon's, on a mutual-TLS connection.
 */
#ifndef SHARNESS_CLIENT_REPLYEND_H
#define SHARNESS_CLIENT_REPLYEND_H

#include <stdbool.h>
#include <stddef.h>

#define REPLYEND_HEAD_MAX 16384

struct replyend {
	int state;		 /* enum in replyend.c; 0 is the start */
	bool close;		 /* "Connection: close" */
	unsigned keep_alive_s;	 /* "Keep-Alive: timeout=N": N, else 0 */
	unsigned long long left; /* of the body or the chunk */
	size_t n;		 /* bytes in `line` */
	char line[REPLYEND_HEAD_MAX];
};

/* The value of header `name` in the block [p, end) (status line and
 * headers, each line ending in '\n'), leading blanks skipped, or NULL;
 * *vlen (may be NULL) gets its length without trailing blanks and CR.
 * Names are case-insensitive (RFC 9110 §5.1).  Also http.c's. */
const char *replyend_header(const char *p, const char *end, const char *name, size_t *vlen);

/* Take the next `len` bytes of the stream. */
void replyend_feed(struct replyend *e, const char *p, size_t len);

/* The reply is complete, nothing followed it, and the daemon keeps the
 * connection open for another request. */
bool replyend_reusable(const struct replyend *e);

/* The client's side, as it streams to the daemon: a request line and
 * headers, and a Content-Length body (all our client sends).  A second
 * request behind the first (pipelined: its reply would reach the next
 * client, review s36), a Transfer-Encoding, a length it cannot parse or a
 * head over REPLYEND_HEAD_MAX make the connection unfit. */
struct requestend {
	int state;		 /* 0 head, 1 body, 2 whole, 3 unfit */
	unsigned long long left; /* of the body */
	size_t n;		 /* bytes in `head` */
	char head[REPLYEND_HEAD_MAX];
};

void requestend_feed(struct requestend *e, const char *p, size_t len);

/* Exactly one whole request was sent, and nothing after it. */
bool requestend_one(const struct requestend *e);

#endif
