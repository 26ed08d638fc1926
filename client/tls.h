/*
 * tls.h - one mutual-TLS connection to sharnessd (OpenSSL), as http.c and
 * the relay (relay.h) both make it.
 *
 * TLS 1.2 minimum; the server must chain to conf->ca and match the URL host
 * (DNS name or IP SAN); the client presents conf->cert/conf->key.  Nothing
 * here forks, execs or loads modules: OpenSSL's config file is not read.
 */
#ifndef SHARNESS_CLIENT_TLS_H
#define SHARNESS_CLIENT_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "conf.h"

/* Connecting and the handshake together give up after this long. */
#define TLS_HANDSHAKE_TIMEOUT_S 10

struct tls_conn {
	SSL *ssl;
	int fd;
	SSL_SESSION *fresh;   /* the newest ticket the daemon sent (ticket.h), owned */
	/* Private: what the handshake's callbacks need. */
	const struct conf *c;
	char err[512];        /* a file that could not be loaded, said in full */
	int ca_loaded, own_loaded;
};

/* Starts OpenSSL, once per process, before any other call into it: without
 * its config file, which could load engines or providers (dlopen) and
 * change our TLS settings from outside, and with nothing freed at exit
 * (freeing its provider and name tables one by one frees nothing the exit
 * does not; the secrets are wiped where they are freed: SSL_free, ticket.c).
 * Called where OpenSSL is first needed (tls_ctx_new, ticket.c, doctor.c),
 * not in main: a run the relay carries never starts it, which is a
 * quarter of a fresh client's CPU (docs/bench.md). */
void tls_lib_init(void);

/* The context every connection of this process uses: the checks above,
 * tickets handed to `fresh`, the three files checked for reading.  NULL
 * with err set ("cannot read the client key K: ... (set --key or
 * SHARNESS_KEY)"). */
SSL_CTX *tls_ctx_new(const struct conf *c, char *err, size_t errlen);

/* Parses the CA, certificate and key into `ctx` now, once for every later
 * connection (the relay: what it presents must not change under a name
 * that was computed from the files).  0, or -1 with err set. */
int tls_ctx_load(SSL_CTX *ctx, const struct conf *c, char *err, size_t errlen);

/* Connects to c->host:c->port and completes the handshake.  `offer`: a
 * session to offer for resumption (not taken; NULL: none); without one and
 * without `preloaded` (tls_ctx_load) the files are parsed first, with one
 * the daemon's answer decides whether they are parsed at all.  `t` must
 * stay where it is until tls_close.  0, or -1 with err set to one sentence
 * and `t` closed. */
int tls_open(struct tls_conn *t, const struct conf *c, SSL_CTX *ctx, SSL_SESSION *offer, int preloaded,
	     char *err, size_t errlen);

/* `clean`: send close_notify first.  Frees `fresh` too. */
void tls_close(struct tls_conn *t, int clean);

/* OpenSSL's most specific queued error, else errno's text. */
void tls_reason(char *out, size_t outlen);

#endif
