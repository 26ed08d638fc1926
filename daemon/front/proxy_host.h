/*
 * proxy_host.h - the egress proxy's pure decisions (SPEC §8): host
 * canonicalisation, allowlist matching and destination-address
 * classification.  No I/O, no allocation, no global state.
 *
 * Trust: every input here comes from the sandbox (a hostile command
 * writing a request line), except the allowlist, which is operator policy
 * already checked by profile.c.  A parser differential between this file and
 * the resolver is an allowlist bypass (sandbox.md §D: the SOCKS5 NUL bypass,
 * trailing dots, numeric IPv4 forms), so the rule is: one canonical form,
 * computed once, matched once, and every oddity refused rather than repaired.
 */
#ifndef SHARNESS_PROXY_HOST_H
#define SHARNESS_PROXY_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define PROXY_HOST_MAX 253 /* DNS name limit, without a trailing dot */

enum proxy_host_kind {
	PROXY_HOST_NAME, /* a DNS name: lower case, no trailing dot */
	PROXY_HOST_IPV4, /* any numeric IPv4 form, or an IPv4-mapped IPv6 literal */
	PROXY_HOST_IPV6, /* a bracketed IPv6 literal that is not IPv4-mapped */
};

struct proxy_host {
	enum proxy_host_kind kind;
	/* Canonical text: "example.com", "127.0.0.1", "::1" (no brackets). */
	char text[PROXY_HOST_MAX + 1];
	/* The address for IPV4 (4 bytes) and IPV6 (16 bytes), network order. */
	unsigned char addr[16];
};

/*
 * Canonicalise the host part of a request target (`len` bytes, not
 * NUL-terminated; may contain NUL, which is refused).  Lower-cases, strips
 * one trailing dot, refuses control bytes, NUL, '%' escapes, '@' (userinfo),
 * whitespace, non-ASCII (IDNs must be sent in their xn-- form) and anything
 * outside [a-z0-9._-].  A name whose last label is numeric is an IPv4
 * address in any of the forms inet_aton(3) and browsers accept (2130706433,
 * 0x7f000001, 0177.0.0.1, 127.1) and becomes its dotted quad, or is refused
 * when it is not a valid address.  "[v6]" literals are parsed by
 * inet_pton(3); zone ids are refused; IPv4-mapped ones become IPv4.
 * Returns 0, or -1 with *why set to a static phrase ("holds a NUL byte").
 */
int proxy_host_canon(const char *in, size_t len, struct proxy_host *out, const char **why);

/*
 * Parse an authority "host:port" or "[v6]:port".  When the port is absent,
 * `default_port` is used, or -1 is returned when default_port is 0 (CONNECT
 * needs a port).  Ports are 1-65535 in decimal.  Userinfo ("user@host") is
 * refused.  Returns 0, or -1 with *why set.
 */
int proxy_authority_parse(const char *in, size_t len, unsigned default_port,
                          struct proxy_host *host, unsigned *port, const char **why);

/* How the best allowlist entry matched; later values grant more. */
enum proxy_match {
	PROXY_MATCH_NONE,
	PROXY_MATCH_WILDCARD,   /* "*.suffix": some name strictly below suffix */
	PROXY_MATCH_EXACT_NAME, /* the exact name */
	PROXY_MATCH_EXACT_ADDR, /* the exact IPv4 literal (in any numeric form) */
};

/*
 * Match a canonical host and port against allowlist entries ("host",
 * "*.suffix", either with ":PORT"; an entry without a port allows 80 and
 * 443, and for a `tunnel` (CONNECT) only 443: a tunnel on 80 would carry
 * plain HTTP whose Host the proxy never sees nor rewrites).  A wildcard
 * never matches an IP literal nor the bare suffix.  Returns the strongest
 * match; *index (may be NULL) is that entry's index.
 */
enum proxy_match proxy_allow_match(char *const *allow, size_t n, const struct proxy_host *host, bool tunnel,
                                   unsigned port, size_t *index);

enum proxy_addr_class {
	PROXY_ADDR_PUBLIC,
	PROXY_ADDR_LOOPBACK,    /* 127/8, ::1 */
	PROXY_ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, 198.18/15, fc00::/7, fec0::/10, 64:ff9b:1::/48 */
	PROXY_ADDR_CGNAT,       /* 100.64/10 (shared address space) */
	PROXY_ADDR_LINK_LOCAL,  /* 169.254/16, fe80::/10 */
	PROXY_ADDR_METADATA,    /* 169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254 */
	PROXY_ADDR_UNSPECIFIED, /* 0/8, :: (connect(0.0.0.0) reaches the local host) */
	PROXY_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
	PROXY_ADDR_BROADCAST,   /* 255.255.255.255 */
	PROXY_ADDR_RESERVED,    /* 240/4, documentation nets, 192.0.0/24, ::/96, 100::/64, 2001::/32, 2001:db8::/32 */
};

/*
 * Classify a destination (AF_INET or AF_INET6; anything else is RESERVED).
 * IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16)
 * addresses are classified by the IPv4 address they carry.
 */
enum proxy_addr_class proxy_addr_classify(const struct sockaddr *sa);

/* "public", "loopback", "private", ... for reasons and the audit log. */
const char *proxy_addr_class_name(enum proxy_addr_class c);

/*
 * May a host matched as `m` be dialed at an address of class `c`?
 *   public                       any match
 *   loopback, private, CGNAT     an exact name or exact address entry
 *   link-local, metadata         only an exact address entry (the operator
 *                                wrote the literal: DNS can never grant it)
 *   unspecified, multicast,      never
 *   broadcast, reserved
 */
bool proxy_addr_permitted(enum proxy_addr_class c, enum proxy_match m);

#endif
