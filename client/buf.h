/*
 * buf.h - a growable byte buffer, always NUL-terminated, with a hard size cap.
 *
 * Used for HTTP replies, quoting and stdin.  Every input the client reads has
 * a maximum (buf_append fails with EFBIG past `max`), so a hostile peer cannot
 * make the client grow without bound.
 */
#ifndef SHARNESS_CLIENT_BUF_H
#define SHARNESS_CLIENT_BUF_H

#include <stddef.h>

struct buf {
	char *data;     /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap;
	size_t max;     /* 0 = no cap */
};

/* Appends n bytes; 0, or -1 with errno ENOMEM or EFBIG (past max). */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s single-quoted so that sh, bash, zsh and fish all read it back
 * as exactly s (every byte but NUL): 'it'\''s', and a backslash as '\\'
 * outside the quotes, since fish reads \' and \\ inside them as escapes. */
int buf_shquote(struct buf *b, const char *s, size_t n);
/* Reads fd to EOF; -1 with errno set (EFBIG when the data exceeds b->max). */
int buf_read_fd(struct buf *b, int fd);
/* Frees the data; the struct may be reused. buf_free on a zeroed buf is a no-op. */
void buf_free(struct buf *b);
/* Each byte of s[0, n) that is not part of a whole, valid UTF-8 sequence
 * (as jansson takes it: no overlong form, no surrogate, at most U+10FFFF)
 * becomes '?', in place: text cut at a byte limit, or quoted from input,
 * then still encodes as a JSON string. */
void buf_utf8_clean(char *s, size_t n);

/* Write all n bytes to fd (retrying EINTR and short writes); 0 or -1. */
int fd_write_all(int fd, const char *p, size_t n);

#endif
