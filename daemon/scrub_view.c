/*
 * scrub_view.c - the decoded view (ANSI stripped, JSON escapes decoded) the
 * secret filter scans in addition to the raw bytes (research D: "ANSI-
 * coloured", "JSON-escaped").
 *
 * Why a view and not more patterns: `grep --color` can put an escape sequence
 * anywhere inside a token and JSON may write any '/' as "\/"; decoding once
 * lets every detector and vault needle work unchanged.  The map sends a view
 * span back to raw bytes, and the escapes inside a redacted span go with it.
 */
#include "scrub_view.h"

#include <string.h>

static int hexv(unsigned char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* Length of an ANSI sequence at raw[j] (ESC), 0 if incomplete or not one. */
static size_t ansi_len(const unsigned char *raw, size_t n, size_t j)
{
	size_t k = j + 1;
	if (k >= n)
		return 0;
	if (raw[k] == '[') { /* CSI: params, intermediates, one final byte */
		k++;
		while (k < n && k - j < 64 && raw[k] >= 0x20 && raw[k] <= 0x3f)
			k++;
		if (k < n && raw[k] >= 0x40 && raw[k] <= 0x7e)
			return k + 1 - j;
		return 0;
	}
	if (raw[k] == ']') { /* OSC: up to BEL or ST */
		for (k++; k < n && k - j < 512; k++) {
			if (raw[k] == 0x07)
				return k + 1 - j;
			if (raw[k] == 0x1b && k + 1 < n && raw[k + 1] == '\\')
				return k + 2 - j;
		}
		return 0;
	}
	if (raw[k] >= 0x40 && raw[k] <= 0x5f)
		return 2;
	return 0;
}

/* A JSON escape at raw[j] ('\'): its raw length and decoded byte, 0 if none. */
static size_t json_len(const unsigned char *raw, size_t n, size_t j, unsigned char *out)
{
	if (j + 1 >= n)
		return 0;
	switch (raw[j + 1]) {
	case 'n': *out = '\n'; return 2;
	case 'r': *out = '\r'; return 2;
	case 't': *out = '\t'; return 2;
	case '"': *out = '"'; return 2;
	case '/': *out = '/'; return 2;
	case '\\': *out = '\\'; return 2;
	case 'u':
		if (j + 5 < n && raw[j + 2] == '0' && raw[j + 3] == '0' && hexv(raw[j + 4]) >= 0 &&
		    hexv(raw[j + 5]) >= 0 && hexv(raw[j + 4]) < 8) {
			*out = (unsigned char)(hexv(raw[j + 4]) * 16 + hexv(raw[j + 5]));
			return 6;
		}
		return 0;
	default:
		return 0;
	}
}

int scrub_view_needed(const unsigned char *raw, size_t n)
{
	const unsigned char *p = raw, *end = raw + n;
	if (memchr(raw, 0x1b, n))
		return 1;
	while ((p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
		unsigned char c;
		if (json_len(raw, n, (size_t)(p - raw), &c))
			return 1;
		p++;
	}
	return 0;
}

size_t scrub_view_build(const unsigned char *raw, size_t n, unsigned char *view, uint32_t *map)
{
	size_t i = 0, o = 0;
	while (i < n) {
		unsigned char c = raw[i];
		size_t l;
		if (c == 0x1b && (l = ansi_len(raw, n, i)) > 0) {
			i += l;
			continue;
		}
		if (c == '\\' && (l = json_len(raw, n, i, &c)) > 0) {
			view[o] = c;
			map[o++] = (uint32_t)i;
			i += l;
			continue;
		}
		view[o] = c;
		map[o++] = (uint32_t)i++;
	}
	map[o] = (uint32_t)n;
	return o;
}

size_t scrub_view_raw_end(const unsigned char *raw, size_t n, const uint32_t *map, size_t i)
{
	size_t j = map[i], l;
	unsigned char c;
	if (raw[j] == '\\' && (l = json_len(raw, n, j, &c)) > 0)
		return j + l;
	return j + 1;
}
