/*
 * roundtrip.c - the round-trip benchmark of SPEC §13.
 *
 *   roundtrip run URL-HOST PORT CA CERT KEY N WARMUP
 *       POST /v0/run {"cmd":"/usr/bin/true"} N times on ONE kept-alive
 *       mutual-TLS connection (after WARMUP untimed runs); every reply must
 *       be a 200 with "exit":0.  Prints the median, p10, p90 and mean in ms.
 *       ROUNDTRIP_CMD names another command (no " or \): "true" is bash's
 *       builtin, so bash starts for it (asrun/directexec.h).
 *   roundtrip exec N WARMUP PROGRAM ARGS...
 *       fork + execvp + waitpid of PROGRAM N times (after WARMUP); the
 *       program must exit 0.  Prints the same figures: the baselines
 *       (bwrap --unshare-all ... true, bash -c true) measured the same way.
 *
 * Output, one line: "median_ms=X p10_ms=X p90_ms=X mean_ms=X n=N".
 * Low overhead on purpose: plain OpenSSL, blocking I/O, no JSON library.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(double *t, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += t[i];
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	double med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	printf("median_ms=%.3f p10_ms=%.3f p90_ms=%.3f mean_ms=%.3f n=%d\n", med, t[n / 10], t[n * 9 / 10],
	       sum / n, n);
}

static void die(const char *what)
{
	fprintf(stderr, "roundtrip: %s: %s\n", what, errno ? strerror(errno) : "failed");
	ERR_print_errors_fp(stderr);
	exit(1);
}

/* Read one HTTP response; returns the status, body in buf (NUL-terminated). */
static int read_reply(SSL *ssl, char *buf, size_t cap)
{
	size_t len = 0;
	char *hend = NULL;
	long clen = -1;
	for (;;) {
		if (len + 1 >= cap)
			die("reply too large");
		int n = SSL_read(ssl, buf + len, (int)(cap - 1 - len));
		if (n <= 0)
			die("connection closed by the daemon");
		len += (size_t)n;
		buf[len] = '\0';
		if (!hend && (hend = strstr(buf, "\r\n\r\n"))) {
			char *cl = strcasestr(buf, "\r\nContent-Length:");
			if (!cl || cl > hend)
				die("reply without Content-Length");
			clen = strtol(cl + 17, NULL, 10);
		}
		if (hend && (long)(len - (size_t)(hend + 4 - buf)) >= clen)
			break;
	}
	int status = atoi(buf + 9);
	memmove(buf, hend + 4, (size_t)clen);
	buf[clen] = '\0';
	return status;
}

/* ROUNDTRIP_GAP_MS: a pause before each sample, as an agent thinks between
 * commands; 0 (the default) is back to back.  Same for every kind. */
static unsigned gap_from_env(void)
{
	const char *gap = getenv("ROUNDTRIP_GAP_MS");
	return gap ? (unsigned)atoi(gap) * 1000u : 0;
}

static int bench_run(int argc, char **argv)
{
	if (argc != 9) {
		fprintf(stderr, "usage: roundtrip run HOST PORT CA CERT KEY N WARMUP\n");
		return 2;
	}
	const char *host = argv[2];
	int port = atoi(argv[3]), n = atoi(argv[7]), warm = atoi(argv[8]);
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || SSL_CTX_load_verify_locations(ctx, argv[4], NULL) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, argv[5]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, argv[6], SSL_FILETYPE_PEM) != 1)
		die("TLS setup");
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);

	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
	if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set1_host(ssl, "localhost");
	if (SSL_connect(ssl) != 1)
		die("TLS handshake");

	const char *cmd = getenv("ROUNDTRIP_CMD") ? getenv("ROUNDTRIP_CMD") : "/usr/bin/true";
	if (strpbrk(cmd, "\"\\") || strlen(cmd) > 128)
		die("ROUNDTRIP_CMD: at most 128 bytes, no \" or \\");
	char body[160], req[384], *reply = malloc(1 << 20);
	int bl = snprintf(body, sizeof(body), "{\"cmd\":\"%s\"}", cmd);
	int rl = snprintf(req, sizeof(req),
			  "POST /v0/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			  "Content-Length: %d\r\n\r\n%s",
			  bl, body);
	double *t = calloc((size_t)n, sizeof(*t));
	if (!reply || !t)
		die("malloc");
	unsigned gap_us = gap_from_env();
	for (int i = 0; i < warm + n; i++) {
		if (gap_us)
			usleep(gap_us);
		double t0 = now_ms();
		if (SSL_write(ssl, req, rl) != rl)
			die("write");
		int st = read_reply(ssl, reply, 1 << 20);
		double dt = now_ms() - t0;
		if (st != 200 || !strstr(reply, "\"exit\":0,")) {
			fprintf(stderr, "roundtrip: run %d: status %d: %.300s\n", i, st, reply);
			return 1;
		}
		if (i >= warm)
			t[i - warm] = dt;
	}
	report(t, n);
	SSL_shutdown(ssl);
	SSL_free(ssl);
	close(fd);
	SSL_CTX_free(ctx);
	free(reply);
	free(t);
	return 0;
}

static int bench_exec(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: roundtrip exec N WARMUP PROGRAM ARGS...\n");
		return 2;
	}
	int n = atoi(argv[2]), warm = atoi(argv[3]);
	double *t = calloc((size_t)n, sizeof(*t));
	if (!t)
		die("malloc");
	unsigned gap_us = gap_from_env();
	for (int i = 0; i < warm + n; i++) {
		int ws;
		if (gap_us)
			usleep(gap_us);
		double t0 = now_ms();
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			execvp(argv[4], argv + 4);
			_exit(127);
		}
		if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			fprintf(stderr, "roundtrip: %s failed (status 0x%x)\n", argv[4], ws);
			return 1;
		}
		if (i >= warm)
			t[i - warm] = now_ms() - t0;
	}
	report(t, n);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return bench_run(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "exec") == 0)
		return bench_exec(argc, argv);
	fprintf(stderr, "usage: roundtrip run HOST PORT CA CERT KEY N WARMUP\n"
	                "       roundtrip exec N WARMUP PROGRAM ARGS...\n");
	return 2;
}
