/*
 * conf.c - resolve the daemon URL and certificate paths (see conf.h).
 *
 * Trust: flags and environment come from the person or agent running us; they
 * are checked for shape only.
 */
#include "conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *pick(const char *flag, const char *env)
{
	const char *v = flag;
	if (!v || !*v)
		v = getenv(env);
	return v && *v ? strdup(v) : NULL;
}

static char *default_path(const char *name)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char *p = NULL;
	int n;
	if (xdg && xdg[0] == '/')
		n = asprintf(&p, "%s/sharness/%s", xdg, name);
	else if (home && *home)
		n = asprintf(&p, "%s/.config/sharness/%s", home, name);
	else
		n = asprintf(&p, "/etc/sharness/client/%s", name);
	return n < 0 ? NULL : p;
}

/* https://HOST[:PORT][/PREFIX] with HOST a name, an IPv4 literal or [IPv6]. */
static int parse_url(struct conf *c, const char *what, char *err, size_t errlen)
{
	const char *u = c->url;
	if (strncasecmp(u, "https://", 8) != 0) {
		snprintf(err, errlen, "%s '%s' must start with https:// (sharnessd speaks only mutual TLS)",
			 what, u);
		return -1;
	}
	const char *h = u + 8, *hend, *rest;
	if (*h == '[') {
		hend = strchr(h, ']');
		if (!hend)
			goto bad;
		c->host = strndup(h + 1, (size_t)(hend - h - 1));
		rest = hend + 1;
	} else {
		hend = h + strcspn(h, ":/?#");
		c->host = strndup(h, (size_t)(hend - h));
		rest = hend;
	}
	if (!c->host || !*c->host || strchr(c->host, '@'))
		goto bad;
	if (*rest == ':') {
		size_t n = strspn(rest + 1, "0123456789");
		if (n == 0 || n > 5 || atoi(rest + 1) > 65535 || atoi(rest + 1) == 0)
			goto bad;
		c->port = strndup(rest + 1, n);
		rest += 1 + n;
	} else {
		c->port = strdup("443");
	}
	if (*rest && *rest != '/')
		goto bad;
	size_t plen = strlen(rest);
	while (plen && rest[plen - 1] == '/')
		plen--;
	if (strcspn(rest, "?#") < plen)
		goto bad;
	c->base = strndup(rest, plen);
	if (!c->port || !c->base) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "%s '%s' is not a valid https URL (expected https://HOST:PORT)", what, u);
	return -1;
}

int conf_resolve(struct conf *c, char *err, size_t errlen)
{
	const char *what = c->flag_url ? "--url" : getenv("SHARNESS_URL") ? "SHARNESS_URL" : "the default URL";
	c->url = pick(c->flag_url, "SHARNESS_URL");
	if (!c->url)
		c->url = strdup(CONF_DEFAULT_URL);
	c->cert = pick(c->flag_cert, "SHARNESS_CERT");
	if (!c->cert)
		c->cert = default_path("client.pem");
	c->key = pick(c->flag_key, "SHARNESS_KEY");
	if (!c->key)
		c->key = default_path("client.key");
	c->ca = pick(c->flag_ca, "SHARNESS_CA");
	if (!c->ca)
		c->ca = default_path("ca.pem");
	if (!c->url || !c->cert || !c->key || !c->ca) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return parse_url(c, what, err, errlen);
}

void conf_free(struct conf *c)
{
	if (!c)
		return;
	free(c->url);
	free(c->cert);
	free(c->key);
	free(c->ca);
	free(c->host);
	free(c->port);
	free(c->base);
	c->url = c->cert = c->key = c->ca = c->host = c->port = c->base = NULL;
}
