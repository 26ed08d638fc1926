/*
 * proxy_host.c - see proxy_host.h.  Pure functions over bytes the sandbox
 * sent: every branch refuses rather than guesses.
 */
#include "proxy_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned hex_val(char c)
{
	if (is_digit(c))
		return (unsigned)(c - '0');
	return (unsigned)((c | 0x20) - 'a' + 10);
}

/*
 * One part of a numeric IPv4 host, as the WHATWG URL standard and
 * inet_aton(3) read it: "0x" hex (empty = 0), a leading "0" octal,
 * otherwise decimal.  Values above 2^32 are refused, not wrapped.
 */
static int ipv4_part(const char *s, size_t n, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (n == 0)
		return -1;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		n -= 2;
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
		s++;
		n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (base == 16 && is_hex(s[i]))
			d = hex_val(s[i]);
		else if (base == 8 && s[i] >= '0' && s[i] <= '7')
			d = (unsigned)(s[i] - '0');
		else if (base == 10 && is_digit(s[i]))
			d = (unsigned)(s[i] - '0');
		else
			return -1;
		v = v * base + d;
		if (v > 0xffffffffu)
			return -1;
	}
	*out = v;
	return 0;
}

/* Does the last label look like a number (so the host must be an IPv4)? */
static bool ends_in_number(const char *s, size_t n)
{
	size_t start = n;
	uint64_t v;

	while (start > 0 && s[start - 1] != '.')
		start--;
	if (start == n)
		return false;
	bool digits = true;
	for (size_t i = start; i < n; i++)
		if (!is_digit(s[i]))
			digits = false;
	return digits || ipv4_part(s + start, n - start, &v) == 0;
}

/* 1-4 parts; all but the last < 256, the last < 256^(5 - parts). */
static int ipv4_parse(const char *s, size_t n, unsigned char out[4])
{
	uint64_t parts[4];
	size_t np = 0, i = 0;

	while (i <= n) {
		size_t j = i;

		while (j < n && s[j] != '.')
			j++;
		if (np == 4 || ipv4_part(s + i, j - i, &parts[np]) < 0)
			return -1;
		np++;
		i = j + 1;
	}
	uint64_t v = 0;
	for (size_t k = 0; k + 1 < np; k++) {
		if (parts[k] > 255)
			return -1;
		v |= parts[k] << (8 * (3 - k));
	}
	if (parts[np - 1] >= (1ull << (8 * (5 - np))))
		return -1;
	v |= parts[np - 1];
	out[0] = (unsigned char)(v >> 24);
	out[1] = (unsigned char)(v >> 16);
	out[2] = (unsigned char)(v >> 8);
	out[3] = (unsigned char)v;
	return 0;
}

static void set_ipv4(struct proxy_host *out, const unsigned char a[4])
{
	out->kind = PROXY_HOST_IPV4;
	memset(out->addr, 0, sizeof(out->addr));
	memcpy(out->addr, a, 4);
	snprintf(out->text, sizeof(out->text), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

static const unsigned char v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static int ipv6_literal(const char *in, size_t len, struct proxy_host *out, const char **why)
{
	char buf[INET6_ADDRSTRLEN + 1];
	struct in6_addr a;

	/* in = "[...]"; inet_pton would accept nothing odd, but check the
	 * alphabet first so '%' (zone ids) gets its own reason. */
	if (len < 3 || in[len - 1] != ']') {
		*why = "has an unterminated '[' IPv6 literal";
		return -1;
	}
	in++;
	len -= 2;
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '%') {
			*why = "has an IPv6 zone id or a '%' escape";
			return -1;
		}
		if (!is_hex(in[i]) && in[i] != ':' && in[i] != '.') {
			*why = "is not a valid IPv6 literal";
			return -1;
		}
	}
	if (len >= sizeof(buf)) {
		*why = "is not a valid IPv6 literal";
		return -1;
	}
	memcpy(buf, in, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1) {
		*why = "is not a valid IPv6 literal";
		return -1;
	}
	if (!memcmp(a.s6_addr, v4mapped_prefix, 12)) {
		set_ipv4(out, a.s6_addr + 12);
		return 0;
	}
	out->kind = PROXY_HOST_IPV6;
	memcpy(out->addr, a.s6_addr, 16);
	inet_ntop(AF_INET6, &a, out->text, sizeof(out->text));
	return 0;
}

int proxy_host_canon(const char *in, size_t len, struct proxy_host *out, const char **why)
{
	char buf[PROXY_HOST_MAX + 2]; /* one trailing dot more than a name holds */
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (len == 0) {
		*why = "is empty";
		return -1;
	}
	if (in[0] == '[')
		return ipv6_literal(in, len, out, why);
	if (len > PROXY_HOST_MAX + 1) {
		*why = "is longer than 253 bytes";
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == 0) {
			*why = "holds a NUL byte";
			return -1;
		}
		if (c < 0x20 || c == 0x7f) {
			*why = "holds a control byte";
			return -1;
		}
		if (c >= 0x80) {
			*why = "holds non-ASCII bytes (send an international name in its xn-- form)";
			return -1;
		}
		if (c == '%') {
			*why = "holds a '%' escape";
			return -1;
		}
		if (c == '@') {
			*why = "holds userinfo ('@')";
			return -1;
		}
		if (c == ' ') {
			*why = "holds whitespace";
			return -1;
		}
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c | 0x20);
		if (!((c >= 'a' && c <= 'z') || is_digit((char)c) || c == '-' || c == '.' || c == '_')) {
			*why = "holds a character that is not allowed in a host name";
			return -1;
		}
		buf[n++] = (char)c;
	}
	/* One trailing dot is the same host (a fully qualified name); two
	 * are not a name at all. */
	if (buf[n - 1] == '.')
		n--;
	if (n == 0 || n > PROXY_HOST_MAX) {
		*why = n ? "is longer than 253 bytes" : "is empty";
		return -1;
	}
	memcpy(out->text, buf, n);
	out->text[n] = '\0';
	for (size_t i = 0, lab = 0; i <= n; i++) {
		if (i == n || out->text[i] == '.') {
			if (lab == 0) {
				*why = "has an empty label";
				return -1;
			}
			if (lab > 63) {
				*why = "has a label longer than 63 bytes";
				return -1;
			}
			lab = 0;
		} else {
			lab++;
		}
	}
	/* A host whose last label is a number is an address in every
	 * resolver (glibc hands "127.1" to inet_aton); read it the same way
	 * here so the allowlist compares the address, not the spelling. */
	if (ends_in_number(out->text, n)) {
		unsigned char a[4];

		if (ipv4_parse(out->text, n, a) < 0) {
			*why = "ends in a number but is not a valid IPv4 address";
			return -1;
		}
		set_ipv4(out, a);
		return 0;
	}
	out->kind = PROXY_HOST_NAME;
	return 0;
}

static int port_parse(const char *s, size_t n, unsigned *port)
{
	unsigned v = 0;

	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

int proxy_authority_parse(const char *in, size_t len, unsigned default_port,
                          struct proxy_host *host, unsigned *port, const char **why)
{
	size_t hlen = len;
	const char *p = NULL;

	if (memchr(in, '@', len)) {
		*why = "holds userinfo ('@')";
		return -1;
	}
	if (len && in[0] == '[') {
		const char *close = memchr(in, ']', len);

		if (!close) {
			*why = "has an unterminated '[' IPv6 literal";
			return -1;
		}
		hlen = (size_t)(close - in) + 1;
		if (hlen < len) {
			if (in[hlen] != ':') {
				*why = "has bytes after the IPv6 literal";
				return -1;
			}
			p = in + hlen + 1;
		}
	} else {
		const char *colon = memrchr(in, ':', len);

		if (colon) {
			hlen = (size_t)(colon - in);
			p = colon + 1;
			if (memchr(in, ':', hlen)) {
				*why = "is an IPv6 address without brackets";
				return -1;
			}
		}
	}
	if (p) {
		if (port_parse(p, (size_t)(in + len - p), port) < 0) {
			*why = "has a port that is not a number from 1 to 65535";
			return -1;
		}
	} else if (default_port) {
		*port = default_port;
	} else {
		*why = "has no port";
		return -1;
	}
	return proxy_host_canon(in, hlen, host, why);
}

enum proxy_match proxy_allow_match(char *const *allow, size_t n, const struct proxy_host *host, bool tunnel,
                                   unsigned port, size_t *index)
{
	enum proxy_match best = PROXY_MATCH_NONE;

	for (size_t i = 0; i < n; i++) {
		const char *e = allow[i], *colon = strrchr(e, ':');
		size_t elen = colon ? (size_t)(colon - e) : strlen(e);
		enum proxy_match m = PROXY_MATCH_NONE;
		unsigned eport;

		if (colon) {
			if (port_parse(colon + 1, strlen(colon + 1), &eport) < 0 || eport != port)
				continue;
		} else if (port != 443 && (port != 80 || tunnel)) {
			continue;
		}
		if (elen > 2 && e[0] == '*' && e[1] == '.') {
			size_t slen = elen - 2, hl = strlen(host->text);

			/* Strictly below the suffix: "a.example.com" for
			 * "*.example.com", never "example.com" nor "xexample.com". */
			if (host->kind == PROXY_HOST_NAME && hl > slen + 1 &&
			    !memcmp(host->text + hl - slen, e + 2, slen) && host->text[hl - slen - 1] == '.')
				m = PROXY_MATCH_WILDCARD;
		} else {
			struct proxy_host eh;
			const char *why;

			/* The entry is canonicalised like the request, so
			 * "10.0.0.5" and a request for "0x0a000005" agree. */
			if (proxy_host_canon(e, elen, &eh, &why) < 0 || eh.kind != host->kind ||
			    strcmp(eh.text, host->text) != 0)
				continue;
			m = eh.kind == PROXY_HOST_NAME ? PROXY_MATCH_EXACT_NAME : PROXY_MATCH_EXACT_ADDR;
		}
		if (m > best) {
			best = m;
			if (index)
				*index = i;
		}
	}
	return best;
}

static enum proxy_addr_class classify4(const unsigned char a[4])
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];

#define IN_NET(net, bits) ((v >> (32 - (bits))) == ((uint32_t)(net) >> (32 - (bits))))
	if (v == 0xa9fea9fe || v == 0xa9feaa02 || v == 0x646464c8 || v == 0xa83f8110)
		return PROXY_ADDR_METADATA; /* 169.254.169.254, 169.254.170.2, 100.100.100.200,
		                               Azure's WireServer 168.63.129.16 */
	if (v == 0xffffffff)
		return PROXY_ADDR_BROADCAST;
	if (IN_NET(0x00000000, 8))
		return PROXY_ADDR_UNSPECIFIED;
	if (IN_NET(0x7f000000, 8))
		return PROXY_ADDR_LOOPBACK;
	if (IN_NET(0x0a000000, 8) || IN_NET(0xac100000, 12) || IN_NET(0xc0a80000, 16) ||
	    IN_NET(0xc6120000, 15))
		return PROXY_ADDR_PRIVATE;
	if (IN_NET(0x64400000, 10))
		return PROXY_ADDR_CGNAT;
	if (IN_NET(0xa9fe0000, 16))
		return PROXY_ADDR_LINK_LOCAL;
	if (IN_NET(0xe0000000, 4))
		return PROXY_ADDR_MULTICAST;
	if (IN_NET(0xf0000000, 4) || IN_NET(0xc0000000, 24) || IN_NET(0xc0000200, 24) ||
	    IN_NET(0xc6336400, 24) || IN_NET(0xcb007100, 24))
		return PROXY_ADDR_RESERVED;
#undef IN_NET
	return PROXY_ADDR_PUBLIC;
}

static enum proxy_addr_class classify6(const unsigned char a[16])
{
	static const unsigned char zero[16], nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char metadata[16] = {0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02};
	static const unsigned char nat64_local[6] = {0, 0x64, 0xff, 0x9b, 0, 1};

	if (!memcmp(a, zero, 16))
		return PROXY_ADDR_UNSPECIFIED;
	if (!memcmp(a, zero, 15) && a[15] == 1)
		return PROXY_ADDR_LOOPBACK;
	if (!memcmp(a, v4mapped_prefix, 12) || !memcmp(a, nat64, 12))
		return classify4(a + 12);
	if (!memcmp(a, zero, 12))
		return PROXY_ADDR_RESERVED; /* IPv4-compatible, deprecated */
	/* 6to4 carries an IPv4 in bytes 2-5; a relay would forward to it, so a
	 * non-public one is refused outright. */
	if (a[0] == 0x20 && a[1] == 0x02)
		return classify4(a + 2) == PROXY_ADDR_PUBLIC ? PROXY_ADDR_PUBLIC : PROXY_ADDR_RESERVED;
	if (!memcmp(a, metadata, 16))
		return PROXY_ADDR_METADATA;
	if (!memcmp(a, nat64_local, 6))
		return PROXY_ADDR_PRIVATE;
	if (a[0] == 0xff)
		return PROXY_ADDR_MULTICAST;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return PROXY_ADDR_LINK_LOCAL;
	if ((a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0))
		return PROXY_ADDR_PRIVATE; /* ULA fc00::/7, site-local fec0::/10 */
	if ((a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) || /* documentation */
	    (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0) ||       /* Teredo */
	    (a[0] == 0x01 && !memcmp(a + 1, zero, 7)))                         /* discard 100::/64 */
		return PROXY_ADDR_RESERVED;
	return PROXY_ADDR_PUBLIC;
}

enum proxy_addr_class proxy_addr_classify(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return classify4((const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr);
	if (sa->sa_family == AF_INET6)
		return classify6(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
	return PROXY_ADDR_RESERVED;
}

const char *proxy_addr_class_name(enum proxy_addr_class c)
{
	switch (c) {
	case PROXY_ADDR_PUBLIC:
		return "public";
	case PROXY_ADDR_LOOPBACK:
		return "loopback";
	case PROXY_ADDR_PRIVATE:
		return "private";
	case PROXY_ADDR_CGNAT:
		return "shared (CGNAT)";
	case PROXY_ADDR_LINK_LOCAL:
		return "link-local";
	case PROXY_ADDR_METADATA:
		return "cloud metadata";
	case PROXY_ADDR_UNSPECIFIED:
		return "unspecified";
	case PROXY_ADDR_MULTICAST:
		return "multicast";
	case PROXY_ADDR_BROADCAST:
		return "broadcast";
	case PROXY_ADDR_RESERVED:
		return "reserved";
	}
	return "reserved";
}

bool proxy_addr_permitted(enum proxy_addr_class c, enum proxy_match m)
{
	switch (c) {
	case PROXY_ADDR_PUBLIC:
		return m != PROXY_MATCH_NONE;
	case PROXY_ADDR_LOOPBACK:
	case PROXY_ADDR_PRIVATE:
	case PROXY_ADDR_CGNAT:
		return m == PROXY_MATCH_EXACT_NAME || m == PROXY_MATCH_EXACT_ADDR;
	case PROXY_ADDR_LINK_LOCAL:
	case PROXY_ADDR_METADATA:
		return m == PROXY_MATCH_EXACT_ADDR;
	case PROXY_ADDR_UNSPECIFIED:
	case PROXY_ADDR_MULTICAST:
	case PROXY_ADDR_BROADCAST:
	case PROXY_ADDR_RESERVED:
		return false;
	}
	return false;
}
