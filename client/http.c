/*
 * http.c - minimal HTTP/1.1 over mutual TLS (see http.h): a connection of
 * its own (tls.h) or a relay's (relay.h).
 *
 * Trust: the peer is authenticated by certificate before any byte of the
 * reply is parsed (by us, or by our own relay, a process of our uid); the reply is still parsed defensively (sizes capped,
 * chunk lengths checked) because a bug in the daemon must not become one
 * here.
 */
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "buf.h"
#include "monotime.h"
#include "relay.h"
#include "replyend.h"
#include "ticket.h"
#include "tls.h"

/* The reply is read in pieces of at most a TLS record's plaintext. */
#define READ_CHUNK 16384

/* Where the request goes: a TLS connection of this process's own, or the
 * socket of a relay (relay.h) that holds one already. */
struct link {
	struct tls_conn tls; /* tls.ssl NULL: the relay */
	int relay_fd;
};

static int link_write(struct link *l, const char *p, size_t n)
{
	if (!l->tls.ssl)
		return fd_write_all(l->relay_fd, p, n);
	while (n) {
		int w = SSL_write(l->tls.ssl, p, n > (1u << 30) ? 1 << 30 : (int)n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The caller's on_slow, once, if nothing that is already here or arrives
 * before `due` (monotonic ms) ends the wait. */
struct slow {
	void (*fn)(void *arg);
	void *arg;
	int64_t due;
};

/* Whether a byte of the reply can be read now without blocking.  Under
 * TLS a readable socket may hold only the daemon's session tickets, which
 * are taken in here without waiting for more. */
static bool reply_ready(struct link *l)
{
	if (!l->tls.ssl)
		return true;
	int fl = fcntl(l->tls.fd, F_GETFL);
	if (fl < 0 || fcntl(l->tls.fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return true;
	char b;
	int m = SSL_peek(l->tls.ssl, &b, 1);
	bool ready = m > 0 || SSL_get_error(l->tls.ssl, m) != SSL_ERROR_WANT_READ; /* data, or an end to report */
	(void)fcntl(l->tls.fd, F_SETFL, fl);
	return ready;
}

static void slow_check(struct link *l, struct slow *s)
{
	if (!s->fn)
		return;
	for (;;) {
		if (l->tls.ssl && SSL_has_pending(l->tls.ssl))
			return;
		int64_t left = s->due - monotime_ms();
		struct pollfd p = {.fd = l->tls.ssl ? l->tls.fd : l->relay_fd, .events = POLLIN};
		int n = left > 0 ? poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (reply_ready(l))
			return;
	}
	s->fn(s->arg);
	s->fn = NULL;
}

/* Bytes read (> 0), 0 at the end, -1 on an error said in `why`.  At the
 * end of a TLS connection that sent nothing (`first`), `why` gets the
 * alert, if any: under TLS 1.3 the daemon checks our certificate after the
 * handshake, so its refusal arrives as one. */
static int link_read(struct link *l, char *buf, size_t n, int first, char *why, size_t whylen)
{
	if (!l->tls.ssl) {
		for (;;) {
			ssize_t r = read(l->relay_fd, buf, n);
			if (r >= 0)
				return (int)r;
			if (errno != EINTR) {
				snprintf(why, whylen, "%s (through the relay)", strerror(errno));
				return -1;
			}
		}
	}
	int r = SSL_read(l->tls.ssl, buf, n > (1u << 30) ? 1 << 30 : (int)n);
	if (r > 0)
		return r;
	int e = SSL_get_error(l->tls.ssl, r);
	if (e != SSL_ERROR_ZERO_RETURN && e != SSL_ERROR_SYSCALL && e != SSL_ERROR_SSL) {
		tls_reason(why, whylen);
		return -1;
	}
	if (e == SSL_ERROR_SSL && first)
		tls_reason(why, whylen);
	return 0;
}

/* Decodes a chunked body in place.  Returns 1 complete, 0 need more, -1 bad. */
static int dechunk(const char *in, size_t n, struct buf *out)
{
	size_t i = 0;
	out->len = 0;
	for (;;) {
		const char *eol = memchr(in + i, '\n', n - i);
		if (!eol)
			return 0;
		char *endp;
		errno = 0;
		unsigned long long sz = strtoull(in + i, &endp, 16);
		if (endp == in + i || errno || sz > HTTP_MAX_REPLY)
			return -1;
		i = (size_t)(eol - in) + 1;
		if (sz == 0)
			return 1; /* trailers are ignored */
		if (n - i < sz + 2)
			return 0;
		if (buf_append(out, in + i, (size_t)sz) < 0)
			return -1;
		i += (size_t)sz;
		if (in[i] == '\r')
			i++;
		if (i >= n || in[i] != '\n')
			return -1;
		i++;
	}
}

/* A streamed body: hand over each complete chunk from raw[*pos] on and
 * drop it from raw, so a long stream never grows the buffer.  Returns 1 at
 * the last chunk, 0 when more must come, -1 on a malformed chunk. */
static int pass_chunks(struct buf *raw, size_t hlen, size_t *pos, void (*cb)(void *, const char *, size_t),
		       void *arg)
{
	int rc = 0;
	for (;;) {
		const char *eol = memchr(raw->data + *pos, '\n', raw->len - *pos);
		if (!eol)
			break;
		char *endp;
		errno = 0;
		unsigned long long sz = strtoull(raw->data + *pos, &endp, 16);
		if (endp == raw->data + *pos || errno || sz > HTTP_MAX_REPLY)
			return -1;
		size_t start = (size_t)(eol - raw->data) + 1;
		if (sz == 0) {
			rc = 1;
			*pos = raw->len;
			break;
		}
		if (raw->len - start < sz + 2)
			break;
		cb(arg, raw->data + start, (size_t)sz);
		size_t i = start + (size_t)sz;
		if (raw->data[i] == '\r')
			i++;
		if (i >= raw->len || raw->data[i] != '\n')
			return -1;
		*pos = i + 1;
	}
	/* Drop what was handed over. */
	if (*pos > hlen) {
		memmove(raw->data + hlen, raw->data + *pos, raw->len - *pos);
		raw->len -= *pos - hlen;
		*pos = hlen;
	}
	return rc;
}

int http_request(const struct conf *c, const char *method, const char *path, const char *body,
		 size_t body_len, const char *headers, struct http_reply *r, char *err, size_t errlen)
{
	struct buf raw = {.max = HTTP_MAX_REPLY + 65536}, req = {0}, dec = {.max = HTTP_MAX_REPLY};
	char why[256];
	int rc = -1, start_relay = 0;
	void (*on_data)(void *, const char *, size_t) = r->on_data;
	void *on_data_arg = r->on_data_arg;
	struct slow slow = {.fn = r->on_slow, .arg = r->on_slow_arg};
	long slow_ms = r->slow_ms;
	size_t pos = 0; /* on_data: where the next chunk starts in raw */
	int streamed_all = 0;
	struct link l = {.tls = {.fd = -1}, .relay_fd = -1};
	SSL_CTX *ctx = NULL;
	char *chunk = NULL;
	memset(r, 0, sizeof *r);
	r->retry_after = -1;

	/* A relay's connection is the same identity's, made by the same code
	 * (relay.h); without one, a connection of our own. */
	if (!c->no_ticket)
		l.relay_fd = relay_connect(c, &start_relay);
	if (l.relay_fd < 0) {
		ctx = tls_ctx_new(c, err, errlen);
		if (!ctx)
			return -1;
		/* A ticket is only ever found for the very CA, certificate and key
		 * files it was earned with (ticket.h), so skipping their parsing
		 * changes no outcome. */
		SSL_SESSION *kept = c->no_ticket ? NULL : ticket_load(c);
		int o = tls_open(&l.tls, c, ctx, kept, 0, err, errlen);
		SSL_SESSION_free(kept);
		if (o < 0)
			goto out;
	}
	/* Through the relay the connection may serve the next client once this
	 * reply is whole (relay.h); our own ends with us. */
	if (buf_printf(&req, "%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: sharness-client\r\n"
			     "Accept: application/json\r\n%s",
		       method, c->base, path, strchr(c->host, ':') ? "[" : "", c->host,
		       strchr(c->host, ':') ? "]" : "", c->port, l.relay_fd >= 0 ? "" : "Connection: close\r\n") < 0 ||
	    (body && buf_printf(&req, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len) < 0) ||
	    (headers && buf_puts(&req, headers) < 0) ||
	    buf_puts(&req, "\r\n") < 0 || (body && buf_append(&req, body, body_len) < 0)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	why[0] = '\0';
	if (link_write(&l, req.data, req.len) < 0) {
		if (l.tls.ssl)
			tls_reason(why, sizeof why);
		else
			snprintf(why, sizeof why, "%s (through the relay)", strerror(errno));
		snprintf(err, errlen, "sharnessd at %s closed the connection while receiving the request: %s",
			 c->url, why);
		goto out;
	}
	why[0] = '\0';
	slow.due = monotime_ms() + slow_ms;

	/* Read until the reply is complete by its own framing, or EOF, in
	 * pieces of a TLS record's plaintext at most.  On the heap: a fresh
	 * client's stack is faulted in page by page and a large frame probed
	 * whole (-fstack-clash-protection), four page faults for 16 KiB on
	 * the stack where the heap pays only for the bytes a reply fills
	 * (docs/bench.md, "Round trip", session 19). */
	chunk = malloc(READ_CHUNK);
	if (!chunk) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	size_t hlen = 0;         /* bytes of status line + headers incl. blank line */
	long long clen = -1;
	int chunked = 0, eof = 0;
	for (;;) {
		if (hlen) {
			if (clen >= 0 && raw.len - hlen >= (size_t)clen)
				break;
			if (chunked && on_data && r->status >= 200 && r->status < 300) {
				if (!pos)
					pos = hlen;
				int d = pass_chunks(&raw, hlen, &pos, on_data, on_data_arg);
				if (d < 0) {
					snprintf(err, errlen, "sharnessd at %s sent a malformed chunked reply", c->url);
					goto out;
				}
				if (d == 1) {
					streamed_all = 1;
					break;
				}
			} else if (chunked) {
				int d = dechunk(raw.data + hlen, raw.len - hlen, &dec);
				if (d < 0) {
					snprintf(err, errlen, "sharnessd at %s sent a malformed chunked reply", c->url);
					goto out;
				}
				if (d == 1)
					break;
			}
			if (eof)
				break;
		} else if (eof) {
			/* Under TLS 1.3 the server checks our certificate after the
			 * handshake, so its refusal arrives here as an alert. */
			if (*why)
				snprintf(err, errlen, "sharnessd at %s refused the connection: %s (is %s a certificate it accepts?)",
					 c->url, why, c->cert);
			else
				snprintf(err, errlen, "sharnessd at %s closed the connection without a reply", c->url);
			goto out;
		}
		slow_check(&l, &slow);
		int n = link_read(&l, chunk, READ_CHUNK, raw.len == 0, why, sizeof why);
		if (n < 0) {
			snprintf(err, errlen, "reading the reply from sharnessd at %s failed: %s", c->url, why);
			goto out;
		}
		if (n == 0) {
			eof = 1;
			continue;
		}
		if (buf_append(&raw, chunk, (size_t)n) < 0) {
			snprintf(err, errlen, "the reply from sharnessd at %s is larger than %u MiB", c->url,
				 HTTP_MAX_REPLY >> 20);
			goto out;
		}
		if (!hlen) {
			char *e = strstr(raw.data, "\r\n\r\n");
			if (!e && raw.len > 65536) {
				snprintf(err, errlen, "sharnessd at %s sent oversized headers", c->url);
				goto out;
			}
			if (!e)
				continue;
			hlen = (size_t)(e - raw.data) + 4;
			if (sscanf(raw.data, "HTTP/1.%*1[01] %3d", &r->status) != 1 || r->status < 100) {
				snprintf(err, errlen, "sharnessd at %s did not answer with HTTP/1.1", c->url);
				goto out;
			}
			const char *hend = raw.data + hlen;
			const char *v = replyend_header(raw.data, hend, "Content-Length", NULL);
			if (v) {
				char *endp;
				clen = strtoll(v, &endp, 10);
				if (endp == v || clen < 0 || clen > (long long)HTTP_MAX_REPLY) {
					snprintf(err, errlen, "sharnessd at %s sent a bad Content-Length", c->url);
					goto out;
				}
			}
			v = replyend_header(raw.data, hend, "Transfer-Encoding", NULL);
			if (v && strncasecmp(v, "chunked", 7) == 0) {
				chunked = 1;
				clen = -1;
			}
			v = replyend_header(raw.data, hend, "Retry-After", NULL);
			if (v)
				r->retry_after = strtol(v, NULL, 10);
		}
	}
	if (chunked && on_data && r->status >= 200 && r->status < 300) {
		if (!streamed_all) {
			snprintf(err, errlen, "the reply from sharnessd at %s was cut short", c->url);
			goto out;
		}
		r->body = strdup("");
		r->len = 0;
	} else if (chunked) {
		if (dechunk(raw.data + hlen, raw.len - hlen, &dec) != 1) {
			snprintf(err, errlen, "the reply from sharnessd at %s was cut short", c->url);
			goto out;
		}
		r->body = dec.data ? dec.data : strdup("");
		r->len = dec.len;
		dec.data = NULL;
	} else {
		size_t blen = raw.len - hlen;
		if (clen >= 0) {
			if (blen < (size_t)clen) {
				snprintf(err, errlen, "the reply from sharnessd at %s was cut short", c->url);
				goto out;
			}
			blen = (size_t)clen;
		}
		r->body = malloc(blen + 1);
		if (r->body) {
			memcpy(r->body, raw.data + hlen, blen);
			r->body[blen] = '\0';
		}
		r->len = blen;
	}
	if (!r->body) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	if (l.tls.ssl) {
		/* A ticket is kept only from a daemon that took our certificate,
		 * and only then is a relay worth starting. */
		if (rc == 0 && r->status != 401 && !c->no_ticket) {
			ticket_save(c, l.tls.fresh);
			if (start_relay)
				relay_start(c);
		}
		tls_close(&l.tls, rc == 0);
	}
	if (l.relay_fd >= 0)
		close(l.relay_fd);
	if (ctx) /* through the relay none was made: its code stays untouched */
		SSL_CTX_free(ctx);
	free(chunk);
	buf_free(&raw);
	buf_free(&req);
	buf_free(&dec);
	if (rc < 0)
		http_reply_free(r);
	return rc;
}

void http_reply_free(struct http_reply *r)
{
	if (!r)
		return;
	free(r->body);
	r->body = NULL;
	r->len = 0;
}
