/*
 * buf.c - growable byte buffer with a size cap (see buf.h).
 */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

int buf_append(struct buf *b, const void *p, size_t n)
{
	if (b->max && (n > b->max || b->len > b->max - n)) {
		errno = EFBIG;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1) {
			if (cap > ((size_t)-1) / 2) {
				errno = ENOMEM;
				return -1;
			}
			cap *= 2;
		}
		char *d = realloc(b->data, cap);
		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[512];
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof small)
		return buf_append(b, small, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big)
		return -1;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int rc = buf_append(b, big, (size_t)n);
	free(big);
	return rc;
}

/* Inside single quotes sh, bash and zsh take every byte literally but the
 * closing quote (POSIX XCU 2.2.2); fish also reads \' and \\ there as
 * escapes.  So both are written outside the quotes, where all four read a
 * backslash escape alike: ' -> '\'' and \ -> '\\'. */
int buf_shquote(struct buf *b, const char *s, size_t n)
{
	if (buf_append(b, "'", 1) < 0)
		return -1;
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\'' && s[i] != '\\')
			continue;
		if (buf_append(b, s + start, i - start) < 0 ||
		    buf_append(b, s[i] == '\'' ? "'\\''" : "'\\\\'", 4) < 0)
			return -1;
		start = i + 1;
	}
	if (buf_append(b, s + start, n - start) < 0 || buf_append(b, "'", 1) < 0)
		return -1;
	return 0;
}

int buf_read_fd(struct buf *b, int fd)
{
	char chunk[65536];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		if (buf_append(b, chunk, (size_t)r) < 0)
			return -1;
	}
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int fd_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void buf_utf8_clean(char *s, size_t n)
{
	unsigned char *p = (unsigned char *)s;
	for (size_t i = 0; i < n;) {
		/* how many continuation bytes the lead byte c announces; 4: none valid */
		unsigned c = p[i], more = c < 0x80		 ? 0
					  : c >= 0xc2 && c <= 0xdf ? 1
					  : c >= 0xe0 && c <= 0xef ? 2
					  : c >= 0xf0 && c <= 0xf4 ? 3
								   : 4;
		size_t k = 1;
		while (more < 4 && k <= more && i + k < n && (p[i + k] & 0xc0) == 0x80)
			k++;
		/* the second byte's range where the first limits it */
		bool bad = more == 4 || k <= more || (c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0) ||
			   (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90);
		if (bad)
			p[i++] = '?';
		else
			i += more + 1;
	}
}
