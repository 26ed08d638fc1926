/*
 * test_proxy.c - the egress proxy (SPEC §8): host canonicalisation,
 * allowlist matching and address classification as tables, then the real
 * proxy on real sockets: a loopback HTTP origin (a thread here), a TLS
 * origin (openssl s_server) reached by curl through a TCP listener that
 * hands each accepted fd to proxy_serve_fd() as the supervisor will, the
 * bypass attempts of sandbox.md §C rows 33-35, the limits, the audit lines,
 * and the whole thing again under the front's own seccomp filter.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>

#include "harness.h"
#include "profile.h"
#include "proxy.h"
#include "proxy_host.h"
#include "lockdown.h"

extern char **environ;

static char tmpdir[] = "/tmp/test_proxy.XXXXXX";
static char audit_path[256];
static int audit_fd = -1;
static unsigned origin_port;

/* ---- tables ---- */

struct canon_case {
	const char *in;
	size_t len; /* 0 = strlen */
	const char *want; /* canonical text, or NULL = refused */
	enum proxy_host_kind kind;
};

TEST(canon_table)
{
	static const struct canon_case cases[] = {
		{"Example.COM", 0, "example.com", PROXY_HOST_NAME},
		{"example.com.", 0, "example.com", PROXY_HOST_NAME},
		{"example.com..", 0, NULL, 0},
		{".example.com", 0, NULL, 0},
		{"a..b", 0, NULL, 0},
		{".", 0, NULL, 0},
		{"", 0, NULL, 0},
		{"evil.example\0.allowed.com", 25, NULL, 0},
		{"evil.example%00.allowed.com", 0, NULL, 0},
		{"allowed.com%2e", 0, NULL, 0},
		{"user@allowed.com", 0, NULL, 0},
		{"allowed.com evil", 0, NULL, 0},
		{"allowed.com\tevil", 0, NULL, 0},
		{"allowed.com\r\nx", 0, NULL, 0},
		{"allowed.com/x", 0, NULL, 0},
		{"allowed.com\\x", 0, NULL, 0},
		{"b\xc3\xbc" "cher.de", 0, NULL, 0},
		{"xn--bcher-kva.de", 0, "xn--bcher-kva.de", PROXY_HOST_NAME},
		{"under_score.example", 0, "under_score.example", PROXY_HOST_NAME},
		{"2130706433", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"0x7f000001", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"0X7F000001", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"0177.0.0.1", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"127.1", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"127.0.1", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"0x7f.1", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"127.0.0.1.", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"169.254.169.254", 0, "169.254.169.254", PROXY_HOST_IPV4},
		{"0xa9.0xfe.0xa9.0xfe", 0, "169.254.169.254", PROXY_HOST_IPV4},
		{"0", 0, "0.0.0.0", PROXY_HOST_IPV4},
		{"256.0.0.1", 0, NULL, 0},
		{"1.2.3.4.5", 0, NULL, 0},
		{"4294967296", 0, NULL, 0},
		{"08.0.0.1", 0, NULL, 0},      /* not octal, not decimal: refused */
		{"1.2.3.0x", 0, "1.2.3.0", PROXY_HOST_IPV4},
		{"foo.123", 0, NULL, 0},       /* ends in a number: must be an address */
		{"123.foo", 0, "123.foo", PROXY_HOST_NAME},
		{"[::1]", 0, "::1", PROXY_HOST_IPV6},
		{"[::ffff:127.0.0.1]", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"[::FFFF:7f00:1]", 0, "127.0.0.1", PROXY_HOST_IPV4},
		{"[fe80::1%eth0]", 0, NULL, 0},
		{"[fe80::1%25eth0]", 0, NULL, 0},
		{"[::1", 0, NULL, 0},
		{"[zz::1]", 0, NULL, 0},
		{"::1", 0, NULL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct canon_case *t = &cases[i];
		struct proxy_host h;
		const char *why = NULL;
		int r = proxy_host_canon(t->in, t->len ? t->len : strlen(t->in), &h, &why);

		if (t->want) {
			if (r != 0)
				fprintf(stderr, "# '%s' refused: %s\n", t->in, why);
			CHECK_EQ_INT(r, 0);
			CHECK_STR(h.text, t->want);
			CHECK_EQ_INT(h.kind, t->kind);
		} else {
			if (r == 0)
				fprintf(stderr, "# '%s' accepted as '%s'\n", t->in, h.text);
			CHECK_EQ_INT(r, -1);
			CHECK(why != NULL);
		}
	}
	/* 253 bytes is the limit; a trailing dot does not count. */
	char longname[300];
	memset(longname, 'a', sizeof(longname));
	for (size_t i = 63; i < sizeof(longname); i += 64)
		longname[i] = '.';
	struct proxy_host h;
	const char *why;
	CHECK_EQ_INT(proxy_host_canon(longname, 253, &h, &why), 0);
	CHECK_EQ_INT(proxy_host_canon(longname, 254, &h, &why), -1);
	longname[253] = '.';
	CHECK_EQ_INT(proxy_host_canon(longname, 254, &h, &why), 0);
	CHECK_EQ_INT(strlen(h.text), 253);
}

TEST(authority_table)
{
	struct proxy_host h;
	unsigned port = 0;
	const char *why;

#define AUTH_OK(s, dflt, host, p)                                                     \
	do {                                                                          \
		CHECK_EQ_INT(proxy_authority_parse(s, strlen(s), dflt, &h, &port, &why), 0); \
		CHECK_STR(h.text, host);                                              \
		CHECK_EQ_INT(port, p);                                                \
	} while (0)
#define AUTH_BAD(s, dflt) CHECK_EQ_INT(proxy_authority_parse(s, strlen(s), dflt, &h, &port, &why), -1)
	AUTH_OK("Example.com:443", 0, "example.com", 443);
	AUTH_OK("example.com", 80, "example.com", 80);
	AUTH_OK("[::1]:8080", 0, "::1", 8080);
	AUTH_OK("[::ffff:127.0.0.1]:22", 0, "127.0.0.1", 22);
	AUTH_OK("2130706433:22", 0, "127.0.0.1", 22);
	AUTH_OK("localhost.:1", 0, "localhost", 1);
	AUTH_BAD("example.com", 0);            /* CONNECT needs a port */
	AUTH_BAD("example.com:", 0);
	AUTH_BAD("example.com:0", 0);
	AUTH_BAD("example.com:65536", 0);
	AUTH_BAD("example.com:+443", 0);
	AUTH_BAD("example.com:0443x", 0);
	AUTH_BAD("example.com:443:443", 0);
	AUTH_BAD("user:pw@example.com:443", 0);
	AUTH_BAD("allowed.com@evil.example:443", 0);
	AUTH_BAD("::1:443", 0);
	AUTH_BAD("[::1]x:443", 0);
	AUTH_BAD("[::1:443", 0);
	AUTH_BAD(":443", 0);
#undef AUTH_OK
#undef AUTH_BAD
}

static enum proxy_match match(char *const *allow, size_t n, const char *host, unsigned port)
{
	struct proxy_host h;
	const char *why;

	if (proxy_host_canon(host, strlen(host), &h, &why) < 0)
		return (enum proxy_match)-1;
	return proxy_allow_match(allow, n, &h, false, port, NULL);
}

TEST(allow_match)
{
	char *allow[] = {"github.com", "*.githubusercontent.com", "registry.example:8443",
	                 "10.0.0.5:8080", "*.corp.example:22", "localhost"};
	size_t n = sizeof(allow) / sizeof(allow[0]);

	CHECK_EQ_INT(match(allow, n, "github.com", 443), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(match(allow, n, "GITHUB.COM.", 80), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(match(allow, n, "github.com", 22), PROXY_MATCH_NONE);  /* no port: 80 and 443 only */
	/* A CONNECT tunnel: an entry without a port allows 443 only (on 80 it
	 * would carry a Host the proxy never sees); one that names 80 allows it. */
	struct proxy_host gh;
	const char *bad;
	char *port80[] = {"github.com:80"};
	CHECK_EQ_INT(proxy_host_canon("github.com", 10, &gh, &bad), 0);
	CHECK_EQ_INT(proxy_allow_match(allow, n, &gh, true, 80, NULL), PROXY_MATCH_NONE);
	CHECK_EQ_INT(proxy_allow_match(allow, n, &gh, true, 443, NULL), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(proxy_allow_match(port80, 1, &gh, true, 80, NULL), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(match(allow, n, "github.com", 8443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "api.github.com", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "github.com.evil.example", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "evilgithub.com", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "raw.githubusercontent.com", 443), PROXY_MATCH_WILDCARD);
	CHECK_EQ_INT(match(allow, n, "a.b.githubusercontent.com", 443), PROXY_MATCH_WILDCARD);
	CHECK_EQ_INT(match(allow, n, "githubusercontent.com", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "evilgithubusercontent.com", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "raw.githubusercontent.com.evil.example", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "registry.example", 8443), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(match(allow, n, "registry.example", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "10.0.0.5", 8080), PROXY_MATCH_EXACT_ADDR);
	CHECK_EQ_INT(match(allow, n, "0x0a000005", 8080), PROXY_MATCH_EXACT_ADDR);
	CHECK_EQ_INT(match(allow, n, "10.5", 8080), PROXY_MATCH_EXACT_ADDR);
	CHECK_EQ_INT(match(allow, n, "167772165", 8080), PROXY_MATCH_EXACT_ADDR);
	CHECK_EQ_INT(match(allow, n, "[::ffff:10.0.0.5]", 8080), PROXY_MATCH_EXACT_ADDR);
	CHECK_EQ_INT(match(allow, n, "10.0.0.5", 80), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "10.0.0.6", 8080), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "git.corp.example", 22), PROXY_MATCH_WILDCARD);
	CHECK_EQ_INT(match(allow, n, "git.corp.example", 443), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "localhost", 80), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(match(allow, n, "127.0.0.1", 80), PROXY_MATCH_NONE);   /* the name, not its address */
	CHECK_EQ_INT(match(allow, n, "2130706433", 80), PROXY_MATCH_NONE);
	CHECK_EQ_INT(match(allow, n, "[::1]", 80), PROXY_MATCH_NONE);

	/* A wildcard whose suffix ends in digits never matches an address. */
	char *wild_digits[] = {"*.0.0.1"};
	CHECK_EQ_INT(match(wild_digits, 1, "127.0.0.1", 80), PROXY_MATCH_NONE);
	/* The strongest entry wins. */
	char *both[] = {"*.example.org", "www.example.org"};
	size_t idx = 99;
	struct proxy_host h;
	const char *why;
	CHECK_EQ_INT(proxy_host_canon("www.example.org", 15, &h, &why), 0);
	CHECK_EQ_INT(proxy_allow_match(both, 2, &h, false, 443, &idx), PROXY_MATCH_EXACT_NAME);
	CHECK_EQ_INT(idx, 1);
}

static enum proxy_addr_class classify(const char *text)
{
	struct sockaddr_storage ss = {0};

	if (strchr(text, ':')) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, text, &s->sin6_addr) != 1)
			return (enum proxy_addr_class)-1;
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		if (inet_pton(AF_INET, text, &s->sin_addr) != 1)
			return (enum proxy_addr_class)-1;
	}
	return proxy_addr_classify((struct sockaddr *)&ss);
}

TEST(addr_classify)
{
	static const struct {
		const char *a;
		enum proxy_addr_class c;
	} t[] = {
		{"1.1.1.1", PROXY_ADDR_PUBLIC},
		{"140.82.112.3", PROXY_ADDR_PUBLIC},
		{"127.0.0.1", PROXY_ADDR_LOOPBACK},
		{"127.255.255.254", PROXY_ADDR_LOOPBACK},
		{"10.1.2.3", PROXY_ADDR_PRIVATE},
		{"172.16.0.1", PROXY_ADDR_PRIVATE},
		{"172.31.255.255", PROXY_ADDR_PRIVATE},
		{"172.32.0.1", PROXY_ADDR_PUBLIC},
		{"192.168.1.1", PROXY_ADDR_PRIVATE},
		{"100.64.0.1", PROXY_ADDR_CGNAT},
		{"100.127.255.255", PROXY_ADDR_CGNAT},
		{"100.128.0.1", PROXY_ADDR_PUBLIC},
		{"169.254.1.1", PROXY_ADDR_LINK_LOCAL},
		{"169.254.169.254", PROXY_ADDR_METADATA},
		{"100.100.100.200", PROXY_ADDR_METADATA},
		{"168.63.129.16", PROXY_ADDR_METADATA},
		{"::ffff:168.63.129.16", PROXY_ADDR_METADATA},
		{"0.0.0.0", PROXY_ADDR_UNSPECIFIED},
		{"0.1.2.3", PROXY_ADDR_UNSPECIFIED},
		{"224.0.0.1", PROXY_ADDR_MULTICAST},
		{"255.255.255.255", PROXY_ADDR_BROADCAST},
		{"240.0.0.1", PROXY_ADDR_RESERVED},
		{"192.0.2.1", PROXY_ADDR_RESERVED},
		{"::1", PROXY_ADDR_LOOPBACK},
		{"::", PROXY_ADDR_UNSPECIFIED},
		{"::ffff:127.0.0.1", PROXY_ADDR_LOOPBACK},
		{"::ffff:169.254.169.254", PROXY_ADDR_METADATA},
		{"::ffff:10.0.0.1", PROXY_ADDR_PRIVATE},
		{"::ffff:1.1.1.1", PROXY_ADDR_PUBLIC},
		{"::127.0.0.1", PROXY_ADDR_RESERVED},
		{"64:ff9b::a9fe:a9fe", PROXY_ADDR_METADATA},
		{"64:ff9b::101:101", PROXY_ADDR_PUBLIC},
		{"2002:7f00:1::", PROXY_ADDR_RESERVED},
		{"2002:101:101::", PROXY_ADDR_PUBLIC},
		{"fe80::1", PROXY_ADDR_LINK_LOCAL},
		{"febf::1", PROXY_ADDR_LINK_LOCAL},
		{"fc00::1", PROXY_ADDR_PRIVATE},
		{"fd12:3456::1", PROXY_ADDR_PRIVATE},
		{"fd00:ec2::254", PROXY_ADDR_METADATA},
		{"ff02::1", PROXY_ADDR_MULTICAST},
		{"2001:db8::1", PROXY_ADDR_RESERVED},
		{"2606:4700:4700::1111", PROXY_ADDR_PUBLIC},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		enum proxy_addr_class c = classify(t[i].a);
		if (c != t[i].c)
			fprintf(stderr, "# %s classified %s\n", t[i].a, proxy_addr_class_name(c));
		CHECK_EQ_INT(c, t[i].c);
	}
}

/* The DNS-rebinding rule (sandbox.md §C row 34) as a decision table: a
 * name matched by a wildcard never reaches a non-public address; an exact
 * name reaches loopback and private ones (tests, internal registries) but
 * never link-local or metadata, which only the literal itself grants. */
TEST(addr_permitted)
{
	CHECK(proxy_addr_permitted(PROXY_ADDR_PUBLIC, PROXY_MATCH_WILDCARD));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_PUBLIC, PROXY_MATCH_NONE));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_LOOPBACK, PROXY_MATCH_WILDCARD));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_PRIVATE, PROXY_MATCH_WILDCARD));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_CGNAT, PROXY_MATCH_WILDCARD));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_METADATA, PROXY_MATCH_WILDCARD));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_LINK_LOCAL, PROXY_MATCH_WILDCARD));
	CHECK(proxy_addr_permitted(PROXY_ADDR_LOOPBACK, PROXY_MATCH_EXACT_NAME));
	CHECK(proxy_addr_permitted(PROXY_ADDR_PRIVATE, PROXY_MATCH_EXACT_NAME));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_METADATA, PROXY_MATCH_EXACT_NAME));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_LINK_LOCAL, PROXY_MATCH_EXACT_NAME));
	CHECK(proxy_addr_permitted(PROXY_ADDR_METADATA, PROXY_MATCH_EXACT_ADDR));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_UNSPECIFIED, PROXY_MATCH_EXACT_ADDR));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_MULTICAST, PROXY_MATCH_EXACT_ADDR));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_BROADCAST, PROXY_MATCH_EXACT_ADDR));
	CHECK(!proxy_addr_permitted(PROXY_ADDR_RESERVED, PROXY_MATCH_EXACT_ADDR));
}

/* ---- a loopback HTTP origin ---- */

static char big[100000]; /* filled before the origin starts */

static void *origin_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char req[8192], body[9000], hdr[256];
	size_t got = 0;

	for (;;) {
		ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);
		if (n <= 0)
			goto out;
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
		if (got == sizeof(req) - 1)
			goto out;
	}
	if (!strncmp(req, "POST /drain ", 12)) {
		/* Everything the proxy sends, until 300 ms of silence or its EOF. */
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		while (got < sizeof(req) - 1 && poll(&p, 1, 300) == 1 &&
		       (n = recv(fd, req + got, sizeof(req) - 1 - got, 0)) > 0)
			got += (size_t)n;
		req[got] = '\0';
	} else if (!strncmp(req, "GET /big ", 9) || !strncmp(req, "GET /slowbig ", 13)) {
		if (req[5] == 's')
			usleep(300000);
		int h = snprintf(hdr, sizeof(hdr), "HTTP/1.0 200 OK\r\nContent-Length: %zu\r\n\r\n", sizeof(big));
		(void)!send(fd, hdr, (size_t)h, MSG_NOSIGNAL);
		(void)!send(fd, big, sizeof(big), MSG_NOSIGNAL);
		goto out;
	}
	/* Echo what arrived, so tests see the rewritten head. */
	int b = snprintf(body, sizeof(body), "origin saw:\n%s", req);
	int h = snprintf(hdr, sizeof(hdr), "HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n", b);
	(void)!send(fd, hdr, (size_t)h, MSG_NOSIGNAL);
	(void)!send(fd, body, (size_t)b, MSG_NOSIGNAL);
out:
	close(fd);
	return NULL;
}

static int listen_loopback(unsigned *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
		return -1;
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void *origin_main(void *arg)
{
	int lfd = (int)(intptr_t)arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t t;

		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, origin_conn, (void *)(intptr_t)fd) == 0)
			pthread_detach(t);
		else
			close(fd);
	}
	return NULL;
}

/* A port nothing listens on: bound, then closed. */
static unsigned closed_port(void)
{
	unsigned p = 0;
	int fd = listen_loopback(&p);
	close(fd);
	return p;
}

/* ---- driving the proxy like the front will ---- */

static struct profile test_profile(char **allow, size_t n)
{
	struct profile p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "test");
	p.network = PROFILE_NETWORK_PROXY;
	for (size_t i = 0; i < n; i++)
		p.proxy_allow[i] = allow[i];
	p.n_proxy_allow = n;
	return p;
}

static struct proxy *make_proxy(const char *allow0, const char *allow1, const struct proxy_limits *lim)
{
	char *allow[2] = {(char *)allow0, (char *)allow1};
	struct profile p = test_profile(allow, allow1 ? 2 : 1);
	char err[256] = "";
	struct proxy *px = proxy_new(&p, lim, audit_fd, "testrun", err, sizeof(err));

	if (!px)
		fprintf(stderr, "# proxy_new: %s\n", err);
	return px;
}

/* A client end whose other end the proxy serves (the supervisor will pass
 * an accepted TCP fd; a socketpair is the same stream to the proxy). */
static int px_client(struct proxy *px)
{
	int sv[2];
	struct timeval tv = {.tv_sec = 5};

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (proxy_serve_fd(px, sv[1]) < 0) {
		int e = errno;
		close(sv[0]);
		errno = e;
		return -1;
	}
	return sv[0];
}

/* Read until EOF (or 5 s of silence); returns bytes, NUL-terminated. */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t got = 0;

	while (got + 1 < cap) {
		ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return got;
}

/* Read until a blank line (a reply head), not until EOF. */
static size_t read_head(int fd, char *buf, size_t cap)
{
	size_t got = 0;

	while (got + 1 < cap) {
		ssize_t n = recv(fd, buf + got, 1, 0);
		if (n <= 0)
			break;
		got++;
		buf[got] = '\0';
		if (got >= 4 && !memcmp(buf + got - 4, "\r\n\r\n", 4))
			break;
	}
	buf[got] = '\0';
	return got;
}

static int status_of(const char *reply)
{
	int s = 0;
	if (sscanf(reply, "HTTP/1.%*d %d", &s) != 1)
		return 0;
	return s;
}

/* Send `req` (len bytes) through a fresh proxy connection; the reply in buf. */
static int ask(struct proxy *px, const char *req, size_t len, char *buf, size_t cap)
{
	int fd = px_client(px);

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	(void)!send(fd, req, len, MSG_NOSIGNAL);
	read_all(fd, buf, cap);
	close(fd);
	return status_of(buf);
}

static int asks(struct proxy *px, const char *req, char *buf, size_t cap)
{
	return ask(px, req, strlen(req), buf, cap);
}

static char *audit_text(void)
{
	static char buf[1 << 18];
	int fd = open(audit_path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

TEST(plain_http_allowed)
{
	char allow[64], req[512], reply[16384];
	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, NULL);
	CHECK(px != NULL);
	if (!px)
		return;
	snprintf(req, sizeof(req),
	         "GET http://LocalHost.:%u/path?q=1 HTTP/1.1\r\nHost: evil.example\r\nUser-Agent: t\r\n"
	         "Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
	         origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	/* origin-form, the checked host, end-to-end headers only */
	CHECK_CONTAINS(reply, "origin saw:\nGET /path?q=1 HTTP/1.1\r\n");
	char host[64];
	snprintf(host, sizeof(host), "\r\nHost: localhost:%u\r\n", origin_port);
	CHECK_CONTAINS(reply, host);
	CHECK_CONTAINS(reply, "User-Agent: t\r\n");
	CHECK_CONTAINS(reply, "Accept: */*\r\n");
	CHECK_CONTAINS(reply, "Connection: close\r\n");
	CHECK(strstr(reply, "evil.example") == NULL);
	CHECK(strstr(reply, "Proxy-") == NULL);
	/* Every Proxy-* header is the proxy's, and what Connection names is
	 * hop-by-hop (RFC 9110 §7.6.1): none reaches the origin. */
	snprintf(req, sizeof(req),
	         "GET http://localhost:%u/hop HTTP/1.1\r\nConnection: X-Hop, keep-alive\r\nX-Hop: secret\r\n"
	         "Proxy-Foo: 1\r\nX-Kept: yes\r\n\r\n",
	         origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	CHECK_CONTAINS(reply, "X-Kept: yes\r\n");
	CHECK(strstr(reply, "X-Hop") == NULL);
	CHECK(strstr(reply, "Proxy-Foo") == NULL);
	/* A body goes as it came, exactly its Content-Length: a request
	 * pipelined behind it never reaches the origin. */
	snprintf(req, sizeof(req),
	         "POST http://localhost:%u/drain HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
	         "GET /second HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n",
	         origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	CHECK_CONTAINS(reply, "Content-Length: 5\r\nConnection: close\r\n\r\nhello");
	CHECK(strstr(reply, "second") == NULL);
	CHECK(strstr(reply, "internal-admin") == NULL);
	/* A chunked body goes as it came, to the last chunk's end and no
	 * further; Connection cannot unframe it. */
	snprintf(req, sizeof(req),
	         "POST http://localhost:%u/drain HTTP/1.1\r\nConnection: Transfer-Encoding\r\n"
	         "Transfer-Encoding: Chunked\r\n\r\n5;ext=\"x\"\r\nhello\r\n1A\r\n%s\r\n0\r\n\r\n"
	         "GET /second HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n",
	         origin_port, "abcdefghijklmnopqrstuvwxyz");
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	CHECK_CONTAINS(reply, "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n5;ext=\"x\"\r\nhello\r\n1A\r\n"
	                      "abcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n");
	CHECK(strstr(reply, "internal-admin") == NULL);
	/* Chunks whose framing is broken (a bare LF, a size that is not hex,
	 * anything but spaces and ';' after it, a size past the byte limit,
	 * trailer fields, no CRLF after the data) are a 400, nothing dialed. */
	const char *broken[] = {"5\nhello\r\n0\r\n\r\n", "zz\r\nhello\r\n0\r\n\r\n", "5 5\r\nhello\r\n0\r\n\r\n",
	                        "FFFFFFFFFFFF\r\n", "5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", "5\r\nhelloXX0\r\n\r\n"};
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		snprintf(req, sizeof(req), "POST http://localhost:%u/drain HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n%s",
		         origin_port, broken[i]);
		CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 400);
		CHECK_CONTAINS(reply, "the request's chunked body is malformed");
	}
	/* Spaces before an extension, and before the line's end, are allowed. */
	snprintf(req, sizeof(req),
	         "POST http://localhost:%u/drain HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 ;a=b\r\nhello\r\n0 \r\n\r\n",
	         origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	/* ... also when Connection names Content-Length: it frames the body. */
	snprintf(req, sizeof(req),
	         "POST http://localhost:%u/drain HTTP/1.1\r\nConnection: Content-Length\r\nContent-Length: 5\r\n\r\n"
	         "hello" "GET /second HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n",
	         origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	CHECK_CONTAINS(reply, "Content-Length: 5\r\nConnection: close\r\n\r\nhello");
	CHECK(strstr(reply, "internal-admin") == NULL);
	/* a body after the head is forwarded as it came */
	snprintf(req, sizeof(req), "POST http://localhost:%u/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
	         origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	CHECK_CONTAINS(reply, "origin saw:\nPOST / HTTP/1.1\r\n");
	proxy_free(px);
	char *a = audit_text();
	CHECK_CONTAINS(a, "\"event\":\"proxy\",\"run_id\":\"testrun\",\"profile\":\"test\",\"method\":\"GET\",\"host\":\"localhost\"");
	CHECK_CONTAINS(a, "\"decision\":\"allow\",\"status\":200,\"reason\":\"allowlist entry 'localhost:");
	CHECK_CONTAINS(a, "\"address\":\"127.0.0.1\"");
	CHECK_CONTAINS(a, "\"event\":\"proxy_end\",\"run_id\":\"testrun\",\"host\":\"localhost\"");
}

/* Bytes a client sends after its request's body (here a late one, on real
 * TCP) are read and dropped: left unread, closing the connection makes the
 * kernel reset it, and the client loses the end of its reply. */
TEST(bytes_after_the_body_are_drained)
{
	char allow[64], req[256];
	static char reply[sizeof(big) + 4096];
	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, NULL);
	if (!px)
		return;
	unsigned port = 0;
	int l = listen_loopback(&port);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 5};
	int small = 4096; /* the reply waits in the proxy's send queue, which a reset drops */
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	CHECK(l >= 0 && connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	int sfd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	close(l);
	CHECK(sfd >= 0 && proxy_serve_fd(px, sfd) == 0);
	/* The stray bytes come while the origin takes its time (300 ms). */
	snprintf(req, sizeof(req), "GET http://localhost:%u/slowbig HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
	         origin_port);
	(void)!send(cfd, req, strlen(req), MSG_NOSIGNAL);
	usleep(100000);
	(void)!send(cfd, "\r\n\r\nstray bytes after the body\r\n", 33, MSG_NOSIGNAL);
	usleep(500000); /* the origin has answered and closed; the proxy closes too */
	size_t got = read_all(cfd, reply, sizeof(reply));
	if (got <= sizeof(big))
		fprintf(stderr, "# got %zu bytes (%s): %.20s\n", got, strerror(errno), reply);
	CHECK(got > sizeof(big));
	CHECK_EQ_INT(status_of(reply), 200);
	close(cfd);
	proxy_free(px);
}

TEST(connect_allowed)
{
	char allow[64], req[512], reply[16384];
	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, NULL);
	if (!px)
		return;
	int fd = px_client(px);
	CHECK(fd >= 0);
	snprintf(req, sizeof(req), "CONNECT LOCALHOST.:%u HTTP/1.1\r\nHost: x\r\n\r\nGET /tunnel HTTP/1.1\r\n\r\n",
	         origin_port);
	(void)!send(fd, req, strlen(req), MSG_NOSIGNAL);
	read_head(fd, reply, sizeof(reply));
	CHECK_STR(reply, "HTTP/1.1 200 Connection established\r\n\r\n");
	read_all(fd, reply, sizeof(reply));
	/* the bytes after the CONNECT head went through the tunnel untouched */
	CHECK_CONTAINS(reply, "origin saw:\nGET /tunnel HTTP/1.1\r\n\r\n");
	close(fd);
	proxy_free(px);
}

struct denial {
	const char *req; /* %u = the origin's port */
	int status;
	const char *body;
};

/* printf's "%u" and "%%" only, without a non-literal format string. */
static void fill(char *out, size_t cap, const char *tmpl, unsigned port)
{
	size_t o = 0;

	for (const char *t = tmpl; *t && o + 8 < cap; t++) {
		if (t[0] == '%' && t[1] == 'u') {
			o += (size_t)snprintf(out + o, cap - o, "%u", port);
			t++;
		} else if (t[0] == '%' && t[1] == '%') {
			out[o++] = '%';
			t++;
		} else {
			out[o++] = *t;
		}
	}
	out[o] = '\0';
}

/* sandbox.md §C rows 33-35 and the parser's refusals, one request each. */
TEST(denials)
{
	static const struct denial d[] = {
		{"GET http://evil.example/ HTTP/1.1\r\n\r\n", 403,
		 "sharness proxy: host 'evil.example' port 80 is not on the allowlist of profile 'test'\n"},
		{"CONNECT evil.example:443 HTTP/1.1\r\n\r\n", 403, "is not on the allowlist"},
		{"CONNECT 127.0.0.1:22 HTTP/1.1\r\n\r\n", 403, "host '127.0.0.1' port 22 is not on the allowlist"},
		{"CONNECT localhost:1 HTTP/1.1\r\n\r\n", 403, "host 'localhost' port 1 is not on the allowlist"},
		{"CONNECT localhost.evil.example:%u HTTP/1.1\r\n\r\n", 403, "is not on the allowlist"},
		{"CONNECT evil.example%%00.localhost:%u HTTP/1.1\r\n\r\n", 400, "holds a '%' escape"},
		{"CONNECT evil.example%%2elocalhost:%u HTTP/1.1\r\n\r\n", 400, "'%' escape"},
		{"CONNECT [::ffff:127.0.0.1]:%u HTTP/1.1\r\n\r\n", 403, "host '127.0.0.1' port"},
		{"CONNECT [::1]:%u HTTP/1.1\r\n\r\n", 403, "host '::1' port"},
		{"CONNECT 2130706433:%u HTTP/1.1\r\n\r\n", 403, "host '127.0.0.1' port"},
		{"CONNECT 0x7f000001:%u HTTP/1.1\r\n\r\n", 403, "host '127.0.0.1' port"},
		{"CONNECT 0177.0.0.1:%u HTTP/1.1\r\n\r\n", 403, "host '127.0.0.1' port"},
		{"CONNECT 127.1:%u HTTP/1.1\r\n\r\n", 403, "host '127.0.0.1' port"},
		{"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n", 403, "not on the allowlist"},
		{"CONNECT localhost HTTP/1.1\r\n\r\n", 400, "has no port"},
		{"CONNECT user@localhost:%u HTTP/1.1\r\n\r\n", 400, "userinfo"},
		{"GET http://user:pw@localhost:%u/ HTTP/1.1\r\n\r\n", 400, "userinfo"},
		{"GET https://localhost:%u/ HTTP/1.1\r\n\r\n", 400, "CONNECT"},
		{"GET / HTTP/1.1\r\nHost: localhost:%u\r\n\r\n", 400, "not an absolute http:// URL"},
		{"GET ftp://localhost:%u/ HTTP/1.1\r\n\r\n", 400, "not an absolute http:// URL"},
		{"GET http://localhost:%u/ HTTP/2.0\r\n\r\n", 400, "malformed request line"},
		{"get http://localhost:%u/ HTTP/1.1\r\n\r\n", 400, "malformed request line"},
		{"GET  http://localhost:%u/ HTTP/1.1\r\n\r\n", 400, "malformed request line"},
		{"GET http://localhost:%u/ HTTP/1.1\r\nX: a\nY: b\r\n\r\n", 400, "bare LF"},
		{"GET http://localhost:%u/ HTTP/1.1\r\nX: a\rY: b\r\n\r\n", 400, "bare CR"},
		{"GET http://localhost:%u/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, "header line"},
		{"GET http://localhost:%u/ HTTP/1.1\r\nNo colon here\r\n\r\n", 400, "header line"},
		{"CONNECT localhost:%u HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, "header line"},
		{"CONNECT localhost:%u HTTP/1.1\r\nNo colon here\r\n\r\n", 400, "header line"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, "Transfer-Encoding"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400, "both Transfer-Encoding and Content-Length"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400, "Content-Length"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nContent-Length: 5x\r\n\r\n", 400, "Content-Length"},
		{"POST http://localhost:%u/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "Content-Length"},
		{"GET http://[fe80::1%%25lo]:%u/ HTTP/1.1\r\n\r\n", 400, "zone id"},
		{"GET http://b\xc3\xbc" "cher.de/ HTTP/1.1\r\n\r\n", 400, "malformed request line"},
	};
	char allow[64], req[512], reply[4096];

	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, NULL);
	if (!px)
		return;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		fill(req, sizeof(req), d[i].req, origin_port);
		int s = asks(px, req, reply, sizeof(reply));
		if (s != d[i].status || !strstr(reply, d[i].body))
			fprintf(stderr, "# case %zu: %s", i, req);
		CHECK_EQ_INT(s, d[i].status);
		CHECK_CONTAINS(reply, d[i].body);
		CHECK_CONTAINS(reply, "Connection: close\r\n");
	}
	/* A real NUL byte in the authority (the SOCKS5 bypass, here in HTTP). */
	int n = snprintf(req, sizeof(req), "CONNECT evil.example#.localhost:%u HTTP/1.1\r\n\r\n", origin_port);
	*strchr(req, '#') = '\0';
	CHECK_EQ_INT(ask(px, req, (size_t)n, reply, sizeof(reply)), 400);
	CHECK_CONTAINS(reply, "NUL byte");
	/* A head that never ends. */
	static char huge[PROXY_HEAD_MAX + 100];
	memset(huge, 'a', sizeof(huge));
	memcpy(huge, "GET http://localhost/", 21);
	CHECK_EQ_INT(ask(px, huge, sizeof(huge), reply, sizeof(reply)), 400);
	CHECK_CONTAINS(reply, "longer than 16384 bytes");
	proxy_free(px);
	char *a = audit_text();
	CHECK_CONTAINS(a, "\"host\":\"evil.example\",\"port\":443,\"decision\":\"deny\",\"status\":403");
	CHECK_CONTAINS(a, "\"decision\":\"deny\",\"status\":400,\"reason\":\"CONNECT target 'evil.example%00.localhost:");
}

/* Naming the literal grants the literal, in whatever form it is written. */
TEST(exact_address_entry)
{
	char allow[64], req[512], reply[8192];
	snprintf(allow, sizeof(allow), "127.0.0.1:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, NULL);
	if (!px)
		return;
	const char *forms[] = {"127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1",
	                       "[::ffff:127.0.0.1]"};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(req, sizeof(req), "GET http://%s:%u/f%zu HTTP/1.1\r\n\r\n", forms[i], origin_port, i);
		CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
		char want[64];
		snprintf(want, sizeof(want), "GET /f%zu HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n", i, origin_port);
		CHECK_CONTAINS(reply, want);
	}
	/* the name is not the literal */
	snprintf(req, sizeof(req), "GET http://localhost:%u/ HTTP/1.1\r\n\r\n", origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 403);
	proxy_free(px);
}

TEST(daemon_port_and_dial_failure)
{
	char allow[64], allow2[64], req[512], reply[8192];
	unsigned dead = closed_port();
	struct proxy_limits lim = {.daemon_port = origin_port, .daemon_host = "127.0.0.1"};

	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	snprintf(allow2, sizeof(allow2), "localhost:%u", dead);
	struct proxy *px = make_proxy(allow, allow2, &lim);
	if (!px)
		return;
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 403);
	CHECK_CONTAINS(reply, "the sharness daemon's own port");
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", dead);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 502);
	CHECK_CONTAINS(reply, "could not connect to host 'localhost' port");
	CHECK_CONTAINS(reply, "Connection refused");
	proxy_free(px);
	CHECK_CONTAINS(audit_text(), "\"decision\":\"error\",\"status\":502");

	/* A daemon listening on 0.0.0.0 answers on loopback too. */
	lim.daemon_host = "0.0.0.0";
	px = make_proxy(allow, NULL, &lim);
	if (!px)
		return;
	snprintf(req, sizeof(req), "GET http://localhost:%u/ HTTP/1.1\r\n\r\n", origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 403);
	CHECK_CONTAINS(reply, "the sharness daemon's own port");
	proxy_free(px);

	/* A public listen address is compared as bytes, not as text; a
	 * wildcard one is every public address.  (Refused before any dial.) */
	const char *listen[][2] = {{"2A01:4F8::1", "[2a01:4f8::1]"}, {"2a01:04f8:0::0001", "[2a01:4f8::1]"},
	                           {"0.0.0.0", "8.8.8.8"}, {"::", "[2a01:4f8::1]"}, {"::ffff:8.8.8.8", "8.8.8.8"}};
	for (size_t i = 0; i < sizeof(listen) / sizeof(listen[0]); i++) {
		lim.daemon_host = listen[i][0];
		snprintf(allow, sizeof(allow), "%s:%u", listen[i][1], origin_port);
		px = make_proxy(allow, NULL, &lim);
		if (!px)
			return;
		snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\n\r\n", listen[i][1], origin_port);
		CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 403);
		CHECK_CONTAINS(reply, "the sharness daemon's own port");
		proxy_free(px);
	}
}

/*
 * connect(2) to 0.0.0.0 reaches the local host on Linux, so even an entry
 * naming it exactly never gets there (the resolved-address check, with real
 * sockets: without it this would be a 200 from the loopback origin).
 */
TEST(unspecified_never_dialed)
{
	char allow[64], req[256], reply[4096];

	snprintf(allow, sizeof(allow), "0.0.0.0:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, NULL);
	if (!px)
		return;
	snprintf(req, sizeof(req), "CONNECT 0.0.0.0:%u HTTP/1.1\r\n\r\n", origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 403);
	CHECK_CONTAINS(reply, "0.0.0.0 is an unspecified address; the proxy never connects there");
	snprintf(req, sizeof(req), "GET http://0:%u/ HTTP/1.1\r\n\r\n", origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 403);
	proxy_free(px);
}

static long long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_active(struct proxy *px, unsigned want)
{
	for (int i = 0; i < 300; i++) {
		if (proxy_active(px) == want)
			return 0;
		usleep(10000);
	}
	return -1;
}

TEST(connection_limit)
{
	char allow[64], req[256], reply[4096];
	struct proxy_limits lim = {.max_conns = 2};
	int t[2];

	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, &lim);
	if (!px)
		return;
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", origin_port);
	for (int i = 0; i < 2; i++) {
		t[i] = px_client(px);
		(void)!send(t[i], req, strlen(req), MSG_NOSIGNAL);
		read_head(t[i], reply, sizeof(reply));
		CHECK_EQ_INT(status_of(reply), 200);
	}
	CHECK_EQ_INT(proxy_active(px), 2);
	int sv[2];
	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	errno = 0;
	CHECK_EQ_INT(proxy_serve_fd(px, sv[1]), -1);
	CHECK_EQ_INT(errno, EAGAIN);
	read_all(sv[0], reply, sizeof(reply));
	CHECK_EQ_INT(status_of(reply), 503);
	CHECK_CONTAINS(reply, "the run already has 2 proxy connections open");
	close(sv[0]);
	/* closing a tunnel frees its place */
	close(t[0]);
	CHECK_EQ_INT(wait_active(px, 1), 0);
	snprintf(req, sizeof(req), "GET http://localhost:%u/again HTTP/1.1\r\n\r\n", origin_port);
	CHECK_EQ_INT(asks(px, req, reply, sizeof(reply)), 200);
	/* proxy_free ends the open tunnel promptly */
	long long t0 = ms_now();
	proxy_free(px);
	CHECK(ms_now() - t0 < 2000);
	CHECK_EQ_INT(read_all(t[1], reply, sizeof(reply)), 0);
	close(t[1]);
	CHECK_CONTAINS(audit_text(), "\"status\":503");
	CHECK_CONTAINS(audit_text(), "\"reason\":\"run ended\"");
}

/* Lines of the audit log that hold both `a` and `b`. */
static unsigned audit_count(const char *a, const char *b)
{
	FILE *f = fopen(audit_path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	while (f && getline(&line, &cap, f) > 0)
		n += strstr(line, a) && strstr(line, b);
	free(line);
	if (f)
		fclose(f);
	return n;
}

/* A run that floods its proxy with connects it cannot have: the audit log
 * gets its first 1,024 lines (then 4 a second), and at the proxy's end one
 * proxy_suppressed line with how many more there were.  Before, every one
 * was written: megabytes a second, and a full audit disk refuses every
 * run of every user. */
TEST(audit_lines_of_a_flood_are_bounded)
{
	char allow[64], req[256], reply[4096], err[256];
	char *allow_v[1] = {allow};
	struct proxy_limits lim = {.max_conns = 1};
	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct profile p = test_profile(allow_v, 1);
	struct proxy *px = proxy_new(&p, &lim, audit_fd, "floodrun", err, sizeof(err));
	CHECK(px != NULL);
	if (!px)
		return;
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", origin_port);
	int t = px_client(px); /* its one place, taken */
	(void)!send(t, req, strlen(req), MSG_NOSIGNAL);
	read_head(t, reply, sizeof(reply));
	CHECK_EQ_INT(status_of(reply), 200);
	for (int i = 0; i < 2000; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			break;
		(void)proxy_serve_fd(px, sv[1]); /* 503, at once */
		close(sv[0]);
	}
	unsigned written = audit_count("\"run_id\":\"floodrun\"", "\"status\":503");
	CHECK(written >= 1000 && written <= 1040);
	proxy_free(px);
	close(t);
	for (int i = 0; i < 200 && !audit_count("floodrun", "proxy_suppressed"); i++)
		usleep(10000);
	CHECK_EQ_INT(audit_count("floodrun", "proxy_suppressed"), 1);
	char want[64];
	snprintf(want, sizeof(want), "\"refused\":%u", 2000 + 1 - (written + 1)); /* 2000 503s, 1 allowed line */
	CHECK_EQ_INT(audit_count("proxy_suppressed", want), 1);
	/* The tunnel's end came past the budget: its destination is named. */
	snprintf(want, sizeof(want), "\"hosts\":[{\"host\":\"localhost\",\"port\":%u,", origin_port);
	CHECK_EQ_INT(audit_count("proxy_suppressed", want), 1);
}

TEST(byte_limit)
{
	char allow[64], req[256];
	static char reply[200000];
	struct proxy_limits lim = {.max_bytes = 4096};

	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, &lim);
	if (!px)
		return;
	snprintf(req, sizeof(req), "GET http://localhost:%u/big HTTP/1.1\r\n\r\n", origin_port);
	asks(px, req, reply, sizeof(reply));
	size_t got = strlen(reply);
	CHECK(got > 0);
	CHECK(got < 4096);             /* the request head counts too */
	CHECK_CONTAINS(reply, "HTTP/1.0 200 OK");
	proxy_free(px);
	CHECK_CONTAINS(audit_text(), "\"reason\":\"byte limit\"");

	/* without the cap the whole body comes through */
	px = make_proxy(allow, NULL, NULL);
	if (!px)
		return;
	asks(px, req, reply, sizeof(reply));
	CHECK(strlen(reply) > 100000);
	proxy_free(px);
}

TEST(timeouts)
{
	char allow[64], req[256], reply[4096];
	struct proxy_limits lim = {.idle_timeout_ms = 300, .head_timeout_ms = 300};

	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	struct proxy *px = make_proxy(allow, NULL, &lim);
	if (!px)
		return;
	/* an idle tunnel is closed */
	int fd = px_client(px);
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", origin_port);
	(void)!send(fd, req, strlen(req), MSG_NOSIGNAL);
	read_head(fd, reply, sizeof(reply));
	CHECK_EQ_INT(status_of(reply), 200);
	long long t0 = ms_now();
	CHECK_EQ_INT(read_all(fd, reply, sizeof(reply)), 0);
	long long dt = ms_now() - t0;
	CHECK(dt >= 250 && dt < 3000);
	close(fd);
	/* a head that stops half-way gets 408 */
	fd = px_client(px);
	(void)!send(fd, "GET http://local", 16, MSG_NOSIGNAL);
	read_all(fd, reply, sizeof(reply));
	CHECK_EQ_INT(status_of(reply), 408);
	close(fd);
	/* and so does one that sends nothing (docs/proxy.md) */
	fd = px_client(px);
	read_all(fd, reply, sizeof(reply));
	CHECK_EQ_INT(status_of(reply), 408);
	close(fd);
	proxy_free(px);
	CHECK_CONTAINS(audit_text(), "\"reason\":\"idle timeout\"");
}

TEST(proxy_new_refuses)
{
	struct profile p = test_profile(NULL, 0);
	char err[256] = "";

	CHECK(proxy_new(&p, NULL, -1, "r", err, sizeof(err)) == NULL);
	CHECK_CONTAINS(err, "profile 'test' has no egress proxy allowlist");
	proxy_free(NULL);
}

/* ---- curl through a real TCP listener: HTTP and TLS (CONNECT) ---- */

struct acceptor {
	int lfd;
	struct proxy *px;
};

static void *acceptor_main(void *arg)
{
	struct acceptor *a = arg;

	for (;;) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			break; /* the listener was shut down */
		proxy_serve_fd(a->px, fd);
	}
	return NULL;
}

static pid_t spawn(char *const argv[], int out_fd)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* Run argv, return its stdout (static buffer) and exit status. */
static const char *run(char *const argv[], int *status)
{
	static char out[65536];
	int p[2];

	out[0] = '\0';
	*status = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return out;
	pid_t pid = spawn(argv, p[1]);
	close(p[1]);
	if (pid > 0) {
		size_t got = 0;
		ssize_t n;
		while (got + 1 < sizeof(out) && (n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
			got += (size_t)n;
		out[got] = '\0';
		waitpid(pid, status, 0);
	}
	close(p[0]);
	return out;
}

static int wait_listening(unsigned port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	for (int i = 0; i < 200; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (r == 0)
			return 0;
		usleep(25000);
	}
	return -1;
}

TEST(curl_http_and_tls)
{
	char dir[300], cert[320], key[320], file[320], allow[64], allow2[64];
	char proxy_url[64], url[128], accept_arg[64];
	unsigned tls_port = closed_port(), px_port = 0;
	int st;

	if (access("/usr/bin/curl", X_OK) || access("/usr/bin/openssl", X_OK)) {
		fprintf(stderr, "# curl and openssl are required (scripts/deps.sh installs them)\n");
		CHECK(0);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/tls", tmpdir);
	mkdir(dir, 0700);
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	snprintf(file, sizeof(file), "%s/hello.txt", dir);
	FILE *f = fopen(file, "w");
	fputs("hello over tls\n", f);
	fclose(f);
	char *gen[] = {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
	               "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
	               "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", NULL};
	run(gen, &st);
	CHECK_EQ_INT(st, 0);
	snprintf(accept_arg, sizeof(accept_arg), "127.0.0.1:%u", tls_port);
	char *srv[] = {"/usr/bin/openssl", "s_server", "-accept", accept_arg, "-cert", cert, "-key", key,
	               "-WWW", "-quiet", "-naccept", "100", NULL};
	/* s_server -WWW serves files relative to its working directory. */
	char cwd[300];
	if (!getcwd(cwd, sizeof(cwd)) || chdir(dir) < 0) {
		CHECK(0);
		return;
	}
	pid_t server = spawn(srv, -1);
	(void)!chdir(cwd);
	CHECK(server > 0);
	CHECK_EQ_INT(wait_listening(tls_port), 0);

	snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
	snprintf(allow2, sizeof(allow2), "localhost:%u", tls_port);
	struct proxy *px = make_proxy(allow, allow2, NULL);
	struct acceptor acc = {.lfd = listen_loopback(&px_port), .px = px};
	pthread_t at;
	CHECK(px && acc.lfd >= 0);
	if (!px || acc.lfd < 0)
		goto out;
	pthread_create(&at, NULL, acceptor_main, &acc);
	snprintf(proxy_url, sizeof(proxy_url), "http://127.0.0.1:%u", px_port);

	snprintf(url, sizeof(url), "http://localhost:%u/via-curl", origin_port);
	char *c1[] = {"/usr/bin/curl", "-sS", "--max-time", "10", "-x", proxy_url, url, NULL};
	CHECK_CONTAINS(run(c1, &st), "origin saw:\nGET /via-curl HTTP/1.1\r\n");
	CHECK_EQ_INT(st, 0);

	snprintf(url, sizeof(url), "https://localhost:%u/hello.txt", tls_port);
	char *c2[] = {"/usr/bin/curl", "-sS", "--max-time", "10", "--cacert", cert, "-x", proxy_url, url, NULL};
	CHECK_STR(run(c2, &st), "hello over tls\n");
	CHECK_EQ_INT(st, 0);

	/* https to a host that is not allowlisted: curl sees the CONNECT 403 */
	char *c3[] = {"/usr/bin/curl", "-s", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_connect}",
	              "-x", proxy_url, "https://evil.example/", NULL};
	CHECK_STR(run(c3, &st), "403");
	/* curl -p tunnels plain http through CONNECT too; port 22 is not listed */
	char *c4[] = {"/usr/bin/curl", "-s", "--max-time", "10", "-p", "-o", "/dev/null", "-w",
	              "%{http_connect}", "-x", proxy_url, "http://127.0.0.1:22/", NULL};
	CHECK_STR(run(c4, &st), "403");
	char *c5[] = {"/usr/bin/curl", "-s", "--max-time", "10", "-x", proxy_url, "http://evil.example/", NULL};
	CHECK_STR(run(c5, &st),
	          "sharness proxy: host 'evil.example' port 80 is not on the allowlist of profile 'test'\n");

	shutdown(acc.lfd, SHUT_RDWR);
	pthread_join(at, NULL);
	close(acc.lfd);
out:
	proxy_free(px);
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
	}
}

/* ---- under the front's seccomp filter ---- */

/*
 * The proxy runs in the front, under its locks (lockdown.c): an allowlist
 * that refuses netlink sockets, and Landlock.  getaddrinfo(3) must still
 * resolve (no AI_ADDRCONFIG; glibc's address sorting falls back when
 * netlink is refused) and the proxy must still serve.  In a forked child,
 * since the locks cannot be removed.
 */
TEST(under_front_seccomp)
{
	pid_t pid = fork();

	if (pid == 0) {
		char err[256], allow[64], req[256], reply[8192];
		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || lockdown_front(err, sizeof(err)) < 0)
			_exit(10);
		/* the filter is really on: netlink is refused */
		if (socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0) >= 0 || errno != EAFNOSUPPORT)
			_exit(11);
		if (getaddrinfo("localhost", NULL, &hints, &res) != 0)
			_exit(12);
		freeaddrinfo(res);
		snprintf(allow, sizeof(allow), "localhost:%u", origin_port);
		struct proxy *px = make_proxy(allow, NULL, NULL);
		if (!px)
			_exit(13);
		snprintf(req, sizeof(req), "GET http://localhost:%u/seccomp HTTP/1.1\r\n\r\n", origin_port);
		if (asks(px, req, reply, sizeof(reply)) != 200 || !strstr(reply, "GET /seccomp HTTP/1.1"))
			_exit(14);
		snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\nGET /s2 HTTP/1.1\r\n\r\n",
		         origin_port);
		if (asks(px, req, reply, sizeof(reply)) != 200 || !strstr(reply, "GET /s2 HTTP/1.1"))
			_exit(15);
		proxy_free(px);
		_exit(0);
	}
	int st = -1;
	CHECK(pid > 0);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "# child status 0x%x (exit %d)\n", st, WEXITSTATUS(st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* In a child: network and mount namespaces of its own, loopback up, and
 * /etc/resolv.conf replaced by CONF; returns a UDP socket bound to
 * 127.0.0.1:53, where the resolver's queries now go, or exits. */
static int private_resolver(const char *conf_text)
{
	char conf[] = "/tmp/sharness-resolv-XXXXXX";
	int fd = mkstemp(conf);
	if (fd < 0 || unshare(CLONE_NEWNS | CLONE_NEWNET) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(2);
	(void)!dprintf(fd, "%s", conf_text);
	close(fd);
	int bound = mount(conf, "/etc/resolv.conf", NULL, MS_BIND, NULL);
	unlink(conf);
	if (bound < 0)
		_exit(3);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {.ifr_name = "lo"};
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr)) < 0)
		_exit(4);
	struct sockaddr_in dns = {
	    .sin_family = AF_INET, .sin_port = htons(53), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(s, (struct sockaddr *)&dns, sizeof(dns)) < 0)
		_exit(5);
	return s;
}

/* A run's end must not wait for its proxy's threads: one in getaddrinfo(3)
 * cannot be woken, and proxy_free runs on the front's one loop thread, which
 * every connection and run shares.  In a child with network and mount
 * namespaces of its own, a resolver at 127.0.0.1 that never answers holds a
 * lookup for 5 s; proxy_free must come back at once (the last thread frees
 * the proxy when the lookup gives up). */
TEST(free_never_waits_for_a_lookup)
{
	pid_t pid = fork();
	if (pid == 0) {
		char req[] = "GET http://blackhole.example/ HTTP/1.1\r\n\r\n";
		int s = private_resolver("nameserver 127.0.0.1\noptions timeout:5 attempts:1\n");
		struct proxy *px = make_proxy("blackhole.example", NULL, NULL);
		int c = px ? px_client(px) : -1;
		if (c < 0 || send(c, req, strlen(req), MSG_NOSIGNAL) < 0)
			_exit(6);
		/* The query came: the connection's thread is inside getaddrinfo. */
		struct pollfd q = {.fd = s, .events = POLLIN};
		if (poll(&q, 1, 3000) != 1)
			_exit(7);
		long long t0 = ms_now();
		proxy_free(px);
		_exit(ms_now() - t0 < 1000 ? 0 : 1);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st), 0);
}

/* A DNS server for resolver_search_domains: each of NAMES has the
 * address 127.0.0.1 and no IPv6 one; every other name does not exist. */
struct dns_zone {
	int fd;
	const char *const *names;
};

static void *dns_serve(void *arg)
{
	const struct dns_zone *z = arg;
	unsigned char q[512], a[600];
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(z->fd, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
		char name[300];
		size_t at = 12, nl = 0;
		if (n < 12 + 5 || q[4] != 0 || q[5] != 1) /* one question */
			continue;
		while (at < (size_t)n && q[at] != 0 && q[at] < 64 && at + 1 + q[at] < (size_t)n &&
		       nl + q[at] + 1 < sizeof(name)) {
			for (size_t i = 0; i < q[at]; i++)
				name[nl++] = (char)(q[at + 1 + i] | 0x20);
			name[nl++] = '.';
			at += 1u + q[at];
		}
		if (at + 5 > (size_t)n || q[at] != 0)
			continue;
		name[nl ? nl - 1 : 0] = '\0';
		size_t qend = at + 5; /* the root label, type and class */
		bool known = false, want_a = q[at + 1] == 0 && q[at + 2] == 1;
		for (const char *const *k = z->names; *k; k++)
			known |= strcmp(name, *k) == 0;
		memcpy(a, q, qend);
		a[2] = (unsigned char)(0x80 | (q[2] & 0x01)); /* a reply; RD as asked */
		a[3] = known ? 0x80 : 0x83;                   /* RA; NOERROR or NXDOMAIN */
		a[6] = a[7] = a[8] = a[9] = a[10] = a[11] = 0;
		size_t len = qend;
		if (known && want_a) {
			static const unsigned char rr[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1};
			memcpy(a + len, rr, sizeof(rr));
			len += sizeof(rr);
			a[7] = 1;
		}
		(void)!sendto(z->fd, a, len, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

/* The resolver's `search` domains never extend a name with a dot: an exact
 * entry may reach private addresses, so "gone.example" on the allowlist
 * must not reach "gone.example.corp.test" when the name itself does not
 * exist (ndots:2 here, as in containers, would even try the search domain
 * first).  A name without a dot still takes them: an entry "intranet" means
 * the local one.  In a child with a resolver of its own at 127.0.0.1. */
TEST(search_domains_never_extend_a_dotted_name)
{
	pid_t pid = fork();
	if (pid == 0) {
		static const char *const names[] = {"there.example", "gone.example.corp.test", "intranet.corp.test",
		                                    NULL};
		struct dns_zone z = {
		    .fd = private_resolver("nameserver 127.0.0.1\nsearch corp.test\noptions ndots:2 timeout:2 "
		                           "attempts:1\n"),
		    .names = names};
		unsigned port = 0;
		int lfd = listen_loopback(&port);
		pthread_t t;
		if (lfd < 0 || pthread_create(&t, NULL, origin_main, (void *)(intptr_t)lfd) != 0 ||
		    pthread_create(&t, NULL, dns_serve, &z) != 0)
			_exit(6);
		char e1[64], e2[64], e3[64], req[256], reply[4096];
		snprintf(e1, sizeof(e1), "there.example:%u", port);
		snprintf(e2, sizeof(e2), "gone.example:%u", port);
		snprintf(e3, sizeof(e3), "intranet:%u", port);
		char *allow[] = {e1, e2, e3};
		struct profile p = test_profile(allow, 3);
		char err[256] = "";
		struct proxy *px = proxy_new(&p, NULL, audit_fd, "testrun", err, sizeof(err));
		if (!px)
			_exit(7);
		snprintf(req, sizeof(req), "GET http://there.example:%u/ HTTP/1.1\r\n\r\n", port);
		if (asks(px, req, reply, sizeof(reply)) != 200) /* the resolver answers */
			_exit(8);
		snprintf(req, sizeof(req), "GET http://intranet:%u/ HTTP/1.1\r\n\r\n", port);
		if (asks(px, req, reply, sizeof(reply)) != 200)
			_exit(9);
		snprintf(req, sizeof(req), "GET http://gone.example:%u/ HTTP/1.1\r\n\r\n", port);
		if (asks(px, req, reply, sizeof(reply)) != 502 ||
		    !strstr(reply, "could not resolve host 'gone.example'"))
			_exit(10);
		snprintf(req, sizeof(req), "CONNECT gone.example:%u HTTP/1.1\r\n\r\n", port);
		if (asks(px, req, reply, sizeof(reply)) != 502)
			_exit(11);
		proxy_free(px);
		_exit(0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st), 0);
}

int main(void)
{
	pthread_t ot;
	int lfd;

	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(audit_path, sizeof(audit_path), "%s/audit.log", tmpdir);
	audit_fd = open(audit_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	memset(big, 'b', sizeof(big));
	lfd = listen_loopback(&origin_port);
	if (audit_fd < 0 || lfd < 0 || pthread_create(&ot, NULL, origin_main, (void *)(intptr_t)lfd) != 0)
		return 1;

	RUN(canon_table);
	RUN(authority_table);
	RUN(allow_match);
	RUN(addr_classify);
	RUN(addr_permitted);
	RUN(plain_http_allowed);
	RUN(bytes_after_the_body_are_drained);
	RUN(connect_allowed);
	RUN(denials);
	RUN(exact_address_entry);
	RUN(daemon_port_and_dial_failure);
	RUN(unspecified_never_dialed);
	RUN(connection_limit);
	RUN(audit_lines_of_a_flood_are_bounded);
	RUN(byte_limit);
	RUN(timeouts);
	RUN(proxy_new_refuses);
	RUN(curl_http_and_tls);
	RUN(under_front_seccomp);
	RUN(free_never_waits_for_a_lookup);
	RUN(search_domains_never_extend_a_dotted_name);

	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	(void)!system(cmd);
	return harness_done();
}
