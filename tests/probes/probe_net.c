/*
 * probe_net.c - run inside the sandbox: what the network lets us do.
 *
 * Usage: probe_net [tcp:ADDR:PORT | abstract:NAME | unix:PATH] ...
 *   ADDR is an IPv4 or bracketed IPv6 literal ([::1]); no DNS is used.
 *
 * Output, one "<check> <target> <result>" line each (result = OK or errno
 * name; a TCP connect gives up after 2 s with ETIMEDOUT):
 *   ifaces - <name,name,...>         interfaces in /proc/net/dev
 *   connect_tcp 192.0.2.1:443 <r>     only when the only interface is lo
 *   udp_send 192.0.2.1:53 <r>         (ENETUNREACH in an empty netns)
 *   bind_tcp 127.0.0.1:0 <r>          Landlock ABI >= 4 denies it (EACCES)
 *   bind_udp 127.0.0.1:0 <r>
 *   socket_raw_inet - <r>             needs CAP_NET_RAW (EPERM)
 *   socket_packet|socket_alg|socket_vsock|socket_netlink|socket_bluetooth - <r>
 *                                     seccomp: EAFNOSUPPORT
 *   then one line per argument:
 *   connect_tcp ADDR:PORT <r> | connect_abstract NAME <r> | connect_unix PATH <r>
 *   A malformed argument prints "<arg> BADARG".  Exit status 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static const char *res(int e)
{
	return e ? strerrorname_np(e) : "OK";
}

/* addr "1.2.3.4:80" or "[::1]:80" → sockaddr; 0 or -1 */
static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon;
	size_t hl;
	long port;
	char *end;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -1;
		hl = (size_t)(rb - s - 1);
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s + 1, hl);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = (size_t)(colon - s);
		if (hl >= sizeof(host))
			return -1;
		memcpy(host, s, hl);
	}
	host[hl] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end || errno || port < 0 || port > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons((uint16_t)port);
			*len = sizeof(*a4);
			return 0;
		}
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)port);
			*len = sizeof(*a6);
			return 0;
		}
	}
	return -1;
}

static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int e = 0;
	socklen_t el = sizeof(e);

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	if (poll(&p, 1, 2000) == 0)
		return ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		return errno;
	return e;
}

static int tcp_connect(const char *target)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	if (parse_addr(target, &ss, &len) < 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	e = connect_timeout(fd, (struct sockaddr *)&ss, len);
	close(fd);
	return e;
}

static int udp_send(const char *target)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e = 0;

	if (parse_addr(target, &ss, &len) < 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0)
		e = errno;
	close(fd);
	return e;
}

static int bind_local(int type)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), e = 0;

	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		e = errno;
	close(fd);
	return e;
}

static int unix_connect(const char *name, int abstract)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name), off = abstract ? 1 : 0;
	socklen_t len;
	int fd, e = 0;

	if (n + off >= sizeof(a.sun_path))
		return ENAMETOOLONG;
	memcpy(a.sun_path + off, name, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + off + n + (abstract ? 0 : 1));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&a, len) < 0)
		e = errno;
	close(fd);
	return e;
}

static int try_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Returns 1 when the only interface is lo (an isolated network namespace). */
static int print_ifaces(void)
{
	char line[256], out[1024] = "";
	FILE *f = fopen("/proc/net/dev", "re");
	int first = 1;

	if (!f) {
		printf("ifaces - %s\n", strerrorname_np(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *name = line;
		if (!c)
			continue; /* the two header lines */
		*c = '\0';
		name += strspn(name, " ");
		if (strlen(out) + strlen(name) + 2 < sizeof(out)) {
			if (!first)
				strcat(out, ",");
			strcat(out, name);
			first = 0;
		}
	}
	fclose(f);
	printf("ifaces - %s\n", out);
	return strcmp(out, "lo") == 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Outward attempts only where nothing can leave: if this probe ever ran
	 * outside an isolated netns it must not send a packet anywhere.  The
	 * targets are TEST-NET-1 addresses (RFC 5737), routed nowhere. */
	if (print_ifaces()) {
		printf("connect_tcp 192.0.2.1:443 %s\n", res(tcp_connect("192.0.2.1:443")));
		printf("udp_send 192.0.2.1:53 %s\n", res(udp_send("192.0.2.1:53")));
	} else {
		printf("connect_tcp 192.0.2.1:443 SKIPPED-not-isolated\n");
		printf("udp_send 192.0.2.1:53 SKIPPED-not-isolated\n");
	}
	printf("bind_tcp 127.0.0.1:0 %s\n", res(bind_local(SOCK_STREAM)));
	printf("bind_udp 127.0.0.1:0 %s\n", res(bind_local(SOCK_DGRAM)));
	printf("socket_raw_inet - %s\n", res(try_socket(AF_INET, SOCK_RAW)));
	printf("socket_packet - %s\n", res(try_socket(AF_PACKET, SOCK_RAW)));
	printf("socket_alg - %s\n", res(try_socket(AF_ALG, SOCK_SEQPACKET)));
	printf("socket_vsock - %s\n", res(try_socket(AF_VSOCK, SOCK_STREAM)));
	printf("socket_netlink - %s\n", res(try_socket(AF_NETLINK, SOCK_RAW)));
	printf("socket_bluetooth - %s\n", res(try_socket(AF_BLUETOOTH, SOCK_RAW)));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int e;

		if (strncmp(a, "tcp:", 4) == 0) {
			e = tcp_connect(a + 4);
			if (e < 0)
				printf("%s BADARG\n", a);
			else
				printf("connect_tcp %s %s\n", a + 4, res(e));
		} else if (strncmp(a, "abstract:", 9) == 0 && a[9]) {
			printf("connect_abstract %s %s\n", a + 9, res(unix_connect(a + 9, 1)));
		} else if (strncmp(a, "unix:", 5) == 0 && a[5]) {
			printf("connect_unix %s %s\n", a + 5, res(unix_connect(a + 5, 0)));
		} else {
			printf("%s BADARG\n", a);
		}
	}
	return 0;
}
