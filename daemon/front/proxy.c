/*
 * proxy.c - the egress proxy of one run (see proxy.h).
 *
 * Trust: every byte read from a client fd comes from the sandboxed command
 * and is hostile; the decision functions live in proxy_host.c, the
 * request's parsing and framing in proxy_request.c, both pure.  This file
 * is the I/O around them: read a bounded request head, decide,
 * dial the checked sockaddrs, relay with a byte cap and an idle timeout.
 *
 * Shape: one thread per client connection (bounded per run), each owning
 * its two sockets, detached.  A pipe, readable once proxy_free() starts, is
 * in every poll(2), so shutdown never races with an fd being closed and
 * reused.  proxy_free() never waits for a thread (one may sit in
 * getaddrinfo(3), which nothing interrupts, and the caller is the front's
 * one loop thread): the last thread to end frees the proxy.
 */
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <resolv.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "log.h"
#include "profile.h"
#include "proxy_host.h"

#define ADDRS_MAX 8           /* resolved addresses checked and tried */
#define RELAY_BUF 16384       /* per direction */
#define REPLY_MS 2000         /* to write an error reply and linger */
#define THREAD_STACK (512 * 1024) /* getaddrinfo's NSS modules need some room */
#define RUN_ID_MAX 64
/* A run's proxy lines in the audit log: the first AUDIT_BURST, then
 * AUDIT_PER_S a second; the rest are counted, and one proxy_suppressed
 * line says how many and what they carried.  Without it one run's flood of
 * refused connects wrote megabytes a second, and an audit log that cannot
 * be written refuses every run of every user. */
#define AUDIT_BURST 1024
#define AUDIT_PER_S 4
#define QUIET_HOSTS_MAX 32 /* allowed destinations the summary names, each with its counts */

enum slot_state { SLOT_FREE, SLOT_RUNNING };

struct slot {
	enum slot_state state;
	pthread_t tid;
	int fd;
	struct proxy *px;
};

struct proxy {
	pthread_mutex_t mu;
	char profile[PROFILE_NAME_MAX];
	char *allow[PROFILE_LIST_MAX];
	size_t n_allow;
	struct proxy_limits lim;
	int daemon_family;                /* the daemon's listen address: AF_INET (v4-mapped too), AF_INET6, or 0 */
	unsigned char daemon_addr[16];    /* its bytes (all zero: every address, a wildcard) */
	int audit_fd;
	char run_id[RUN_ID_MAX];
	int wake[2];     /* [0] becomes readable when proxy_free() starts */
	bool closing;
	unsigned running; /* connection threads alive: the last one frees a closing proxy */
	struct slot *slots;
	char denied[PROXY_DENIALS_MAX][PROXY_DENIAL_DETAIL]; /* the first distinct refusals (403), for the reply */
	size_t n_denied;
	unsigned audit_tokens;        /* lines it may write now (AUDIT_BURST, AUDIT_PER_S) */
	long long audit_refilled_ms;
	struct {                      /* the lines it did not write */
		unsigned long lines, allowed, refused, ended;
		uint64_t bytes_up, bytes_down;
		struct {              /* where the allowed ones went: no destination is hidden */
			char host[PROXY_HOST_MAX + 1];
			unsigned port;
			unsigned long connections;
			uint64_t bytes_up, bytes_down;
		} hosts[QUIET_HOSTS_MAX];
		size_t n_hosts;
		unsigned long hosts_more; /* allowed lines past the table */
	} quiet;
};

/* One connection's state, owned by its thread. */
struct conn {
	struct proxy *px;
	int cfd, ufd;
	char head[PROXY_HEAD_MAX];
	size_t got, head_len;     /* bytes in head[]; length of the head incl. CRLFCRLF */
	struct proxy_request rq;  /* the request line, parsed (its path points into head[]) */
	enum proxy_match match;
	struct sockaddr_storage addrs[ADDRS_MAX];
	socklen_t addr_lens[ADDRS_MAX];
	size_t n_addrs;
	char address[INET6_ADDRSTRLEN]; /* the one dialed */
	uint64_t bytes_up, bytes_down;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for `events` on fd until `deadline` (monotonic ms).  1 = ready,
 * 0 = timed out, -1 = the proxy is closing or poll failed. */
static int wait_fd(const struct proxy *px, int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = px->wake[0], .events = POLLIN}};
		long long left = deadline - now_ms();

		if (left <= 0)
			return 0;
		int r = poll(p, 2, left > 60000 ? 60000 : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || p[1].revents)
			return -1;
		if (r > 0 && p[0].revents)
			return 1;
	}
}

static int send_all(const struct proxy *px, int fd, const void *buf, size_t len, long long deadline)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (wait_fd(px, fd, POLLOUT, deadline) <= 0)
			return -1;
	}
	return 0;
}


/* A line the budget kept out, counted (under px->mu); an allowed
 * connection's (its decision, status 200, or its end, 0) under its host. */
static void audit_count_quiet(struct proxy *px, const struct proxy_request *rq, int status, uint64_t up,
                              uint64_t down)
{
	px->quiet.lines++;
	px->quiet.allowed += status == 200;
	px->quiet.refused += status >= 400;
	px->quiet.ended += status == 0;
	px->quiet.bytes_up += up;
	px->quiet.bytes_down += down;
	if (status != 200 && status != 0)
		return;
	size_t i = 0;
	while (i < px->quiet.n_hosts && (px->quiet.hosts[i].port != rq->port || strcmp(px->quiet.hosts[i].host, rq->host_text)))
		i++;
	if (i == px->quiet.n_hosts) {
		if (i == QUIET_HOSTS_MAX) {
			px->quiet.hosts_more++;
			return;
		}
		snprintf(px->quiet.hosts[i].host, sizeof(px->quiet.hosts[i].host), "%s", rq->host_text);
		px->quiet.hosts[i].port = rq->port;
		px->quiet.n_hosts++;
	}
	px->quiet.hosts[i].connections += status == 200;
	px->quiet.hosts[i].bytes_up += up;
	px->quiet.hosts[i].bytes_down += down;
}

/* Whether the run's budget has a line left; if not, the line is counted
 * (status: the decision's, or 0 for a connection's end). */
static bool audit_budget(struct proxy *px, const struct proxy_request *rq, int status, uint64_t up,
                         uint64_t down)
{
	long long now = now_ms();
	pthread_mutex_lock(&px->mu);
	long long due = (now - px->audit_refilled_ms) * AUDIT_PER_S / 1000;
	if (due > 0) {
		if (px->audit_tokens + due >= AUDIT_BURST) {
			px->audit_tokens = AUDIT_BURST;
			px->audit_refilled_ms = now;
		} else {
			px->audit_tokens += (unsigned)due;
			px->audit_refilled_ms += due * 1000 / AUDIT_PER_S; /* the fraction stays due */
		}
	}
	bool ok = px->audit_tokens > 0;
	if (ok)
		px->audit_tokens--;
	else
		audit_count_quiet(px, rq, status, up, down);
	pthread_mutex_unlock(&px->mu);
	return ok;
}

/* At the proxy's end (every connection thread gone): what the budget kept
 * out of the audit log. */
static void audit_quiet(const struct proxy *px)
{
	cJSON *line;
	if (px->audit_fd < 0 || !px->quiet.lines || !(line = cJSON_CreateObject()))
		return;
	cJSON_AddStringToObject(line, "event", "proxy_suppressed");
	cJSON_AddStringToObject(line, "run_id", px->run_id);
	cJSON_AddStringToObject(line, "profile", px->profile);
	cJSON_AddNumberToObject(line, "lines", (double)px->quiet.lines);
	cJSON_AddNumberToObject(line, "allowed", (double)px->quiet.allowed);
	cJSON_AddNumberToObject(line, "refused", (double)px->quiet.refused);
	cJSON_AddNumberToObject(line, "ended", (double)px->quiet.ended);
	cJSON_AddNumberToObject(line, "bytes_up", (double)px->quiet.bytes_up);
	cJSON_AddNumberToObject(line, "bytes_down", (double)px->quiet.bytes_down);
	cJSON *hosts = cJSON_AddArrayToObject(line, "hosts");
	for (size_t i = 0; hosts && i < px->quiet.n_hosts; i++) {
		cJSON *h = cJSON_CreateObject();
		cJSON_AddStringToObject(h, "host", px->quiet.hosts[i].host);
		cJSON_AddNumberToObject(h, "port", px->quiet.hosts[i].port);
		cJSON_AddNumberToObject(h, "connections", (double)px->quiet.hosts[i].connections);
		cJSON_AddNumberToObject(h, "bytes_up", (double)px->quiet.hosts[i].bytes_up);
		cJSON_AddNumberToObject(h, "bytes_down", (double)px->quiet.hosts[i].bytes_down);
		cJSON_AddItemToArray(hosts, h);
	}
	if (px->quiet.hosts_more)
		cJSON_AddNumberToObject(line, "hosts_more", (double)px->quiet.hosts_more);
	if (audit_write(px->audit_fd, line) < 0)
		log_warn("the audit log could not be written (%s): a proxy summary is lost", strerror(errno));
	cJSON_Delete(line);
}

static void audit_request(struct proxy *px, const struct proxy_request *rq, const char *address,
                          const char *decision, int status, const char *reason)
{
	cJSON *line;

	if (px->audit_fd < 0 || !audit_budget(px, rq, status, 0, 0) || !(line = cJSON_CreateObject()))
		return;
	cJSON_AddStringToObject(line, "event", "proxy");
	cJSON_AddStringToObject(line, "run_id", px->run_id);
	cJSON_AddStringToObject(line, "profile", px->profile);
	cJSON_AddStringToObject(line, "method", rq->method);
	cJSON_AddStringToObject(line, "host", rq->host_text);
	cJSON_AddNumberToObject(line, "port", rq->port);
	cJSON_AddStringToObject(line, "decision", decision);
	cJSON_AddNumberToObject(line, "status", status);
	cJSON_AddStringToObject(line, "reason", reason);
	if (address[0])
		cJSON_AddStringToObject(line, "address", address);
	if (audit_write(px->audit_fd, line) < 0)
		log_warn("the audit log could not be written (%s): a proxy decision is lost", strerror(errno));
	cJSON_Delete(line);
}

static void audit_decision(const struct conn *c, const char *decision, int status, const char *reason)
{
	audit_request(c->px, &c->rq, c->address, decision, status, reason);
}

static void audit_end(const struct conn *c, const char *reason)
{
	struct proxy *px = c->px;
	cJSON *line;

	if (px->audit_fd < 0 || !audit_budget(px, &c->rq, 0, c->bytes_up, c->bytes_down) ||
	    !(line = cJSON_CreateObject()))
		return;
	cJSON_AddStringToObject(line, "event", "proxy_end");
	cJSON_AddStringToObject(line, "run_id", px->run_id);
	cJSON_AddStringToObject(line, "host", c->rq.host_text);
	cJSON_AddNumberToObject(line, "port", c->rq.port);
	cJSON_AddNumberToObject(line, "bytes_up", (double)c->bytes_up);
	cJSON_AddNumberToObject(line, "bytes_down", (double)c->bytes_down);
	cJSON_AddStringToObject(line, "reason", reason);
	if (audit_write(px->audit_fd, line) < 0)
		log_warn("the audit log could not be written (%s): a proxy decision is lost", strerror(errno));
	cJSON_Delete(line);
}

static const char *status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 408:
		return "Request Timeout";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	}
	return "Error";
}

/* The whole reply in one buffer: status line, headers, one-line body. */
static int format_reply(char *buf, size_t len, int status, const char *reason)
{
	char body[768];
	int b = snprintf(body, sizeof(body), "sharness proxy: %s\n", reason);

	if (b < 0 || (size_t)b >= sizeof(body))
		b = (int)sizeof(body) - 1;
	return snprintf(buf, len,
	                "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	                "Content-Length: %d\r\nConnection: close\r\nX-Sharness-Proxy: %s\r\n\r\n%.*s",
	                status, status_text(status), b, status == 403 ? "denied" : "error", b, body);
}

static void note_denial(struct proxy *px, const char *reason)
{
	pthread_mutex_lock(&px->mu);
	bool seen = false;
	for (size_t i = 0; i < px->n_denied; i++)
		seen = seen || strncmp(px->denied[i], reason, sizeof(px->denied[i]) - 1) == 0;
	if (!seen && px->n_denied < PROXY_DENIALS_MAX) {
		size_t n = strnlen(reason, sizeof(px->denied[0]) - 1);
		memcpy(px->denied[px->n_denied], reason, n);
		px->denied[px->n_denied][n] = '\0';
		px->n_denied++;
	}
	pthread_mutex_unlock(&px->mu);
}

size_t proxy_denials(struct proxy *px, char (*out)[PROXY_DENIAL_DETAIL], size_t max)
{
	if (!px)
		return 0;
	pthread_mutex_lock(&px->mu);
	size_t n = px->n_denied < max ? px->n_denied : max;
	memcpy(out, px->denied, n * sizeof(px->denied[0]));
	pthread_mutex_unlock(&px->mu);
	return n;
}

/*
 * Answer an error, log it, and close gracefully: shut our side, then
 * discard what the client still sends for a moment, because closing with
 * unread data makes the kernel send RST, which can destroy the reply
 * before the client reads it.
 */
__attribute__((format(printf, 4, 5)))
static void refuse(struct conn *c, int status, const char *decision, const char *fmt, ...)
{
	char reason[PROXY_DENIAL_DETAIL], reply[1024], sink[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	audit_decision(c, decision, status, reason);
	if (status == 403) /* the policy's refusals, not a client's malformed request */
		note_denial(c->px, reason);
	int n = format_reply(reply, sizeof(reply), status, reason);
	long long deadline = now_ms() + REPLY_MS;
	if (n > 0 && send_all(c->px, c->cfd, reply, (size_t)n < sizeof(reply) ? (size_t)n : sizeof(reply) - 1,
	                      deadline) == 0) {
		shutdown(c->cfd, SHUT_WR);
		for (size_t drained = 0; drained < 65536;) {
			if (wait_fd(c->px, c->cfd, POLLIN, deadline) <= 0)
				break;
			ssize_t r = recv(c->cfd, sink, sizeof(sink), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				break;
			if (r > 0)
				drained += (size_t)r;
		}
	}
}

/* ---- the request head ---- */

/* Read until CRLFCRLF.  0 = have a head, 1 = refused or gone (already answered). */
static int read_head(struct conn *c)
{
	const struct proxy *px = c->px;
	long long deadline = now_ms() + px->lim.head_timeout_ms;
	size_t from = 0; /* bytes before this cannot start the terminator */

	for (;;) {
		const char *end = memmem(c->head + from, c->got - from, "\r\n\r\n", 4);

		if (end) {
			c->head_len = (size_t)(end - c->head) + 4;
			return 0;
		}
		if (c->got == sizeof(c->head)) {
			refuse(c, 400, "deny", "the request head is longer than %d bytes", PROXY_HEAD_MAX);
			return 1;
		}
		int w = wait_fd(px, c->cfd, POLLIN, deadline);
		if (w == 0) { /* also when nothing came: the place it held is on record */
			refuse(c, 408, "deny", "the request head did not arrive within %u ms", px->lim.head_timeout_ms);
			return 1;
		}
		if (w < 0)
			return 1;
		ssize_t n = recv(c->cfd, c->head + c->got, sizeof(c->head) - c->got, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 1; /* the client left before asking for anything */
		if (n > 0) {
			from = c->got > 3 ? c->got - 3 : 0;
			c->got += (size_t)n;
		}
	}
}


/* Parse the request line and decide CONNECT / absolute-form.  0 = ok. */
static int parse_request(struct conn *c)
{
	char why[400];
	if (proxy_parse_head(c->head, c->head_len, &c->rq, why, sizeof(why)) == 0)
		return 0;
	refuse(c, 400, "deny", "%s", why);
	return -1;
}

/* ---- the decision ---- */

static void addr_text(const struct sockaddr *sa, char *out, size_t len)
{
	const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
	                                         : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (!inet_ntop(sa->sa_family, a, out, (socklen_t)len))
		snprintf(out, len, "?");
}

/* Fill c->addrs: the literal itself, or one getaddrinfo(3).  0 = ok. */
static int resolve(struct conn *c)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	                         .ai_protocol = IPPROTO_TCP}, *res, *ai;
	int r;

	c->n_addrs = 0;
	if (c->rq.host.kind == PROXY_HOST_IPV4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&c->addrs[0];

		memset(s, 0, sizeof(*s));
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, c->rq.host.addr, 4);
		s->sin_port = htons((uint16_t)c->rq.port);
		c->addr_lens[0] = sizeof(*s);
		c->n_addrs = 1;
		return 0;
	}
	if (c->rq.host.kind == PROXY_HOST_IPV6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&c->addrs[0];

		memset(s, 0, sizeof(*s));
		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, c->rq.host.addr, 16);
		s->sin6_port = htons((uint16_t)c->rq.port);
		c->addr_lens[0] = sizeof(*s);
		c->n_addrs = 1;
		return 0;
	}
	/* A name with a dot is looked up as written, never with the resolver's
	 * `search` domains appended (glibc appends them when the name does not
	 * exist, or first when it has fewer dots than `ndots`): an exact entry
	 * may reach private addresses, and "pkg.example" must not become
	 * "pkg.example.corp.lan".  A name without a dot still takes them
	 * (RES_DEFNAMES): an entry "intranet" means the local one.  (A trailing
	 * dot would stop the search too, but /etc/hosts then no longer
	 * matches.)  _res is this thread's own (res_init(3)); glibc keeps
	 * options changed after res_init and does not reload over them. */
	if (res_init() != 0) {
		refuse(c, 502, "error", "could not read the resolver's configuration for host '%s'",
		       c->rq.host.text);
		return -1;
	}
	_res.options &= ~(unsigned long)RES_DNSRCH;
	/* No AI_ADDRCONFIG: it asks the kernel over netlink, which the
	 * front's seccomp filter refuses (and it would hide nothing we need). */
	r = getaddrinfo(c->rq.host.text, NULL, &hints, &res);
	if (r != 0) {
		refuse(c, 502, "error", "could not resolve host '%s': %s", c->rq.host.text,
		       r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -1;
	}
	for (ai = res; ai && c->n_addrs < ADDRS_MAX; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(c->addrs[0]))
			continue;
		memcpy(&c->addrs[c->n_addrs], ai->ai_addr, ai->ai_addrlen);
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)&c->addrs[c->n_addrs])->sin_port = htons((uint16_t)c->rq.port);
		else
			((struct sockaddr_in6 *)&c->addrs[c->n_addrs])->sin6_port = htons((uint16_t)c->rq.port);
		c->addr_lens[c->n_addrs++] = ai->ai_addrlen;
	}
	freeaddrinfo(res);
	if (c->n_addrs == 0) {
		refuse(c, 502, "error", "host '%s' has no IPv4 or IPv6 address", c->rq.host.text);
		return -1;
	}
	return 0;
}

/* The bytes of an address as the daemon's is kept: IPv4 for a v4-mapped
 * or NAT64 IPv6 one (it reaches that IPv4), else as it is. */
static int addr_bytes(int family, const unsigned char *a, unsigned char out[16])
{
	static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff}, nat64[12] = {0, 0x64, 0xff, 0x9b};
	if (family == AF_INET6 && (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12))) {
		memcpy(out, a + 12, 4);
		return AF_INET;
	}
	memcpy(out, a, family == AF_INET ? 4 : 16);
	return family;
}

/* The daemon's own port, on loopback or a private address (any of which
 * may be the daemon's), or on its listen address compared as bytes, not
 * text ("2A01:4F8::1" is "2a01:4f8::1"); a wildcard listener is every
 * address. */
static bool is_daemon(const struct proxy *px, const struct sockaddr *sa, unsigned port,
                      enum proxy_addr_class cls)
{
	unsigned char b[16];
	static const unsigned char any[16];

	if (!px->lim.daemon_port || port != px->lim.daemon_port)
		return false;
	if (cls != PROXY_ADDR_PUBLIC)
		return true;
	if (!px->daemon_family)
		return false;
	int fam = sa->sa_family == AF_INET
	                  ? addr_bytes(AF_INET, (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr, b)
	                  : addr_bytes(AF_INET6, ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr, b);
	size_t n = px->daemon_family == AF_INET ? 4 : 16;
	return !memcmp(px->daemon_addr, any, n) || (fam == px->daemon_family && !memcmp(b, px->daemon_addr, n));
}

/*
 * Every resolved address must pass, not just the first: a name that
 * answers both a public and a private address is a rebinding attempt, and
 * the dial below tries them in order.
 */
static int check_addrs(struct conn *c)
{
	for (size_t i = 0; i < c->n_addrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		enum proxy_addr_class cls = proxy_addr_classify(sa);
		char text[INET6_ADDRSTRLEN];

		addr_text(sa, text, sizeof(text));
		if (is_daemon(c->px, sa, c->rq.port, cls)) {
			refuse(c, 403, "deny", "'%s' port %u is the sharness daemon's own port", c->rq.host.text,
			       c->rq.port);
			return -1;
		}
		if (proxy_addr_permitted(cls, c->match))
			continue;
		const char *who =
			cls == PROXY_ADDR_LINK_LOCAL || cls == PROXY_ADDR_METADATA
				? "only an allowlist entry naming that exact address may reach it"
			: cls == PROXY_ADDR_LOOPBACK || cls == PROXY_ADDR_PRIVATE || cls == PROXY_ADDR_CGNAT
				? "only an exact allowlist entry (not a wildcard) may reach it"
				: "the proxy never connects there";
		if (c->rq.host.kind == PROXY_HOST_NAME)
			refuse(c, 403, "deny", "host '%s' resolves to %s, %s %s address; %s", c->rq.host.text, text,
			       strchr("aeiou", proxy_addr_class_name(cls)[0]) ? "an" : "a",
			       proxy_addr_class_name(cls), who);
		else
			refuse(c, 403, "deny", "%s is %s %s address; %s", text,
			       strchr("aeiou", proxy_addr_class_name(cls)[0]) ? "an" : "a",
			       proxy_addr_class_name(cls), who);
		return -1;
	}
	return 0;
}

/* Connect to the checked sockaddrs in order, never to the name. */
static int dial(struct conn *c)
{
	const struct proxy *px = c->px;
	long long deadline = now_ms() + px->lim.connect_timeout_ms;
	int last = ECONNREFUSED;

	for (size_t i = 0; i < c->n_addrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0) {
			last = errno;
			continue;
		}
		if (connect(fd, sa, c->addr_lens[i]) < 0 && errno != EINPROGRESS) {
			last = errno;
			close(fd);
			continue;
		}
		int w = wait_fd(px, fd, POLLOUT, deadline), soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (w > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0) {
			c->ufd = fd;
			addr_text(sa, c->address, sizeof(c->address));
			return 0;
		}
		last = w == 0 ? ETIMEDOUT : w < 0 ? ECANCELED : soerr ? soerr : errno;
		close(fd);
		if (w <= 0)
			break;
	}
	refuse(c, 502, "error", "could not connect to host '%s' port %u: %s", c->rq.host.text, c->rq.port,
	       strerror(last));
	return -1;
}

/* ---- forwarding ---- */


struct pipebuf {
	char b[RELAY_BUF];
	size_t off, len;
};

/* Relay until the origin is done, the client is gone, idle, byte cap, or
 * shutdown; only the client's bytes that are `body`'s go on: the rest is
 * read and dropped, so that the client's hang-up is seen and its unread
 * bytes make no reset that would cut its reply.  Returns the reason for
 * the audit line. */
static const char *relay(struct conn *c, uint64_t budget, struct proxy_body *body)
{
	const struct proxy *px = c->px;
	struct pipebuf *up = malloc(sizeof(*up)), *down = malloc(sizeof(*down));
	bool cli_eof = false, up_eof = false, shut_up = false;
	const char *why = "error";

	if (!up || !down)
		goto out;
	up->off = up->len = down->off = down->len = 0;
	for (;;) {
		if (cli_eof && up->len == 0 && !shut_up) {
			shutdown(c->ufd, SHUT_WR);
			shut_up = true;
		}
		if (up_eof && down->len == 0) {
			why = "closed by the origin";
			break;
		}
		if (budget == 0 && up->len == 0 && down->len == 0) {
			why = "byte limit";
			break;
		}
		struct pollfd p[3] = {{.fd = c->cfd}, {.fd = c->ufd}, {.fd = px->wake[0], .events = POLLIN}};
		if (!cli_eof && up->len == 0 && budget)
			p[0].events |= POLLIN;
		if (down->len)
			p[0].events |= POLLOUT;
		if (!up_eof && down->len == 0 && budget)
			p[1].events |= POLLIN;
		if (up->len)
			p[1].events |= POLLOUT;
		/* A socket we want nothing from stays out of the set, so a
		 * hang-up on it cannot spin the loop. */
		if (!p[0].events)
			p[0].fd = -1;
		if (!p[1].events)
			p[1].fd = -1;
		int r = poll(p, 3, (int)px->lim.idle_timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			why = "idle timeout";
			break;
		}
		if (p[2].revents) {
			why = "run ended";
			break;
		}
		if (p[0].revents & POLLIN || (p[0].revents & (POLLHUP | POLLERR) && p[0].events & POLLIN)) {
			size_t want = sizeof(up->b) < budget ? sizeof(up->b) : (size_t)budget;
			ssize_t n = recv(c->cfd, up->b, want, MSG_DONTWAIT);
			if (n > 0) {
				budget -= (uint64_t)n;
				n = (ssize_t)proxy_body_take(body, up->b, (size_t)n); /* past the body: dropped */
				if (body->step == PROXY_BODY_BAD) {
					why = "malformed chunked body";
					break;
				}
				up->off = 0;
				up->len = (size_t)n;
				c->bytes_up += (uint64_t)n;
			} else if (n == 0) {
				cli_eof = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				why = "client error";
				break;
			}
		}
		if (p[1].revents & POLLIN || (p[1].revents & (POLLHUP | POLLERR) && p[1].events & POLLIN)) {
			size_t want = sizeof(down->b) < budget ? sizeof(down->b) : (size_t)budget;
			ssize_t n = recv(c->ufd, down->b, want, MSG_DONTWAIT);
			if (n > 0) {
				down->off = 0;
				down->len = (size_t)n;
				budget -= (uint64_t)n;
				c->bytes_down += (uint64_t)n;
			} else if (n == 0) {
				up_eof = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				why = "origin error";
				break;
			}
		}
		if (up->len && p[1].revents & (POLLOUT | POLLERR | POLLHUP)) {
			ssize_t n = send(c->ufd, up->b + up->off, up->len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0) {
				up->off += (size_t)n;
				up->len -= (size_t)n;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				why = "origin error";
				break;
			}
		}
		if (down->len && p[0].revents & (POLLOUT | POLLERR | POLLHUP)) {
			ssize_t n = send(c->cfd, down->b + down->off, down->len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0) {
				down->off += (size_t)n;
				down->len -= (size_t)n;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				why = "client closed";
				break;
			}
		}
	}
out:
	free(up);
	free(down);
	return why;
}

static void serve(struct conn *c)
{
	struct proxy *px = c->px;
	char *head = NULL, reason[400];
	size_t idx = 0, hl = 0;

	if (read_head(c) != 0 || parse_request(c) != 0)
		return;
	if (!c->rq.connect && !(head = proxy_rewrite_head(c->head, c->head_len, &c->rq, &hl))) {
		if (errno == EINVAL)
			refuse(c, 400, "deny", "the request's Connection headers list more than %d names",
			       PROXY_CONNECTION_NAMES_MAX);
		else
			refuse(c, 502, "error", "the proxy is out of memory");
		return;
	}
	/* A tunnel carries what the client sends; a plain request its body
	 * and nothing after it (a second request would reach the origin with
	 * a Host and headers the proxy never saw).  Chunks already here whose
	 * framing is broken are a 400, before any lookup or connection. */
	const char *extra = c->head + c->head_len;
	struct proxy_body body = {.chunked = c->rq.chunked,
	                    .left = c->rq.connect ? UINT64_MAX : c->rq.body_len,
	                    .max = px->lim.max_bytes};
	size_t extra_len = proxy_body_take(&body, extra, c->got - c->head_len);
	if (body.step == PROXY_BODY_BAD) {
		refuse(c, 400, "deny", "the request's chunked body is malformed");
		goto out;
	}
	c->match = proxy_allow_match(px->allow, px->n_allow, &c->rq.host, c->rq.connect, c->rq.port, &idx);
	if (c->match == PROXY_MATCH_NONE) {
		refuse(c, 403, "deny", "host '%s' port %u is not on the allowlist of profile '%s'",
		       c->rq.host.text, c->rq.port, px->profile);
		goto out;
	}
	if (resolve(c) != 0 || check_addrs(c) != 0 || dial(c) != 0)
		goto out;

	uint64_t budget = px->lim.max_bytes;
	long long deadline = now_ms() + px->lim.idle_timeout_ms;

	snprintf(reason, sizeof(reason), "allowlist entry '%s'", px->allow[idx]);
	audit_decision(c, "allow", 200, reason);
	if (c->rq.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		if (send_all(px, c->cfd, ok, sizeof(ok) - 1, deadline) < 0) {
			audit_end(c, "client closed");
			goto out;
		}
	} else {
		/* The rewritten head counts against the byte cap too. */
		if (hl > budget || send_all(px, c->ufd, head, hl, deadline) < 0) {
			audit_end(c, hl > budget ? "byte limit" : "origin error");
			goto out;
		}
		budget -= hl;
		c->bytes_up += hl;
	}
	/* Bytes the client sent after the head (a TLS ClientHello, a body). */
	if (extra_len) {
		if (extra_len > budget || send_all(px, c->ufd, extra, extra_len, deadline) < 0) {
			audit_end(c, extra_len > budget ? "byte limit" : "origin error");
			goto out;
		}
		budget -= extra_len;
		c->bytes_up += extra_len;
	}
	audit_end(c, relay(c, budget, &body));
out:
	free(head);
}

/* Frees a proxy no thread uses any more. */
static void destroy(struct proxy *px)
{
	audit_quiet(px);
	close(px->wake[0]);
	close(px->wake[1]);
	for (size_t i = 0; i < px->n_allow; i++)
		free(px->allow[i]);
	free(px->slots);
	pthread_mutex_destroy(&px->mu);
	free(px);
}

static void *conn_main(void *arg)
{
	struct slot *s = arg;
	struct proxy *px = s->px;
	struct conn *c = calloc(1, sizeof(*c));

	if (c) {
		c->px = px;
		c->cfd = s->fd;
		c->ufd = -1;
		serve(c);
		if (c->ufd >= 0)
			close(c->ufd);
		free(c);
	}
	close(s->fd);
	pthread_mutex_lock(&px->mu);
	s->state = SLOT_FREE;
	s->fd = -1;
	bool last = --px->running == 0 && px->closing;
	pthread_mutex_unlock(&px->mu);
	if (last)
		destroy(px);
	return NULL;
}

/* ---- lifecycle ---- */

struct proxy *proxy_new(const struct profile *p, const struct proxy_limits *lim, int audit_fd,
                        const char *run_id, char *err, size_t errlen)
{
	struct proxy *px;

	if (p->network != PROFILE_NETWORK_PROXY || p->n_proxy_allow == 0 ||
	    p->n_proxy_allow > PROFILE_LIST_MAX) {
		snprintf(err, errlen, "profile '%s' has no egress proxy allowlist", p->name);
		errno = EINVAL;
		return NULL;
	}
	px = calloc(1, sizeof(*px));
	if (!px)
		goto err_nomem;
	px->wake[0] = px->wake[1] = -1;
	px->audit_fd = audit_fd;
	snprintf(px->profile, sizeof(px->profile), "%s", p->name);
	snprintf(px->run_id, sizeof(px->run_id), "%s", run_id ? run_id : "");
	if (lim)
		px->lim = *lim;
	if (!px->lim.max_conns)
		px->lim.max_conns = PROXY_DEFAULT_CONNS;
	if (!px->lim.max_bytes)
		px->lim.max_bytes = PROXY_DEFAULT_BYTES;
	if (!px->lim.idle_timeout_ms)
		px->lim.idle_timeout_ms = PROXY_DEFAULT_IDLE_MS;
	if (!px->lim.head_timeout_ms)
		px->lim.head_timeout_ms = PROXY_DEFAULT_HEAD_MS;
	if (!px->lim.connect_timeout_ms)
		px->lim.connect_timeout_ms = PROXY_DEFAULT_CONNECT_MS;
	if (px->lim.idle_timeout_ms > 86400000u)
		px->lim.idle_timeout_ms = 86400000u; /* poll(2) takes an int */
	unsigned char a[16];
	if (lim && lim->daemon_host && inet_pton(AF_INET, lim->daemon_host, a) == 1)
		px->daemon_family = addr_bytes(AF_INET, a, px->daemon_addr);
	else if (lim && lim->daemon_host && inet_pton(AF_INET6, lim->daemon_host, a) == 1)
		px->daemon_family = addr_bytes(AF_INET6, a, px->daemon_addr);
	px->lim.daemon_host = NULL; /* the bytes above are what is used */
	for (size_t i = 0; i < p->n_proxy_allow; i++) {
		if (!(px->allow[i] = strdup(p->proxy_allow[i])))
			goto err_free;
		px->n_allow++;
	}
	px->slots = calloc(px->lim.max_conns, sizeof(*px->slots));
	if (!px->slots)
		goto err_free;
	px->audit_tokens = AUDIT_BURST;
	px->audit_refilled_ms = now_ms();
	if (pipe2(px->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "the proxy of run %s could not create its wake-up pipe: %s",
		         px->run_id, strerror(errno));
		goto err_free_quiet;
	}
	if (pthread_mutex_init(&px->mu, NULL) != 0)
		goto err_free;
	return px;
err_free:
	snprintf(err, errlen, "out of memory creating the proxy of run %s", run_id ? run_id : "");
err_free_quiet:
	for (size_t i = 0; i < px->n_allow; i++)
		free(px->allow[i]);
	free(px->slots);
	if (px->wake[0] >= 0) {
		close(px->wake[0]);
		close(px->wake[1]);
	}
	free(px);
	errno = ENOMEM;
	return NULL;
err_nomem:
	snprintf(err, errlen, "out of memory creating a proxy");
	errno = ENOMEM;
	return NULL;
}

int proxy_serve_fd(struct proxy *px, int client_fd)
{
	struct slot *free_slot = NULL;
	pthread_attr_t attr;
	sigset_t all, old;
	int e;

	pthread_mutex_lock(&px->mu);
	if (px->closing) {
		pthread_mutex_unlock(&px->mu);
		close(client_fd);
		errno = ESHUTDOWN;
		return -1;
	}
	for (unsigned i = 0; i < px->lim.max_conns && !free_slot; i++)
		if (px->slots[i].state == SLOT_FREE)
			free_slot = &px->slots[i];
	if (!free_slot) {
		pthread_mutex_unlock(&px->mu);
		/* Answered here without a thread: that is the point of the
		 * bound.  A fresh socket's send buffer holds this line. */
		struct proxy_request rq = {.method = "?"};
		char reason[128], reply[512];

		snprintf(reason, sizeof(reason), "the run already has %u proxy connections open",
		         px->lim.max_conns);
		audit_request(px, &rq, "", "deny", 503, reason);
		int n = format_reply(reply, sizeof(reply), 503, reason);
		if (n > 0)
			(void)!send(client_fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		shutdown(client_fd, SHUT_WR);
		close(client_fd);
		errno = EAGAIN;
		return -1;
	}
	/* The fd may come from SCM_RIGHTS without these flags. */
	fcntl(client_fd, F_SETFD, FD_CLOEXEC);
	fcntl(client_fd, F_SETFL, fcntl(client_fd, F_GETFL) | O_NONBLOCK);
	free_slot->fd = client_fd;
	free_slot->px = px;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Signals belong to the front's main thread (sigwait); a connection
	 * thread starts with all of them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&free_slot->tid, &attr, conn_main, free_slot);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		free_slot->fd = -1;
		pthread_mutex_unlock(&px->mu);
		close(client_fd);
		errno = e;
		return -1;
	}
	free_slot->state = SLOT_RUNNING;
	px->running++;
	pthread_mutex_unlock(&px->mu);
	return 0;
}

unsigned proxy_active(struct proxy *px)
{
	unsigned n = 0;

	pthread_mutex_lock(&px->mu);
	for (unsigned i = 0; i < px->lim.max_conns; i++)
		n += px->slots[i].state == SLOT_RUNNING;
	pthread_mutex_unlock(&px->mu);
	return n;
}

void proxy_free(struct proxy *px)
{
	char one = 1;

	if (!px)
		return;
	/* No slot becomes RUNNING once `closing` is set; every poll(2) of
	 * every connection thread watches wake[0]. */
	pthread_mutex_lock(&px->mu);
	px->closing = true;
	bool none = px->running == 0;
	/* Under the lock: once it is released, the last thread frees px and
	 * closes the pipe (its number may be another run's socket by then). */
	(void)!write(px->wake[1], &one, 1);
	pthread_mutex_unlock(&px->mu);
	if (none)
		destroy(px);
}
