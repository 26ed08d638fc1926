/*
 * http.c - minimal HTTP/1.1 over OpenSSL mutual TLS (see http.h).
 *
 * Trust: the peer is authenticated by certificate before any byte of the
 * reply is parsed; the reply is still parsed defensively (sizes capped,
 * chunk lengths checked) because a bug in the daemon must not become one
 * here.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "buf.h"
#include "ticket.h"

static void ssl_reason(char *out, size_t outlen)
{
	unsigned long e = ERR_get_error(), last = e;
	while (e) { /* the last queued error is usually the most specific one */
		last = e;
		e = ERR_get_error();
	}
	if (last)
		ERR_error_string_n(last, out, outlen);
	else
		snprintf(out, outlen, "%s", errno ? strerror(errno) : "unknown TLS error");
}

/* The static binary must not need NSS modules (glibc would dlopen them), so
 * IP literals and "localhost" are resolved without getaddrinfo; any other
 * name falls back to it. */
static int connect_to(const struct conf *c, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	int port = atoi(c->port), fd = -1;
	memset(&ss, 0, sizeof ss);
	if (inet_pton(AF_INET, c->host, &s4->sin_addr) == 1 ||
	    (strcasecmp(c->host, "localhost") == 0 && inet_pton(AF_INET, "127.0.0.1", &s4->sin_addr) == 1)) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((unsigned short)port);
		sl = sizeof *s4;
	} else if (inet_pton(AF_INET6, c->host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)port);
		sl = sizeof *s6;
	}
	if (sl) {
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&ss, sl) == 0)
			return fd;
		snprintf(err, errlen, "cannot reach sharnessd at %s: %s", c->url, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *p;
	int rc = getaddrinfo(c->host, c->port, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve '%s' in %s: %s", c->host, c->url, gai_strerror(rc));
		return -1;
	}
	int saved = 0;
	for (p = ai; p; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
		if (fd >= 0 && connect(fd, p->ai_addr, p->ai_addrlen) == 0)
			break;
		saved = errno;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(err, errlen, "cannot reach sharnessd at %s: %s", c->url, strerror(saved));
	return fd;
}

/* What the handshake's callbacks need and what they hand back. */
struct tls_call {
	const struct conf *c;
	char err[512];      /* a file that could not be loaded, said in full */
	int ca_loaded, own_loaded;
	SSL_SESSION *fresh; /* the newest ticket the daemon sent (ticket.h) */
};

/* The daemon sent a ticket (NewSessionTicket, after the handshake): keep
 * the newest; it is stored once the reply is in. */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct tls_call *t = SSL_get_app_data(ssl);
	if (!t)
		return 0;
	SSL_SESSION_free(t->fresh);
	t->fresh = sess;
	return 1; /* the reference is ours now */
}

/* The CA, into the (until then empty) store the daemon's certificate is
 * verified against: nothing else is ever trusted. */
static int load_ca(struct tls_call *t, X509_STORE *store)
{
	char why[256];
	if (X509_STORE_load_file(store, t->c->ca) != 1) {
		ssl_reason(why, sizeof why);
		snprintf(t->err, sizeof t->err, "cannot load the CA certificate %s: %s", t->c->ca, why);
		return -1;
	}
	t->ca_loaded = 1;
	return 0;
}

/* Our certificate chain and key, checked against each other. */
static int load_own(struct tls_call *t, SSL *ssl)
{
	const struct conf *c = t->c;
	char why[256];
	if (SSL_use_certificate_chain_file(ssl, c->cert) != 1) {
		ssl_reason(why, sizeof why);
		snprintf(t->err, sizeof t->err, "cannot load the client certificate %s: %s", c->cert, why);
		return -1;
	}
	if (SSL_use_PrivateKey_file(ssl, c->key, SSL_FILETYPE_PEM) != 1) {
		ssl_reason(why, sizeof why);
		if (strstr(why, "key values mismatch"))
			snprintf(t->err, sizeof t->err, "the client key %s does not match the certificate %s", c->key,
				 c->cert);
		else
			snprintf(t->err, sizeof t->err, "cannot load the client key %s: %s", c->key, why);
		return -1;
	}
	if (SSL_check_private_key(ssl) != 1) {
		snprintf(t->err, sizeof t->err, "the client key %s does not match the certificate %s", c->key, c->cert);
		return -1;
	}
	t->own_loaded = 1;
	return 0;
}

/* With a ticket to offer, the files are parsed only if the daemon turns
 * it down: our certificate and key when it asks for them (a
 * CertificateRequest, which a resumed session never sends, RFC 8446
 * §4.3.2), the CA when its certificate is to be verified.  PEM decoding
 * is, after SSL_CTX_new, the slowest part of OpenSSL 3.0's set-up
 * (docs/bench.md).  Without a ticket both are loaded before connecting. */
static int own_cert_cb(SSL *ssl, void *arg)
{
	struct tls_call *t = SSL_get_app_data(ssl);
	(void)arg;
	return t && (t->own_loaded || load_own(t, ssl) == 0);
}

static int verify_daemon(X509_STORE_CTX *xs, void *arg)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(xs, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct tls_call *t = ssl ? SSL_get_app_data(ssl) : NULL;
	(void)arg;
	if (!t || (!t->ca_loaded && load_ca(t, X509_STORE_CTX_get0_store(xs)) < 0)) {
		X509_STORE_CTX_set_error(xs, X509_V_ERR_UNSPECIFIED);
		return 0;
	}
	/* The chain and the name set in http_request, as OpenSSL would. */
	return X509_verify_cert(xs);
}

static SSL_CTX *make_ctx(const struct conf *c, char *err, size_t errlen)
{
	char why[256];
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		ssl_reason(why, sizeof why);
		snprintf(err, errlen, "cannot initialise TLS: %s", why);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* A daemon that closes without close_notify is then reported through
	 * the length check below rather than as a TLS error. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_cert_verify_callback(ctx, verify_daemon, NULL);
	SSL_CTX_set_cert_cb(ctx, own_cert_cb, NULL);
	/* Tickets go to ticket.c, never to OpenSSL's in-memory cache (one
	 * request per process: it would never be asked). */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, on_new_session);
	const struct { const char *path, *what, *hint; } files[] = {
		{c->ca, "CA certificate", "--ca or SHARNESS_CA"},
		{c->cert, "client certificate", "--cert or SHARNESS_CERT"},
		{c->key, "client key", "--key or SHARNESS_KEY"},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		if (access(files[i].path, R_OK) != 0) {
			snprintf(err, errlen, "cannot read the %s %s: %s (set %s)", files[i].what, files[i].path,
				 strerror(errno), files[i].hint);
			SSL_CTX_free(ctx);
			return NULL;
		}
	}
	return ctx;
}

static int write_all(SSL *ssl, const char *p, size_t n)
{
	while (n) {
		int chunk = n > (1u << 30) ? 1 << 30 : (int)n;
		int w = SSL_write(ssl, p, chunk);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Header lookup in the raw header block (case-insensitive name). */
static const char *header(const char *hdrs, const char *end, const char *name)
{
	size_t nl = strlen(name);
	for (const char *l = hdrs; l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l));
		if (!eol)
			eol = end;
		if ((size_t)(eol - l) > nl && strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
			const char *v = l + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
		l = eol + 1;
	}
	return NULL;
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
	SSL *ssl = NULL;
	int fd = -1, rc = -1;
	void (*on_data)(void *, const char *, size_t) = r->on_data;
	void *on_data_arg = r->on_data_arg;
	size_t pos = 0; /* on_data: where the next chunk starts in raw */
	int streamed_all = 0;
	struct tls_call tc = {.c = c};
	memset(r, 0, sizeof *r);
	r->retry_after = -1;

	SSL_CTX *ctx = make_ctx(c, err, errlen);
	if (!ctx)
		return -1;
	ssl = SSL_new(ctx);
	if (!ssl || SSL_set_app_data(ssl, &tc) != 1) {
		snprintf(err, errlen, "cannot initialise TLS: out of memory");
		goto out;
	}
	/* A ticket is only ever found for the very CA, certificate and key
	 * files it was earned with (ticket.h), so skipping their parsing
	 * changes no outcome. */
	SSL_SESSION *kept = c->no_ticket ? NULL : ticket_load(c);
	if (kept) {
		/* Offered, not trusted: a daemon that does not take it (a restart
		 * made a new ticket key) does a full handshake instead. */
		(void)SSL_set_session(ssl, kept);
		SSL_SESSION_free(kept);
	} else if (load_ca(&tc, SSL_CTX_get_cert_store(ctx)) < 0 || load_own(&tc, ssl) < 0) {
		snprintf(err, errlen, "%s", tc.err);
		goto out;
	}
	fd = connect_to(c, err, errlen);
	if (fd < 0)
		goto out;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (SSL_set_fd(ssl, fd) != 1) {
		snprintf(err, errlen, "cannot initialise TLS: out of memory");
		goto out;
	}
	/* Verify the server's name exactly as the URL states it: an IP literal
	 * against its IP SANs, a DNS name against its DNS SANs (with SNI). */
	unsigned char ipbuf[16];
	if (inet_pton(AF_INET, c->host, ipbuf) == 1 || inet_pton(AF_INET6, c->host, ipbuf) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), c->host) != 1)
			goto name_fail;
	} else if (SSL_set_tlsext_host_name(ssl, c->host) != 1 || SSL_set1_host(ssl, c->host) != 1) {
		goto name_fail;
	}
	ERR_clear_error();
	errno = 0;
	why[0] = '\0';
	if (SSL_connect(ssl) != 1) {
		long v = SSL_get_verify_result(ssl);
		if (tc.err[0])
			snprintf(err, errlen, "%s", tc.err);
		else if (v != X509_V_OK)
			snprintf(err, errlen, "refusing sharnessd at %s: its certificate failed verification against %s: %s",
				 c->url, c->ca, X509_verify_cert_error_string(v));
		else {
			ssl_reason(why, sizeof why);
			snprintf(err, errlen, "TLS handshake with sharnessd at %s failed: %s (is %s a certificate it accepts?)",
				 c->url, why, c->cert);
		}
		goto out;
	}
	if (buf_printf(&req, "%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: sharness-client\r\n"
			     "Accept: application/json\r\nConnection: close\r\n",
		       method, c->base, path, strchr(c->host, ':') ? "[" : "", c->host,
		       strchr(c->host, ':') ? "]" : "", c->port) < 0 ||
	    (body && buf_printf(&req, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len) < 0) ||
	    (headers && buf_puts(&req, headers) < 0) ||
	    buf_puts(&req, "\r\n") < 0 || (body && buf_append(&req, body, body_len) < 0)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (write_all(ssl, req.data, req.len) < 0) {
		ssl_reason(why, sizeof why);
		snprintf(err, errlen, "sharnessd at %s closed the connection while receiving the request: %s",
			 c->url, why);
		goto out;
	}

	/* Read until the reply is complete by its own framing, or EOF. */
	char chunk[65536];
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
		int n = SSL_read(ssl, chunk, sizeof chunk);
		if (n <= 0) {
			int e = SSL_get_error(ssl, n);
			if (e != SSL_ERROR_ZERO_RETURN && e != SSL_ERROR_SYSCALL && e != SSL_ERROR_SSL) {
				ssl_reason(why, sizeof why);
				snprintf(err, errlen, "reading the reply from sharnessd at %s failed: %s", c->url, why);
				goto out;
			}
			if (e == SSL_ERROR_SSL && raw.len == 0)
				ssl_reason(why, sizeof why);
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
			const char *v = header(raw.data, hend, "Content-Length");
			if (v) {
				char *endp;
				clen = strtoll(v, &endp, 10);
				if (endp == v || clen < 0 || clen > (long long)HTTP_MAX_REPLY) {
					snprintf(err, errlen, "sharnessd at %s sent a bad Content-Length", c->url);
					goto out;
				}
			}
			v = header(raw.data, hend, "Transfer-Encoding");
			if (v && strncasecmp(v, "chunked", 7) == 0) {
				chunked = 1;
				clen = -1;
			}
			v = header(raw.data, hend, "Retry-After");
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
	goto out;
name_fail:
	snprintf(err, errlen, "cannot set the expected server name '%s'", c->host);
out:
	if (ssl) {
		if (rc == 0)
			SSL_shutdown(ssl);
		SSL_free(ssl);
	}
	/* A ticket is kept only from a daemon that took our certificate. */
	if (tc.fresh && rc == 0 && r->status != 401 && !c->no_ticket)
		ticket_save(c, tc.fresh);
	SSL_SESSION_free(tc.fresh);
	if (fd >= 0)
		close(fd);
	SSL_CTX_free(ctx);
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
