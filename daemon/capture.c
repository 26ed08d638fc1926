/*
 * capture.c - bounded head + tail capture of one stream (see capture.h).
 */
#include "capture.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int capture_init(struct capture *c, size_t cap)
{
	memset(c, 0, sizeof(*c));
	if (cap < 2)
		cap = 2;
	c->cap = cap;
	c->tail_cap = cap / 2;
	return 0;
}

/* Buffers grow with the output: most commands print little, and a run
 * should not map megabytes it never touches.  Never beyond the cap. */
static bool reserve_head(struct capture *c, size_t need)
{
	size_t head_cap = c->cap - c->tail_cap;
	if (need <= c->head_alloc)
		return true;
	size_t n = c->head_alloc ? c->head_alloc * 2 : 4096;
	while (n < need)
		n *= 2;
	if (n > head_cap)
		n = head_cap;
	char *h = realloc(c->head, n);
	if (!h)
		return false;
	c->head = h;
	c->head_alloc = n;
	return true;
}

void capture_append(void *arg, const char *buf, size_t len)
{
	struct capture *c = arg;
	size_t head_cap = c->cap - c->tail_cap;

	c->total += len;
	if (c->head_len < head_cap) {
		size_t n = head_cap - c->head_len < len ? head_cap - c->head_len : len;
		if (!reserve_head(c, c->head_len + n)) {
			c->failed = true;
			return;
		}
		memcpy(c->head + c->head_len, buf, n);
		c->head_len += n;
		buf += n;
		len -= n;
	}
	if (len > 0 && !c->tail && !(c->tail = malloc(c->tail_cap))) {
		c->failed = true;
		return;
	}
	if (len >= c->tail_cap) {
		/* Only the last tail_cap bytes can survive. */
		memcpy(c->tail, buf + len - c->tail_cap, c->tail_cap);
		c->tail_start = 0;
		c->tail_len = c->tail_cap;
		return;
	}
	for (size_t i = 0; i < len; i++) {
		size_t pos = (c->tail_start + c->tail_len) % c->tail_cap;
		c->tail[pos] = buf[i];
		if (c->tail_len < c->tail_cap)
			c->tail_len++;
		else
			c->tail_start = (c->tail_start + 1) % c->tail_cap;
	}
}

bool capture_truncated(const struct capture *c)
{
	return c->total > c->head_len + c->tail_len;
}

char *capture_result(const struct capture *c, size_t *len)
{
	char marker[96];
	int mlen = 0;
	if (capture_truncated(c))
		mlen = snprintf(marker, sizeof(marker), "\n[... %zu bytes truncated ...]\n",
		                c->total - c->head_len - c->tail_len);
	size_t n = c->head_len + (size_t)mlen + c->tail_len;
	char *out = malloc(n + 1);
	if (!out || c->failed) {
		free(out);
		return NULL;
	}
	if (c->head_len)
		memcpy(out, c->head, c->head_len);
	memcpy(out + c->head_len, marker, (size_t)mlen);
	size_t off = c->head_len + (size_t)mlen;
	for (size_t i = 0; i < c->tail_len; i++)
		out[off + i] = c->tail[(c->tail_start + i) % c->tail_cap];
	out[n] = '\0';
	*len = n;
	return out;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	if (c >= 0x01 && c < 0x80)
		return 1;
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

char *capture_utf8_clean(const char *buf, size_t len, bool *replaced)
{
	const unsigned char *s = (const unsigned char *)buf;
	char *out = malloc(len * 3 + 1);
	size_t o = 0;
	*replaced = false;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(s + i, len - i);
		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			*replaced = true;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return out;
}

void capture_free(struct capture *c)
{
	if (!c)
		return;
	free(c->head);
	free(c->tail);
	c->head = c->tail = NULL;
}
