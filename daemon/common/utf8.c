/*
 * utf8.c - see utf8.h.
 */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0. */
static size_t seq_len(const unsigned char *s, size_t left)
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

size_t utf8_decode(const char *s, size_t left, unsigned *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = left ? seq_len(u, left) : 0;
	if (n)
		*cp = n == 1 ? u[0] : u[0] & (0xffu >> (n + 1));
	for (size_t i = 1; i < n; i++)
		*cp = *cp << 6 | (u[i] & 0x3f);
	return n;
}

char *utf8_clean(const char *buf, size_t len, bool *replaced)
{
	const unsigned char *s = (const unsigned char *)buf;
	char *out = malloc(len * 3 + 1);
	size_t o = 0;
	*replaced = false;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = seq_len(s + i, len - i);
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

bool utf8_valid(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	for (size_t i = 0; i < len;) {
		size_t n = seq_len(s + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

size_t utf8_cut(const char *buf, size_t len, size_t max)
{
	const unsigned char *s = (const unsigned char *)buf;
	if (len <= max)
		return len;
	/* Step back over continuation bytes (at most 3) to the byte that
	 * starts the character the cut falls in. */
	size_t i = max;
	while (i > 0 && max - i < 3 && (s[i] & 0xc0) == 0x80)
		i--;
	size_t n = seq_len(s + i, len - i);
	return n && i + n > max ? i : max;
}
