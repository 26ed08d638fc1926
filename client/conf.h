/*
 * conf.h - where the daemon is and which certificates to present.
 *
 * Precedence: command-line flag, then environment (SHARNESS_URL,
 * SHARNESS_CERT, SHARNESS_KEY, SHARNESS_CA), then the defaults:
 *   url  https://127.0.0.1:7443
 *   dir  $XDG_CONFIG_HOME/sharness, else $HOME/.config/sharness
 *   cert DIR/client.pem, key DIR/client.key, ca DIR/ca.pem
 */
#ifndef SHARNESS_CLIENT_CONF_H
#define SHARNESS_CLIENT_CONF_H

#include <stddef.h>

#define CONF_DEFAULT_URL "https://127.0.0.1:7443"

struct conf {
	/* Flags as given (NULL when absent); the hook passes these on. */
	const char *flag_url, *flag_cert, *flag_key, *flag_ca;
	/* Resolved values, owned by the struct. */
	char *url, *cert, *key, *ca;
	char *host;     /* URL host without brackets: "127.0.0.1", "::1", "localhost" */
	char *port;     /* "7443" */
	char *base;     /* path prefix of the URL without a trailing slash, "" usually */
	int no_ticket;  /* always a full handshake, no ticket read or kept (doctor) */
};

/* Resolves flags, environment and defaults and parses the URL.
 * Returns 0, or -1 with err set ("SHARNESS_URL 'http://x' must start with https://"). */
int conf_resolve(struct conf *c, char *err, size_t errlen);
void conf_free(struct conf *c);

#endif
