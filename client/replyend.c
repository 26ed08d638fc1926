/*
 * replyend.c - see replyend.h.
 */
#include "replyend.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
	HEAD,	    /* status line and headers, into `line` */
	BODY,	    /* `left` bytes of a Content-Length body */
	CHUNK_SIZE, /* a chunk's size line, into `line` */
	CHUNK_DATA, /* `left` bytes of a chunk */
	CHUNK_END,  /* the CRLF after a chunk's data */
	TRAILER,    /* trailer lines until an empty one; `n` counts the line */
	DONE,	    /* complete: any more byte makes it UNFIT */
	UNFIT,	    /* not framed for sure: never reused */
};

const char *replyend_header(const char *p, const char *end, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	for (const char *l = memchr(p, '\n', (size_t)(end - p)); l && l + 1 < end;
	     l = memchr(l + 1, '\n', (size_t)(end - l - 1))) {
		const char *s = l + 1;
		if ((size_t)(end - s) > nl && strncasecmp(s, name, nl) == 0 && s[nl] == ':') {
			const char *v = s + nl + 1;
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			const char *ve = memchr(v, '\n', (size_t)(end - v));
			if (!ve)
				return NULL;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (vlen)
				*vlen = (size_t)(ve - v);
			return v;
		}
	}
	return NULL;
}

static bool is(const char *v, size_t n, const char *word)
{
	return v && n == strlen(word) && strncasecmp(v, word, n) == 0;
}

/* N of "timeout=N" among the parameters of a Keep-Alive header (RFC 2068
 * §19.7.1.1: how long the server keeps an idle connection), else 0. */
static unsigned keep_alive_timeout(const char *v, size_t n)
{
	if (!v)
		return 0;
	const char *end = v + n;
	while (v && v < end) {
		while (v < end && (*v == ' ' || *v == ','))
			v++;
		if (end - v > 8 && strncasecmp(v, "timeout=", 8) == 0) {
			unsigned s = 0;
			for (v += 8; v < end && *v >= '0' && *v <= '9' && s < 1000000; v++)
				s = s * 10 + (unsigned)(*v - '0');
			return s;
		}
		v = memchr(v, ',', (size_t)(end - v));
	}
	return 0;
}

/* The block in `line` is complete: decide how the body is framed. */
static int head_done(struct replyend *e)
{
	const char *p = e->line, *end = e->line + e->n;
	if (e->n < 12 || strncmp(p, "HTTP/1.1 ", 9) != 0)
		return UNFIT;
	int status = atoi(p + 9);
	size_t n = 0;
	const char *v = replyend_header(p, end, "Connection", &n);
	e->close = e->close || is(v, n, "close");
	if (status >= 100 && status < 200) {
		e->n = 0; /* an interim reply: the final one follows */
		return HEAD;
	}
	v = replyend_header(p, end, "Keep-Alive", &n);
	e->keep_alive_s = keep_alive_timeout(v, n);
	if (status == 204 || status == 304)
		return DONE;
	v = replyend_header(p, end, "Transfer-Encoding", &n);
	if (v)
		return is(v, n, "chunked") ? (e->n = 0, CHUNK_SIZE) : UNFIT;
	v = replyend_header(p, end, "Content-Length", &n);
	if (!v || n == 0 || n > 18 || strspn(v, "0123456789") < n)
		return UNFIT;
	e->left = strtoull(v, NULL, 10);
	return e->left ? BODY : DONE;
}

void replyend_feed(struct replyend *e, const char *p, size_t len)
{
	while (len && e->state != UNFIT) {
		if (e->state == DONE) {
			e->state = UNFIT;
			break;
		}
		if (e->state == BODY || e->state == CHUNK_DATA) {
			size_t take = e->left < len ? (size_t)e->left : len;
			e->left -= take;
			p += take;
			len -= take;
			if (!e->left)
				e->state = e->state == BODY ? DONE : (e->n = 0, CHUNK_END);
			continue;
		}
		char c = *p++;
		len--;
		if (e->state == TRAILER) {
			if (c == '\n') {
				if (e->n == 0)
					e->state = DONE;
				e->n = 0;
			} else if (c != '\r') {
				e->n++;
			}
			continue;
		}
		if (e->n >= (e->state == HEAD ? sizeof(e->line) : 64)) {
			e->state = UNFIT;
			break;
		}
		e->line[e->n++] = c;
		if (c != '\n')
			continue;
		if (e->state == HEAD) {
			if (e->n >= 4 && memcmp(e->line + e->n - 4, "\r\n\r\n", 4) == 0)
				e->state = head_done(e);
		} else if (e->state == CHUNK_END) {
			e->state = e->n == 2 && e->line[0] == '\r' ? CHUNK_SIZE : UNFIT;
			e->n = 0;
		} else { /* CHUNK_SIZE: hex digits, then extensions after ';' */
			char *endp;
			e->line[e->n] = '\0';
			unsigned long long size = strtoull(e->line, &endp, 16);
			if (endp == e->line || (*endp != ';' && *endp != '\r') || size > (1ULL << 40)) {
				e->state = UNFIT;
				break;
			}
			e->n = 0;
			e->left = size;
			e->state = size ? CHUNK_DATA : TRAILER;
		}
	}
}

bool replyend_reusable(const struct replyend *e)
{
	return e->state == DONE && !e->close;
}

void requestend_feed(struct requestend *e, const char *p, size_t len)
{
	while (len > 0 && e->state < 2) {
		if (e->state == 1) {
			size_t k = len < e->left ? len : (size_t)e->left;
			e->left -= k;
			p += k;
			len -= k;
			e->state = e->left ? 1 : 2;
			continue;
		}
		size_t take = sizeof e->head - e->n < len ? sizeof e->head - e->n : len, from = e->n > 3 ? e->n - 3 : 0;
		if (take == 0) {
			e->state = 3;
			return;
		}
		memcpy(e->head + e->n, p, take);
		/* Only the framing our client sends: every line ends in CRLF.  A
		 * bare LF or CR, a NUL or a folded line may end a line or a head
		 * for the daemon where it does not for us (review s36). */
		for (size_t i = e->n; i < e->n + take; i++) {
			char ch = e->head[i], prev = i ? e->head[i - 1] : '\0';
			if (ch == '\0' || (ch == '\n' && prev != '\r') || (prev == '\r' && ch != '\n') ||
			    ((ch == ' ' || ch == '\t') && prev == '\n')) {
				e->state = 3;
				return;
			}
		}
		const char *end = NULL;
		for (size_t i = from; i + 4 <= e->n + take && !end; i++)
			if (memcmp(e->head + i, "\r\n\r\n", 4) == 0)
				end = e->head + i + 4;
		if (!end) {
			e->n += take;
			p += take;
			len -= take;
			continue;
		}
		size_t used = (size_t)(end - e->head) - e->n, vl = 0;
		const char *cl = replyend_header(e->head, end, "Content-Length", &vl);
		/* a second Content-Length: which one the daemon takes is its own */
		unsigned lengths = 0;
		for (const char *l = e->head; l && l < end; l = memchr(l, '\n', (size_t)(end - l)), l = l ? l + 1 : NULL)
			lengths += strncasecmp(l, "Content-Length:", 15) == 0;
		if (lengths > 1) {
			e->state = 3;
			return;
		}
		char *stop;
		e->left = cl ? strtoull(cl, &stop, 10) : 0;
		if (replyend_header(e->head, end, "Transfer-Encoding", NULL) ||
		    (cl && (vl == 0 || stop != cl + vl || *cl < '0' || *cl > '9' || e->left > (1ULL << 40)))) {
			e->state = 3;
			return;
		}
		e->n = (size_t)(end - e->head);
		p += used;
		len -= used;
		e->state = e->left ? 1 : 2;
	}
	if (len > 0)
		e->state = 3; /* more after the request: a second one */
}

bool requestend_one(const struct requestend *e)
{
	return e->state == 2;
}
