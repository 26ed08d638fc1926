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
#define DIRECT (32u * 1024u) /* pieces this long are written without a copy */

struct out {
	char *buf;
	size_t len;
	int failed;
	double io; /* seconds spent in read(2) and write(2) */
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void write_all(struct out *o, const char *p, size_t n)
{
	double t0 = now();
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
	o->io += now() - t0;
}

/* Batch the many small pieces a stream emits (markers, text between close
 * matches) into large writes; the long runs of unchanged text between them
 * go out directly. */
static void out_emit(void *arg, const char *p, size_t n)
{
	struct out *o = arg;
	if (o->len + n > IO_CHUNK || (n >= DIRECT && o->len > 0)) {
		write_all(o, o->buf, o->len);
		o->len = 0;
	}
	if (n >= DIRECT) {
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
	unsigned long long total = 0;
	double t0, t1;
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
	if (!o.buf || !(s = scrub_stream_new(r, out_emit, &o))) {
		fprintf(stderr, "sharnessd: filter: out of memory\n");
		goto out;
	}
	t0 = now();
	for (;;) {
		size_t room;
		char *in = scrub_stream_space(s, &room);
		double r0 = now();
		ssize_t n = read(STDIN_FILENO, in, room); /* straight into the stream's window */
		int rerr = errno; /* now() may change errno */
		o.io += now() - r0;
		if (n < 0 && rerr == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "sharnessd: filter: read stdin: %s\n", strerror(rerr));
			goto out;
		}
		if (n == 0)
			break;
		total += (unsigned long long)n;
		if (scrub_stream_wrote(s, (size_t)n) < 0) {
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
	t1 = now();
	{
		/* Two rates: the filter's own (what a daemon core spends per byte;
		 * the pipes are read anyway) and with this command's read and write. */
		double all = t1 - t0, filt = all - o.io;
		fprintf(stderr,
		        "sharnessd: filtered %llu bytes, %lu replaced, %zu detectors, %zu vault keys, "
		        "%.1f MB/s (%.1f MB/s with I/O)\n",
		        total, scrub_stream_count(s), scrub_rules_count(r), scrub_vault_count(r),
		        filt > 0 ? (double)total / filt / 1e6 : 0.0, all > 0 ? (double)total / all / 1e6 : 0.0);
	}
	rc = 0;
out:
	scrub_stream_free(s);
	scrub_rules_free(r);
	free(o.buf);
	return rc;
}
