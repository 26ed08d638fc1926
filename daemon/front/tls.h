/*
 * tls.h - client identity from the TLS session (SPEC §4).
 *
 * libmicrohttpd 0.9.75 only *requests* a client certificate and verifies
 * nothing: tls_require_client_cert() makes the handshake require one, and
 * tls_identify() verifies, on every request before routing, that
 * the peer's certificate chains to our CA, is inside its validity window,
 * carries the clientAuth purpose, and names exactly one role as its OU.
 *
 * Trust: the certificate is hostile input until verified.
 */
#ifndef SHARNESS_TLS_H
#define SHARNESS_TLS_H

#include <microhttpd.h>
#include <stddef.h>

enum tls_role { TLS_ROLE_NONE = 0, TLS_ROLE_APP, TLS_ROLE_ORCHESTRATOR, TLS_ROLE_PERSON };

struct tls_peer {
	char cn[128];
	char ou[64];
	enum tls_role role;
	char fp[65];  /* SHA-256 of the certificate (hex): what owns a job */
};

/* A client that sends no certificate fails the handshake and never reaches
 * HTTP.  The chain, validity and purpose are still checked per request by
 * tls_identify(), so a wrong certificate gets a 401 that says what is wrong
 * instead of a bare handshake failure. */
void tls_require_client_cert(struct MHD_Connection *c);

/* What one connection's last verified certificate was (NULL: none kept). */
struct tls_seen;
struct tls_seen *tls_seen_new(void);
void tls_seen_free(struct tls_seen *seen);

/* 0 with `peer` filled when the certificate verified (peer->role may still
 * be TLS_ROLE_NONE: a verified certificate without a known role -> 403);
 * -1 with `why` set to one sentence for a missing or invalid one (-> 401).
 * With `seen`, the identity of a leaf verified earlier on the same
 * connection is reused while that exact leaf is presented, for at most
 * 60 s and never past its notAfter. */
int tls_identify(struct MHD_Connection *c, struct tls_seen *seen, struct tls_peer *peer, char *why,
                 size_t whylen);

const char *tls_role_name(enum tls_role role);

/* GnuTLS priorities: TLS 1.3 preferred, 1.2 the minimum. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

#endif
