/*
 * log.c - one line per event on stderr, prefixed with the process role.
 * Lines are written with a single write(2) so concurrent threads and the
 * two processes never interleave within a line.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *log_prefix = "sharnessd";
static int log_verbose;

void log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

void log_set_verbose(int verbose)
{
	log_verbose = verbose;
}

int log_is_verbose(void)
{
	return log_verbose;
}

static void log_line(const char *level, const char *fmt, va_list ap)
{
	char line[2048];
	int n = snprintf(line, sizeof(line), "sharnessd[%s] %s", log_prefix, level);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	size_t len = strnlen(line, sizeof(line) - 2);
	/* One event, one line: control bytes from anything quoted become '?',
	 * and so do the C1 controls (U+0080-U+009F) and the bidi overrides and
	 * isolates (U+202A-U+202E, U+2066-U+2069), which would reorder what a
	 * terminal shows (CVE-2021-42574). */
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		const unsigned char *u = (const unsigned char *)line + i;
		if (u[0] < 0x20 || u[0] == 0x7f) {
			line[o++] = '?';
		} else if (u[0] == 0xc2 && i + 1 < len && u[1] >= 0x80 && u[1] <= 0x9f) {
			line[o++] = '?';
			i += 1;
		} else if (u[0] == 0xe2 && i + 2 < len &&
		           ((u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae) || (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9))) {
			line[o++] = '?';
			i += 2;
		} else {
			line[o++] = line[i];
		}
	}
	len = o;
	line[len++] = '\n';
	(void)!write(STDERR_FILENO, line, len);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("warning: ", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_line("debug: ", fmt, ap);
	va_end(ap);
}

void log_fatal(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sharnessd: %s\n", msg);
	exit(1);
}
