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
#include <stdbool.h>
#include <stddef.h>

enum tls_role { TLS_ROLE_NONE = 0, TLS_ROLE_APP, TLS_ROLE_ORCHESTRATOR, TLS_ROLE_PERSON };

struct tls_peer {
	char cn[128];
	char ou[64];
	enum tls_role role;
	char fp[65];  /* SHA-256 of the certificate (hex): what owns a job */
	bool resumed; /* the TLS session was resumed from a ticket (audit: tls_resumed) */
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

/* The verdicts of the last connections (tls.c says why and by what rule). */
struct tls_recent;
struct tls_recent *tls_recent_new(void);
void tls_recent_free(struct tls_recent *recent);

/* 0 with `peer` filled when the certificate verified (peer->role may still
 * be TLS_ROLE_NONE: a verified certificate without a known role -> 403);
 * -1 with `why` set to one sentence for a missing or invalid one (-> 401).
 * With `seen`, the identity of a leaf verified earlier on the same
 * connection, or (with `recent`) on one of the last connections, is reused while that
 * exact leaf is presented, for at most 60 s after it was verified and
 * never past its notAfter. */
int tls_identify(struct MHD_Connection *c, struct tls_seen *seen, struct tls_recent *recent, struct tls_peer *peer,
                 char *why, size_t whylen);

const char *tls_role_name(enum tls_role role);

/*
 * Session tickets (TLS 1.3 resumption, RFC 8446 §4.6.1; TLS 1.2 RFC 5077),
 * so that a client started fresh per command skips the certificate
 * exchange and both signatures of a full handshake.
 *
 * The key is made at start from GnuTLS's random generator and lives in
 * the front's memory only: a restart (and so a new CA, the only way this
 * daemon withdraws certificates) makes every earlier ticket useless, and
 * the client falls back to a full handshake.  A ticket lives
 * TLS_TICKET_LIFETIME_S at most.
 *
 * What a resumed session does NOT skip: GnuTLS keeps the peer's
 * certificate chain inside the ticket and restores it, and tls_identify()
 * verifies that chain on every new connection, against the trust list
 * and the clock of now, or reuses a verdict on those very bytes of at most
 * 60 s ago that is not past their notAfter (tls_identify above).  So a
 * certificate that expired, or that the CA of a restarted daemon no longer
 * signs, gets its 401 on a resumed session just as on a full handshake.  A revocation list, should one be added, belongs in
 * tls_identify() too: it then reaches resumed sessions by the same path.
 * tests/e2e/resume.sh proves the expiry and the restart cases.
 */
#define TLS_TICKET_LIFETIME_S 600

struct tls_tickets;
/* NULL when the random generator failed (the daemon then does not start). */
struct tls_tickets *tls_tickets_new(void);
/* Wipes the key.  NULL is a no-op. */
void tls_tickets_free(struct tls_tickets *t);
/* For a connection before its first handshake byte (NOTIFY_STARTED):
 * offer and accept tickets.  0, or -1 when GnuTLS refused (the connection
 * then only does full handshakes). */
int tls_tickets_enable(const struct tls_tickets *t, struct MHD_Connection *c);

/* GnuTLS priorities: TLS 1.3 preferred, 1.2 the minimum. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

#endif
