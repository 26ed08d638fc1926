/*
 * tls.c - a mutual-TLS connection to sharnessd (see tls.h).
 *
 * Trust: the daemon is authenticated by its certificate against conf->ca,
 * and only that CA is ever trusted; nothing it sends is read before the
 * handshake has checked it.
 */
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

void tls_reason(char *out, size_t outlen)
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

/* Connecting and the handshake give up after TLS_HANDSHAKE_TIMEOUT_S
 * (SO_SNDTIMEO bounds connect() too); the reply may then take as long as
 * the run does, so both are cleared after the handshake. */
static void set_timeouts(int fd, int seconds)
{
	struct timeval tv = {.tv_sec = seconds};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
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
		if (fd >= 0)
			set_timeouts(fd, TLS_HANDSHAKE_TIMEOUT_S);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&ss, sl) == 0)
			return fd;
		snprintf(err, errlen, "cannot reach sharnessd at %s: %s", c->url,
			 strerror(errno == EINPROGRESS ? ETIMEDOUT : errno)); /* SO_SNDTIMEO ran out */
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
		if (fd >= 0)
			set_timeouts(fd, TLS_HANDSHAKE_TIMEOUT_S);
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

/* The daemon sent a ticket (NewSessionTicket, after the handshake): keep
 * the newest; the caller decides whether it is stored. */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct tls_conn *t = SSL_get_app_data(ssl);
	if (!t)
		return 0;
	SSL_SESSION_free(t->fresh);
	t->fresh = sess;
	return 1; /* the reference is ours now */
}

/* The CA, into the (until then empty) store the daemon's certificate is
 * verified against: nothing else is ever trusted. */
static int load_ca(struct tls_conn *t, X509_STORE *store)
{
	char why[256];
	if (X509_STORE_load_file(store, t->c->ca) != 1) {
		tls_reason(why, sizeof why);
		snprintf(t->err, sizeof t->err, "cannot load the CA certificate %s: %s", t->c->ca, why);
		return -1;
	}
	t->ca_loaded = 1;
	return 0;
}

/* Our certificate chain and key, checked against each other: into the
 * connection (`ssl`), or into the context for every connection. */
static int load_own(struct tls_conn *t, SSL *ssl, SSL_CTX *ctx)
{
	const struct conf *c = t->c;
	char why[256];
	if ((ssl ? SSL_use_certificate_chain_file(ssl, c->cert) : SSL_CTX_use_certificate_chain_file(ctx, c->cert)) !=
	    1) {
		tls_reason(why, sizeof why);
		snprintf(t->err, sizeof t->err, "cannot load the client certificate %s: %s", c->cert, why);
		return -1;
	}
	if ((ssl ? SSL_use_PrivateKey_file(ssl, c->key, SSL_FILETYPE_PEM)
		 : SSL_CTX_use_PrivateKey_file(ctx, c->key, SSL_FILETYPE_PEM)) != 1) {
		tls_reason(why, sizeof why);
		if (strstr(why, "key values mismatch"))
			snprintf(t->err, sizeof t->err, "the client key %s does not match the certificate %s", c->key,
				 c->cert);
		else
			snprintf(t->err, sizeof t->err, "cannot load the client key %s: %s", c->key, why);
		return -1;
	}
	if ((ssl ? SSL_check_private_key(ssl) : SSL_CTX_check_private_key(ctx)) != 1) {
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
	struct tls_conn *t = SSL_get_app_data(ssl);
	(void)arg;
	return t && (t->own_loaded || load_own(t, ssl, NULL) == 0);
}

static int verify_daemon(X509_STORE_CTX *xs, void *arg)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(xs, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct tls_conn *t = ssl ? SSL_get_app_data(ssl) : NULL;
	(void)arg;
	if (!t || (!t->ca_loaded && load_ca(t, X509_STORE_CTX_get0_store(xs)) < 0)) {
		X509_STORE_CTX_set_error(xs, X509_V_ERR_UNSPECIFIED);
		return 0;
	}
	/* The chain and the name set in tls_open, as OpenSSL would. */
	return X509_verify_cert(xs);
}

void tls_lib_init(void)
{
	/* Idempotent and thread-safe in OpenSSL itself. */
	OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL);
}

SSL_CTX *tls_ctx_new(const struct conf *c, char *err, size_t errlen)
{
	char why[256];
	tls_lib_init();
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		tls_reason(why, sizeof why);
		snprintf(err, errlen, "cannot initialise TLS: %s", why);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* A daemon that closes without close_notify is then reported through
	 * the reply's length check rather than as a TLS error. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_cert_verify_callback(ctx, verify_daemon, NULL);
	SSL_CTX_set_cert_cb(ctx, own_cert_cb, NULL);
	/* Tickets go to the caller (ticket.c, the relay's memory), never to
	 * OpenSSL's in-memory cache. */
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

int tls_ctx_load(SSL_CTX *ctx, const struct conf *c, char *err, size_t errlen)
{
	struct tls_conn t = {.c = c};
	if (load_ca(&t, SSL_CTX_get_cert_store(ctx)) < 0 || load_own(&t, NULL, ctx) < 0) {
		snprintf(err, errlen, "%s", t.err);
		return -1;
	}
	return 0;
}

int tls_open(struct tls_conn *t, const struct conf *c, SSL_CTX *ctx, SSL_SESSION *offer, int preloaded,
	     char *err, size_t errlen)
{
	char why[256];
	memset(t, 0, sizeof *t);
	t->fd = -1;
	t->c = c;
	t->ca_loaded = t->own_loaded = preloaded;
	t->ssl = SSL_new(ctx);
	if (!t->ssl || SSL_set_app_data(t->ssl, t) != 1) {
		snprintf(err, errlen, "cannot initialise TLS: out of memory");
		goto fail;
	}
	if (offer) {
		/* Offered, not trusted: a daemon that does not take it (a restart
		 * made a new ticket key) does a full handshake instead. */
		(void)SSL_set_session(t->ssl, offer);
	} else if (!preloaded && (load_ca(t, SSL_CTX_get_cert_store(ctx)) < 0 || load_own(t, t->ssl, NULL) < 0)) {
		snprintf(err, errlen, "%s", t->err);
		goto fail;
	}
	t->fd = connect_to(c, err, errlen);
	if (t->fd < 0)
		goto fail;
	int one = 1;
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (SSL_set_fd(t->ssl, t->fd) != 1) {
		snprintf(err, errlen, "cannot initialise TLS: out of memory");
		goto fail;
	}
	/* Verify the server's name exactly as the URL states it: an IP literal
	 * against its IP SANs, a DNS name against its DNS SANs (with SNI). */
	unsigned char ipbuf[16];
	if (inet_pton(AF_INET, c->host, ipbuf) == 1 || inet_pton(AF_INET6, c->host, ipbuf) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), c->host) != 1)
			goto name_fail;
	} else if (SSL_set_tlsext_host_name(t->ssl, c->host) != 1 || SSL_set1_host(t->ssl, c->host) != 1) {
		goto name_fail;
	}
	ERR_clear_error();
	errno = 0;
	int connected = SSL_connect(t->ssl);
	if (connected != 1) {
		long v = SSL_get_verify_result(t->ssl);
		/* Under TLS 1.3 the daemon judges our certificate only after the
		 * handshake (http.c reads its refusal): a connection that ends
		 * within it, reset or at its end (no error: the context ignores
		 * an end without close_notify), was cut by a daemon that stopped,
		 * restarted or is at its connection limit. */
		int how = SSL_get_error(t->ssl, connected);
		bool cut = how == SSL_ERROR_SYSCALL || how == SSL_ERROR_ZERO_RETURN;
		if (t->err[0])
			snprintf(err, errlen, "%s", t->err);
		else if (v != X509_V_OK)
			snprintf(err, errlen, "refusing sharnessd at %s: its certificate failed verification against %s: %s",
				 c->url, c->ca, X509_verify_cert_error_string(v));
		else if (cut)
			snprintf(err, errlen,
				 "sharnessd at %s closed the connection during the TLS handshake (%s): it may be restarting "
				 "or at its connection limit; try again",
				 c->url, errno ? strerror(errno) : "end of stream");
		else {
			tls_reason(why, sizeof why);
			snprintf(err, errlen, "TLS handshake with sharnessd at %s failed: %s (is %s a certificate it accepts?)",
				 c->url, why, c->cert);
		}
		goto fail;
	}
	set_timeouts(t->fd, 0);
	return 0;
name_fail:
	snprintf(err, errlen, "cannot set the expected server name '%s'", c->host);
fail:
	tls_close(t, 0);
	return -1;
}

void tls_close(struct tls_conn *t, int clean)
{
	if (t->ssl) {
		if (clean)
			SSL_shutdown(t->ssl);
		SSL_free(t->ssl);
		t->ssl = NULL;
	}
	SSL_SESSION_free(t->fresh);
	t->fresh = NULL;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}
