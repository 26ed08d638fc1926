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

void capture_free(struct capture *c)
{
	if (!c)
		return;
	free(c->head);
	free(c->tail);
	c->head = c->tail = NULL;
}
