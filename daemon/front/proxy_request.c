/*
 * proxy_request.c - see proxy_request.h: the proxy's client request, read
 * strictly from hostile bytes.
 */
#include "proxy_request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A printable, bounded copy of hostile bytes for a reply body and the log. */
static void printable(char *out, size_t outlen, const char *in, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	if (o >= outlen)
		o = outlen - 1;
	out[o] = '\0';
}

static bool is_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/*
 * The head must be lines ending in CRLF, with no NUL, no bare CR or LF and
 * no other control byte but HT: a proxy and its upstream must never
 * disagree about where a line or the head ends (request smuggling).
 */
static const char *head_clean(const char *h, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)h[i];

		if (ch == '\r') {
			if (i + 1 >= len || h[i + 1] != '\n')
				return "the request holds a bare CR";
			i++;
		} else if (ch == '\n') {
			return "the request holds a bare LF";
		} else if (ch == 0) {
			return "the request holds a NUL byte";
		} else if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			return "the request holds a control byte";
		}
	}
	return NULL;
}

/* The head's text, for a refusal: `fmt` and its arguments into why. */
#define WHY(...) (snprintf(why, whylen, __VA_ARGS__), -1)

/* The length of the field name of the header line [line, eol), or 0 when
 * it has none (obs-fold, no colon, a byte that is not a token's): such a
 * line is refused, never guessed at, as an origin might read it otherwise. */
static size_t header_name_len(const char *line, const char *eol)
{
	const char *colon = memchr(line, ':', (size_t)(eol - line));
	size_t n = colon ? (size_t)(colon - line) : 0;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar(line[i]))
			return 0;
	return n;
}

/* Whether [v, eol), spaces around it aside, is `word` (any case). */
static bool value_is(const char *v, const char *eol, const char *word)
{
	while (eol > v && (eol[-1] == ' ' || eol[-1] == '\t'))
		eol--;
	size_t n = strlen(word);
	return (size_t)(eol - v) == n && !strncasecmp(v, word, n);
}

/* Every header line has a name; a plain request's body is framed by one
 * Content-Length, or by "Transfer-Encoding: chunked" alone, or is empty:
 * the proxy forwards exactly that body, so a second request behind it
 * never reaches the origin. */
static int check_headers(const char *h, size_t len, struct proxy_request *rq, char *why, size_t whylen)
{
	const char *end = h + len - 2, *line = (const char *)memmem(h, len, "\r\n", 2) + 2;
	bool have_length = false;
	unsigned encodings = 0;
	while (line < end) {
		const char *eol = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
		size_t n = header_name_len(line, eol);
		if (n == 0)
			return WHY("a header line of the request is malformed");
		const char *v = line + n + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		if (!rq->connect && n == 17 && !strncasecmp(line, "transfer-encoding", n)) {
			if (encodings++ || !value_is(v, eol, "chunked"))
				return WHY("the request's Transfer-Encoding is not one 'chunked' (other codings go "
				           "through the proxy only with https)");
			rq->chunked = true;
		}
		if (!rq->connect && n == 14 && !strncasecmp(line, "content-length", n)) {
			size_t digits = 0; /* at most 18: more is past any byte limit, and refused */
			uint64_t body = 0;
			while (v + digits < eol && digits < 19 && v[digits] >= '0' && v[digits] <= '9')
				body = body * 10 + (uint64_t)(v[digits++] - '0');
			const char *rest = v + digits;
			while (rest < eol && (*rest == ' ' || *rest == '\t'))
				rest++;
			if (have_length || digits == 0 || digits > 18 || rest != eol)
				return WHY("the request's Content-Length is missing, repeated or not a number");
			rq->body_len = body;
			have_length = true;
		}
		line = eol + 2;
	}
	if (rq->chunked && have_length)
		return WHY("the request has both Transfer-Encoding and Content-Length");
	return 0;
}

int proxy_parse_head(const char *h, size_t len, struct proxy_request *rq, char *why, size_t whylen)
{
	const char *bad, *eol = memmem(h, len, "\r\n", 2);
	const char *sp1, *sp2, *target;
	size_t mlen, tlen;
	char shown[200];

	memset(rq, 0, sizeof(*rq));
	if (!eol || len < 4 || memcmp(h + len - 4, "\r\n\r\n", 4) != 0)
		return WHY("the request head does not end in an empty line");
	if ((bad = head_clean(h, len)))
		return WHY("%s", bad);
	sp1 = memchr(h, ' ', (size_t)(eol - h));
	if (!sp1 || (mlen = (size_t)(sp1 - h)) == 0 || mlen >= sizeof(rq->method))
		goto bad_line;
	for (size_t i = 0; i < mlen; i++)
		if (h[i] < 'A' || h[i] > 'Z')
			goto bad_line;
	memcpy(rq->method, h, mlen);
	rq->method[mlen] = '\0';
	target = sp1 + 1;
	sp2 = memchr(target, ' ', (size_t)(eol - target));
	if (!sp2 || (tlen = (size_t)(sp2 - target)) == 0)
		goto bad_line;
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f)
			goto bad_line;
	if ((size_t)(eol - sp2 - 1) != 8 || (memcmp(sp2 + 1, "HTTP/1.1", 8) && memcmp(sp2 + 1, "HTTP/1.0", 8)))
		goto bad_line;

	printable(shown, sizeof(shown), target, tlen);
	if (!strcmp(rq->method, "CONNECT")) {
		rq->connect = true;
		snprintf(rq->host_text, sizeof(rq->host_text), "%s", shown);
		if (proxy_authority_parse(target, tlen, 0, &rq->host, &rq->port, &bad) < 0)
			return WHY("CONNECT target '%s' %s", shown, bad);
	} else {
		const char *auth, *end = target + tlen;

		if (tlen >= 8 && !strncasecmp(target, "https://", 8))
			return WHY("'%s' is an https:// URL; clients send those with CONNECT", shown);
		if (tlen < 7 || strncasecmp(target, "http://", 7))
			return WHY("the request target '%s' is not an absolute http:// URL (this is a proxy: "
			           "send 'GET http://host/path' or 'CONNECT host:port')",
			           shown);
		auth = target + 7;
		const char *p = auth;
		while (p < end && *p != '/' && *p != '?' && *p != '#')
			p++;
		printable(rq->host_text, sizeof(rq->host_text), auth, (size_t)(p - auth));
		if (proxy_authority_parse(auth, (size_t)(p - auth), 80, &rq->host, &rq->port, &bad) < 0)
			return WHY("the host of '%s' %s", shown, bad);
		rq->target_path = p;
		rq->target_path_len = (size_t)(end - p);
	}
	snprintf(rq->host_text, sizeof(rq->host_text), "%s", rq->host.text);
	return check_headers(h, len, rq, why, whylen);
bad_line:
	printable(shown, sizeof(shown), h, (size_t)(eol - h) < 120 ? (size_t)(eol - h) : 120);
	return WHY("malformed request line '%s'", shown);
}

/* The names the request's Connection headers list (hop-by-hop, RFC 9110
 * §7.6.1), read once: [from, end) are the header lines.  -1 past
 * PROXY_CONNECTION_NAMES_MAX (refused: no client lists more). */
static int connection_tokens(const char *from, const char *end, const char *tok[], size_t tok_len[])
{
	int n_tok = 0;
	for (const char *line = from; line < end;) {
		const char *eol = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
		size_t n = header_name_len(line, eol);
		if (n == 10 && !strncasecmp(line, "connection", n)) {
			for (const char *t = line + n + 1; t < eol;) {
				while (t < eol && (*t == ' ' || *t == '\t' || *t == ','))
					t++;
				const char *te = t;
				while (te < eol && *te != ',' && *te != ' ' && *te != '\t')
					te++;
				if (te > t) {
					if (n_tok == PROXY_CONNECTION_NAMES_MAX)
						return -1;
					tok[n_tok] = t;
					tok_len[n_tok++] = (size_t)(te - t);
				}
				t = te;
			}
		}
		line = eol + 2;
	}
	return n_tok;
}

/* Whether the header `name` is one the Connection header lists; never
 * Content-Length or Transfer-Encoding, which frame the body the proxy
 * forwards as it came. */
static bool named_by_connection(const char *tok[], const size_t tok_len[], int n_tok, const char *name,
                                size_t len)
{
	if ((len == 14 && !strncasecmp(name, "content-length", len)) ||
	    (len == 17 && !strncasecmp(name, "transfer-encoding", len)))
		return false;
	for (int i = 0; i < n_tok; i++)
		if (tok_len[i] == len && !strncasecmp(tok[i], name, len))
			return true;
	return false;
}

static bool header_dropped(const char *name, size_t len)
{
	/* Hop-by-hop headers (RFC 9110 §7.6.1) and every Proxy-* one: the
	 * proxy's, never the origin's. The Host header is rebuilt from the
	 * checked URL so the origin sees the host the allowlist approved, not
	 * one the command chose. */
	static const char *const drop[] = {"host", "connection", "keep-alive", "te", "trailer", "upgrade", NULL};

	if (len >= 6 && !strncasecmp(name, "proxy-", 6))
		return true;
	for (size_t i = 0; drop[i]; i++)
		if (strlen(drop[i]) == len && !strncasecmp(name, drop[i], len))
			return true;
	return false;
}

char *proxy_rewrite_head(const char *head, size_t head_len, const struct proxy_request *rq, size_t *outlen)
{
	size_t cap = head_len + PROXY_HOST_MAX + 128;
	char *out = malloc(cap), *o = out;
	const char *h = head, *end = head + head_len - 2; /* before the final CRLF */
	const char *line = (const char *)memmem(h, head_len, "\r\n", 2) + 2;
	int n;

	if (!out)
		return NULL;
	bool v6 = rq->host.kind == PROXY_HOST_IPV6;
	const char *path = rq->target_path_len ? rq->target_path : "/";
	size_t plen = rq->target_path_len ? rq->target_path_len : 1;
	n = snprintf(o, cap, "%s %s%.*s HTTP/1.1\r\nHost: %s%s%s", rq->method, path[0] == '/' ? "" : "/",
	             (int)plen, path, v6 ? "[" : "", rq->host.text, v6 ? "]" : "");
	o += n;
	if (rq->port != 80)
		o += snprintf(o, cap - (size_t)(o - out), ":%u", rq->port);
	memcpy(o, "\r\n", 2);
	o += 2;
	const char *tok[PROXY_CONNECTION_NAMES_MAX];
	size_t tok_len[PROXY_CONNECTION_NAMES_MAX];
	int n_tok = connection_tokens(line, end, tok, tok_len);
	if (n_tok < 0) {
		free(out);
		errno = EINVAL;
		return NULL;
	}
	while (line < end) {
		const char *eol = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
		size_t nlen = header_name_len(line, eol); /* never 0: proxy_parse_head checked */

		if (!header_dropped(line, nlen) && !named_by_connection(tok, tok_len, n_tok, line, nlen)) {
			memcpy(o, line, (size_t)(eol - line) + 2);
			o += (eol - line) + 2;
		}
		line = eol + 2;
	}
	memcpy(o, "Connection: close\r\n\r\n", 21);
	o += 21;
	*outlen = (size_t)(o - out);
	return out;
}


static int hex_value(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* How many of the n bytes at b are the body's (the rest is past its end);
 * b->step is PROXY_BODY_BAD once the chunks' framing is broken. */
size_t proxy_body_take(struct proxy_body *b, const char *buf, size_t n)
{
	if (!b->chunked) {
		size_t t = n < b->left ? n : (size_t)b->left;
		b->left -= t;
		return t;
	}
	size_t i = 0;
	while (i < n && b->step != PROXY_BODY_DONE && b->step != PROXY_BODY_BAD) {
		char ch = buf[i];
		int x = hex_value(ch);
		switch (b->step) {
		case PROXY_BODY_SIZE: /* hex digits, then spaces and ';' an extension, or CRLF */
			if (x >= 0 && b->digits < 15 && b->left <= b->max / 16)
				b->left = b->left * 16 + (uint64_t)x, b->digits++;
			else if (b->digits && (ch == ' ' || ch == '\t'))
				b->step = PROXY_BODY_BWS;
			else if (b->digits && ch == ';')
				b->step = PROXY_BODY_EXT;
			else
				b->step = b->digits && ch == '\r' ? PROXY_BODY_SIZE_LF : PROXY_BODY_BAD;
			break;
		case PROXY_BODY_BWS:
			if (ch == ';')
				b->step = PROXY_BODY_EXT;
			else if (ch == '\r')
				b->step = PROXY_BODY_SIZE_LF;
			else if (ch != ' ' && ch != '\t')
				b->step = PROXY_BODY_BAD;
			break;
		case PROXY_BODY_EXT:
			if (ch == '\r')
				b->step = PROXY_BODY_SIZE_LF;
			else if ((unsigned char)ch < 0x20 ? ch != '\t' : ch == 0x7f)
				b->step = PROXY_BODY_BAD;
			break;
		case PROXY_BODY_SIZE_LF:
			b->step = ch != '\n' || b->left > b->max ? PROXY_BODY_BAD : b->left ? PROXY_BODY_DATA : PROXY_BODY_END_CR;
			b->digits = 0;
			break;
		case PROXY_BODY_DATA: {
			size_t t = n - i < b->left ? n - i : (size_t)b->left;
			b->left -= t;
			i += t;
			if (!b->left)
				b->step = PROXY_BODY_DATA_CR;
			continue;
		}
		case PROXY_BODY_DATA_CR:
			b->step = ch == '\r' ? PROXY_BODY_DATA_LF : PROXY_BODY_BAD;
			break;
		case PROXY_BODY_DATA_LF:
			b->step = ch == '\n' ? PROXY_BODY_SIZE : PROXY_BODY_BAD;
			break;
		case PROXY_BODY_END_CR: /* trailer fields are refused: the origin might take them as headers */
			b->step = ch == '\r' ? PROXY_BODY_END_LF : PROXY_BODY_BAD;
			break;
		case PROXY_BODY_END_LF:
			b->step = ch == '\n' ? PROXY_BODY_DONE : PROXY_BODY_BAD;
			break;
		default:
			break;
		}
		if (b->step != PROXY_BODY_BAD)
			i++;
	}
	return i;
}
