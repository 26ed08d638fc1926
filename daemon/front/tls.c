/*
 * tls.c - verifying the client certificate (see tls.h).
 *
 * gnutls_certificate_verify_peers() with the clientAuth key purpose checks
 * the chain against the trust list MHD loaded from our CA (and nothing
 * else: MHD loads no system CAs), the validity times, key usage and basic
 * constraints; `status` is only meaningful when it returns 0
 * (research/ecosystem.md §1.3).
 */
#include "tls.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

static gnutls_typed_vdata_st purpose_client = {
	.type = GNUTLS_DT_KEY_PURPOSE_OID,
	.data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
};

const char *tls_role_name(enum tls_role role)
{
	switch (role) {
	case TLS_ROLE_APP:
		return "app";
	case TLS_ROLE_ORCHESTRATOR:
		return "orchestrator";
	case TLS_ROLE_PERSON:
		return "person";
	case TLS_ROLE_NONE:
		break;
	}
	return "none";
}

static enum tls_role role_from_ou(const char *ou)
{
	if (strcmp(ou, "app") == 0)
		return TLS_ROLE_APP;
	if (strcmp(ou, "orchestrator") == 0)
		return TLS_ROLE_ORCHESTRATOR;
	if (strcmp(ou, "person") == 0)
		return TLS_ROLE_PERSON;
	return TLS_ROLE_NONE;
}

void tls_require_client_cert(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	/* Called before the first handshake byte: MHD itself only asks. */
	if (ci && ci->tls_session)
		gnutls_certificate_server_set_request((gnutls_session_t)ci->tls_session, GNUTLS_CERT_REQUIRE);
}

struct tls_tickets {
	gnutls_datum_t key; /* gnutls_session_ticket_key_generate()'s master key */
};

struct tls_tickets *tls_tickets_new(void)
{
	struct tls_tickets *t = calloc(1, sizeof(*t));
	if (t && gnutls_session_ticket_key_generate(&t->key) < 0) {
		free(t);
		t = NULL;
	}
	return t;
}

void tls_tickets_free(struct tls_tickets *t)
{
	if (!t)
		return;
	if (t->key.data) {
		gnutls_memset(t->key.data, 0, t->key.size);
		gnutls_free(t->key.data);
	}
	free(t);
}

int tls_tickets_enable(const struct tls_tickets *t, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!t || !ci || !ci->tls_session)
		return -1;
	gnutls_session_t s = (gnutls_session_t)ci->tls_session;
	/* libmicrohttpd 0.9.75 creates the session in new_connection_prepare_()
	 * and tells us of the connection (NOTIFY_STARTED) before it reads the
	 * ClientHello, so the ticket key is in place for the first message. */
	if (gnutls_session_ticket_enable_server(s, &t->key) < 0)
		return -1;
	gnutls_db_set_cache_expiration(s, TLS_TICKET_LIFETIME_S);
	return 0;
}

/* The verified leaf is remembered for TLS_SEEN_MAX_S at most, and never
 * past its own notAfter: a long kept-alive connection is re-verified. */
#define TLS_SEEN_MAX_S 60
#define TLS_SEEN_DER_MAX 8192

struct tls_seen {
	size_t der_len;
	unsigned char der[TLS_SEEN_DER_MAX];
	struct tls_peer peer;
	time_t not_after;   /* the leaf's, wall clock */
	time_t until_mono;  /* verified + TLS_SEEN_MAX_S, monotonic (clock steps do not stretch it) */
};

static time_t mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec;
}

struct tls_seen *tls_seen_new(void)
{
	return calloc(1, sizeof(struct tls_seen));
}

void tls_seen_free(struct tls_seen *seen)
{
	free(seen);
}

static const gnutls_datum_t *peer_leaf(gnutls_session_t s)
{
	unsigned n = 0;
	const gnutls_datum_t *chain = gnutls_certificate_get_peers(s, &n);
	return chain && n > 0 ? &chain[0] : NULL;
}

/* `seen` holds this very leaf, byte for byte, still in time?  (So a
 * renegotiated (TLS 1.2) peer is verified anew.) */
static bool holds(const struct tls_seen *seen, const gnutls_datum_t *leaf)
{
	return seen->der_len != 0 && leaf->size == seen->der_len && mono_s() < seen->until_mono &&
	       time(NULL) < seen->not_after && memcmp(leaf->data, seen->der, seen->der_len) == 0;
}

/* The leaves verified last on any connection.  A client started fresh per
 * command makes a connection per request (its relay too, client/relay.h),
 * and verifying each anew was a third of the front's work per such request
 * (docs/bench.md).  The rule is one connection's: the same bytes, verified
 * against the same trust list (fixed for the front's life) at most
 * TLS_SEEN_MAX_S ago and not past notAfter, give the same verdict; and
 * every connection still proved it holds the key (a handshake signature,
 * or a ticket only this front could have issued, to that certificate).
 * A hit trusts the chain verified then, not the one presented now: the
 * same with a trust list fixed for the front's life and no CRL.  Owned
 * by the front, whose HTTP side runs on one thread (loop.h): no lock. */
#define TLS_RECENT 8
struct tls_recent {
	struct tls_seen seen[TLS_RECENT];
	unsigned next;
};

struct tls_recent *tls_recent_new(void)
{
	return calloc(1, sizeof(struct tls_recent));
}

void tls_recent_free(struct tls_recent *recent)
{
	free(recent);
}

/* The very certificate verified earlier on this connection, or lately on
 * another, still in time? */
static bool seen_before(struct tls_seen *seen, const struct tls_recent *recent, gnutls_session_t s,
                        struct tls_peer *peer)
{
	const gnutls_datum_t *leaf = peer_leaf(s);
	const struct tls_seen *hit = NULL;
	if (!seen || !leaf)
		return false;
	if (holds(seen, leaf))
		hit = seen;
	for (unsigned i = 0; recent && !hit && i < TLS_RECENT; i++)
		if (holds(&recent->seen[i], leaf))
			hit = &recent->seen[i];
	if (!hit)
		return false;
	if (hit != seen)
		*seen = *hit; /* this connection's next request looks here first */
	bool resumed = peer->resumed;
	*peer = hit->peer;
	peer->resumed = resumed;
	return true;
}

static void remember(struct tls_seen *seen, struct tls_recent *recent, gnutls_session_t s, gnutls_x509_crt_t crt,
                     const struct tls_peer *peer)
{
	const gnutls_datum_t *leaf = peer_leaf(s);
	time_t not_after = gnutls_x509_crt_get_expiration_time(crt);
	if (!seen || !leaf || leaf->size > sizeof(seen->der) || not_after == (time_t)-1)
		return;
	memcpy(seen->der, leaf->data, leaf->size);
	seen->der_len = leaf->size;
	seen->peer = *peer;
	seen->not_after = not_after;
	seen->until_mono = mono_s() + TLS_SEEN_MAX_S;
	if (recent) {
		recent->seen[recent->next] = *seen;
		recent->next = (recent->next + 1) % TLS_RECENT;
	}
}

int tls_identify(struct MHD_Connection *c, struct tls_seen *seen, struct tls_recent *recent, struct tls_peer *peer,
                 char *why, size_t whylen)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t s;
	unsigned status = 0, n = 0;
	int rc = -1;

	memset(peer, 0, sizeof(*peer));
	if (!ci || !ci->tls_session) {
		snprintf(why, whylen, "This connection is not TLS.");
		return -1;
	}
	s = (gnutls_session_t)ci->tls_session;
	peer->resumed = gnutls_session_is_resumed(s) != 0;
	/* Verifying the chain (an ECDSA check and ASN.1 parsing) is a third
	 * of the front's work per request on a kept-alive connection. */
	if (seen_before(seen, recent, s, peer))
		return 0;
	if (seen)
		seen->der_len = 0;
	int v = gnutls_certificate_verify_peers(s, &purpose_client, 1, &status);
	if (v == GNUTLS_E_NO_CERTIFICATE_FOUND) {
		snprintf(why, whylen, "A client certificate is required: pass one issued by the sharness CA (curl --cert FILE --key FILE).");
		return -1;
	}
	if (v < 0) {
		snprintf(why, whylen, "The client certificate could not be verified: %s.", gnutls_strerror(v));
		return -1;
	}
	if (status != 0) {
		const char *reason = "it is not trusted";
		if (status & GNUTLS_CERT_EXPIRED)
			reason = "it has expired; issue a new one with certs/mkcerts --client";
		else if (status & GNUTLS_CERT_NOT_ACTIVATED)
			reason = "it is not valid yet";
		else if (status & GNUTLS_CERT_SIGNER_NOT_FOUND)
			reason = "it is not signed by the sharness CA";
		else if (status & GNUTLS_CERT_PURPOSE_MISMATCH)
			reason = "it lacks the clientAuth extended key usage";
		snprintf(why, whylen, "The client certificate was refused: %s.", reason);
		return -1;
	}
	const gnutls_datum_t *chain = gnutls_certificate_get_peers(s, &n);
	gnutls_x509_crt_t crt;
	if (!chain || n == 0 || gnutls_x509_crt_init(&crt) < 0) {
		snprintf(why, whylen, "A client certificate is required.");
		return -1;
	}
	if (gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) < 0) {
		snprintf(why, whylen, "The client certificate could not be read.");
		goto out;
	}
	size_t sz = sizeof(peer->cn);
	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, peer->cn, &sz) < 0)
		snprintf(peer->cn, sizeof(peer->cn), "?");
	/* Exactly one OU: a second one would make the role ambiguous.  The
	 * second is asked for with no buffer, so any second OU answers
	 * GNUTLS_E_SHORT_MEMORY_BUFFER (present), whatever its length; only
	 * GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE means there is none.  (A
	 * 64-byte buffer here once read a longer second OU as "absent".) */
	size_t esz = 0;
	sz = sizeof(peer->ou);
	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME, 0, 0, peer->ou, &sz) == 0 &&
	    gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME, 1, 0, NULL, &esz) ==
	            GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
		peer->role = role_from_ou(peer->ou);
	unsigned char dig[32];
	size_t dlen = sizeof(dig);
	/* The fingerprint owns the certificate's jobs: none, no request. */
	if (gnutls_fingerprint(GNUTLS_DIG_SHA256, &chain[0], dig, &dlen) < 0 || dlen != sizeof(dig)) {
		snprintf(why, whylen, "The client certificate could not be read.");
		goto out;
	}
	for (size_t i = 0; i < sizeof(dig); i++)
		snprintf(peer->fp + 2 * i, 3, "%02x", dig[i]);
	remember(seen, recent, s, crt, peer);
	rc = 0;
out:
	gnutls_x509_crt_deinit(crt);
	return rc;
}
