/*
 * loadclient.c - the throughput benchmark's clients (SPEC §15.5), in C.
 *
 *   loadclient HOST PORT CA CERT KEY CLIENTS RUNS
 *
 * CLIENTS threads, each on ONE kept-alive mutual-TLS connection, share RUNS
 * runs of POST /v0/run {"cmd":"/usr/bin/echo C-I"} (a program, exec'd
 * without bash, as bwrap runs its program).  Every reply is checked: a 200
 * whose stdout is exactly "C-I\n" with exit 0 and a run id of 32 hex digits
 * no other run had; a 503 must carry Retry-After and "at_capacity", and is
 * retried after 5-30 ms, as tests/stress/loadclient.py does.  Prints one
 * line: "runs_per_s=X ok=N busy=N errors=N" and exits 1 on any error.
 *
 * Why C: the Python client of tests/e2e/load.sh (which also checks every
 * reply field, leaks and memory) spends about 2.5 ms of CPU per run on the
 * same two CPUs as the daemon (docs/bench.md), and the bwrap loops it is
 * compared with are driven by a C loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define REPLY_MAX (1 << 16)

static const char *host;
static int port;
static SSL_CTX *ctx;
static atomic_int next_run, ok_runs, busy, errors;
static int total_runs;
static char (*run_ids)[33]; /* one slot per run, for the duplicate check */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(int client, int run, const char *what, const char *reply)
{
	if (atomic_fetch_add(&errors, 1) < 20)
		fprintf(stderr, "loadclient: client %d run %d: %s: %.200s\n", client, run, what, reply ? reply : "");
}

static SSL *connect_tls(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
	if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return NULL;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	SSL *ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_set1_host(ssl, "localhost") != 1 || SSL_connect(ssl) != 1) {
		SSL_free(ssl);
		close(fd);
		return NULL;
	}
	return ssl;
}

/* One reply with Content-Length into buf; its status, or -1. */
static int read_reply(SSL *ssl, char *buf, size_t cap, char **body)
{
	size_t len = 0;
	char *hend = NULL;
	long clen = -1;
	for (;;) {
		if (len + 1 >= cap)
			return -1;
		int n = SSL_read(ssl, buf + len, (int)(cap - 1 - len));
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		if (!hend && (hend = strstr(buf, "\r\n\r\n"))) {
			char *cl = strcasestr(buf, "\r\nContent-Length:");
			if (!cl || cl > hend)
				return -1;
			clen = strtol(cl + 17, NULL, 10);
		}
		if (hend && (long)(len - (size_t)(hend + 4 - buf)) >= clen) {
			*body = hend + 4;
			return atoi(buf + 9);
		}
	}
}

/* Run i until it is not refused for capacity; 0 when its reply is right. */
static int one_run(SSL *ssl, int c, int i, char *reply, unsigned *seed)
{
	char req[512], body[64], want[80], *b;
	int bl = snprintf(body, sizeof body, "{\"cmd\":\"/usr/bin/echo %d-%d\"}", c, i);
	int rl = snprintf(req, sizeof req,
			  "POST /v0/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			  "Content-Length: %d\r\n\r\n%s",
			  bl, body);
	snprintf(want, sizeof want, "\"stdout\":\"%d-%d\\n\"", c, i);
	for (;;) {
		if (SSL_write(ssl, req, rl) != rl) {
			fail(c, i, "write", NULL);
			return -1;
		}
		int st = read_reply(ssl, reply, REPLY_MAX, &b);
		if (st < 0) {
			fail(c, i, "no reply", NULL);
			return -1;
		}
		if (st != 503)
			break;
		if (!strcasestr(reply, "\r\nRetry-After:") || !strstr(b, "\"at_capacity\"")) {
			fail(c, i, "a 503 without Retry-After and at_capacity", b);
			return -1;
		}
		atomic_fetch_add(&busy, 1);
		usleep(5000 + rand_r(seed) % 25000);
	}
	const char *id = strstr(b, "\"run_id\":\"");
	if (!strstr(b, want) || !strstr(b, "\"exit\":0,") || !id || strspn(id + 10, "0123456789abcdef") != 32 ||
	    id[42] != '"') {
		fail(c, i, "a wrong reply", b);
		return -1;
	}
	memcpy(run_ids[i], id + 10, 32);
	atomic_fetch_add(&ok_runs, 1);
	return 0;
}

static void *client(void *arg)
{
	int c = (int)(long)arg;
	char *reply = malloc(REPLY_MAX);
	unsigned seed = (unsigned)c * 2654435761u;
	SSL *ssl = connect_tls();
	if (!ssl || !reply) {
		fail(c, -1, "cannot connect", NULL);
		free(reply);
		return NULL;
	}
	for (int i; (i = atomic_fetch_add(&next_run, 1)) < total_runs;)
		if (one_run(ssl, c, i, reply, &seed) < 0 && SSL_get_shutdown(ssl))
			break; /* the connection is gone: the runs left are not counted as ok */
	SSL_free(ssl);
	free(reply);
	return NULL;
}

static int cmp_id(const void *a, const void *b)
{
	return memcmp(a, b, 33);
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: loadclient HOST PORT CA CERT KEY CLIENTS RUNS\n");
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	int clients = atoi(argv[6]);
	total_runs = atoi(argv[7]);
	if (clients < 1 || clients > MAX_CLIENTS || total_runs < 1)
		return 2;
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || SSL_CTX_load_verify_locations(ctx, argv[3], NULL) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, argv[4]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, argv[5], SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	run_ids = calloc((size_t)total_runs, sizeof *run_ids);
	pthread_t tid[MAX_CLIENTS];
	if (!run_ids)
		return 1;
	double t0 = now_s();
	for (int c = 0; c < clients; c++)
		if (pthread_create(&tid[c], NULL, client, (void *)(long)c) != 0)
			return 1;
	for (int c = 0; c < clients; c++)
		pthread_join(tid[c], NULL);
	double dt = now_s() - t0;
	qsort(run_ids, (size_t)total_runs, sizeof *run_ids, cmp_id);
	for (int i = 1; i < total_runs; i++)
		if (run_ids[i][0] && memcmp(run_ids[i], run_ids[i - 1], 33) == 0)
			fail(-1, i, "a run id seen twice", run_ids[i]);
	if (atomic_load(&ok_runs) != total_runs && atomic_load(&errors) == 0)
		fail(-1, -1, "runs missing", NULL);
	printf("runs_per_s=%.1f ok=%d busy=%d errors=%d\n", atomic_load(&ok_runs) / dt, atomic_load(&ok_runs),
	       atomic_load(&busy), atomic_load(&errors));
	return atomic_load(&errors) ? 1 : 0;
}
