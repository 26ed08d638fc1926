/*
 * scrub_cli.c - `sharnessd --filter [--secrets FILE] [--tls-key FILE]`
 * (SPEC §7): the secret filter as a command, stdin -> filtered stdout, one
 * summary line on stderr.  Useful on its own to clean any log, and what the
 * benchmark drives.
 *
 * Trust: stdin is anything; the files are the operator's.
 */
#include "scrub.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IO_CHUNK (256u * 1024u)

struct out {
	char *buf;
	size_t len;
	int failed;
};

static void write_all(struct out *o, const char *p, size_t n)
{
	while (n > 0 && !o->failed) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->failed = 1;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Batch the many small pieces a stream emits into large writes. */
static void out_emit(void *arg, const char *p, size_t n)
{
	struct out *o = arg;
	if (o->len + n > IO_CHUNK) {
		write_all(o, o->buf, o->len);
		o->len = 0;
	}
	if (n > IO_CHUNK) {
		write_all(o, p, n);
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static int usage(void)
{
	fprintf(stderr, "usage: sharnessd --filter [--secrets FILE] [--tls-key FILE] < in > out\n");
	return 2;
}

int scrub_filter_main(int argc, char **argv)
{
	const char *secrets = NULL, *tls_key = NULL;
	char err[512];
	struct scrub_rules *r;
	struct scrub_stream *s = NULL;
	struct out o = {0};
	char *in = NULL;
	unsigned long long total = 0;
	struct timespec t0, t1;
	int rc = 1;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--secrets") == 0 && i + 1 < argc)
			secrets = argv[++i];
		else if (strcmp(argv[i], "--tls-key") == 0 && i + 1 < argc)
			tls_key = argv[++i];
		else
			return usage();
	}
	r = scrub_rules_new(secrets, tls_key, err, sizeof err);
	if (!r) {
		fprintf(stderr, "sharnessd: %s\n", err);
		return 1;
	}
	o.buf = malloc(IO_CHUNK);
	in = malloc(IO_CHUNK);
	if (!o.buf || !in || !(s = scrub_stream_new(r, out_emit, &o))) {
		fprintf(stderr, "sharnessd: filter: out of memory\n");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ssize_t n = read(STDIN_FILENO, in, IO_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "sharnessd: filter: read stdin: %s\n", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += (unsigned long long)n;
		if (scrub_stream_feed(s, in, (size_t)n) < 0) {
			fprintf(stderr, "sharnessd: filter: out of memory\n");
			goto out;
		}
	}
	if (scrub_stream_finish(s) < 0) {
		fprintf(stderr, "sharnessd: filter: out of memory\n");
		goto out;
	}
	write_all(&o, o.buf, o.len);
	if (o.failed) {
		fprintf(stderr, "sharnessd: filter: write stdout: %s\n", strerror(errno));
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	{
		double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		fprintf(stderr,
		        "sharnessd: filtered %llu bytes, %lu replaced, %zu detectors, %zu vault keys, %.1f MB/s\n",
		        total, scrub_stream_count(s), scrub_rules_count(r), scrub_vault_count(r),
		        sec > 0 ? (double)total / sec / 1e6 : 0.0);
	}
	rc = 0;
out:
	scrub_stream_free(s);
	scrub_rules_free(r);
	free(o.buf);
	if (in) {
		explicit_bzero(in, IO_CHUNK);
		free(in);
	}
	return rc;
}
