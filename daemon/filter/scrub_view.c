/*
 * scrub_view.c - the decoded view (ANSI stripped, JSON and percent escapes
 * decoded) the
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
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

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
		/* ESC before one of our markers is not "ESC [ f" (a cursor move):
		 * the view would eat "[f" and show the rest of the marker as a
		 * value ("iltered: ..."), and filtering twice would change the
		 * output (found by fuzz_scrub). */
		if (n - k >= 11 && memcmp(raw + k, "[filtered: ", 11) == 0)
			return 0;
		k++;
		while (k < n && k - j < 64 && raw[k] >= 0x20 && raw[k] <= 0x3f)
			k++;
		/* Nor is a marker's '[' the final byte of "ESC [ params" (found
		 * by fuzz_scrub too). */
		if (k < n && raw[k] == '[' && n - k >= 11 && memcmp(raw + k, "[filtered: ", 11) == 0)
			return 0;
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

/* A percent escape at raw[j] ('%') of a printable character: 3, else 0.
 * Decoding it lets a vault key match however an encoder chose which
 * characters to escape (encodeURIComponent, Python quote, curl differ). */
static size_t pct_len(const unsigned char *raw, size_t n, size_t j, unsigned char *out)
{
	int hi, lo;
	if (j + 2 >= n || (hi = hexv(raw[j + 1])) < 2 || hi > 7 || (lo = hexv(raw[j + 2])) < 0)
		return 0;
	*out = (unsigned char)(hi * 16 + lo);
	return *out < 0x7f ? 3 : 0;
}

/* Raw length of the escape at raw[j] and its decoded byte, 0 if none. */
static size_t esc_len(const unsigned char *raw, size_t n, size_t j, unsigned char *out)
{
	if (raw[j] == '\\')
		return json_len(raw, n, j, out);
	if (raw[j] == '%')
		return pct_len(raw, n, j, out);
	return 0;
}

/* The next ESC, '\\' or '%' at or after p, or n.  Most windows hold none
 * (dumps, hashes, plain logs) or few, and this runs over every byte of every
 * stream, so it compares 32 bytes per step: AVX2 when the CPU has it, else
 * SSE2 (the x86-64 baseline), else a byte loop. */
#if defined(__x86_64__) && defined(__GNUC__)
/* Which bytes of raw[p, p + 64) are ESC, '\\' or '%': bit i for raw[p + i].
 * One shuffle and one compare per 32 bytes instead of three compares and two
 * ors: the three have distinct low nibbles (b, c, 5), so a table indexed by
 * the low nibble gives the one byte of that nibble to compare with; every
 * other entry is 0x80 | nibble, which no byte below 0x80 equals, and a byte
 * from 0x80 up shuffles to 0, which it does not equal either. */
__attribute__((target("avx2"))) static inline uint64_t mask64_avx2(const unsigned char *raw, size_t p)
{
#define T 0x80, 0x81, 0x82, 0x83, 0x84, '%', 0x86, 0x87, 0x88, 0x89, 0x8a, 0x1b, '\\', 0x8d, 0x8e, 0x8f
	const __m256i t = _mm256_setr_epi8(T, T);
#undef T
	__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(raw + p));
	__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(raw + p + 32));
	__m256i mx = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(t, x), x);
	__m256i my = _mm256_cmpeq_epi8(_mm256_shuffle_epi8(t, y), y);
	return (uint32_t)_mm256_movemask_epi8(mx) | (uint64_t)(uint32_t)_mm256_movemask_epi8(my) << 32;
}

static int is_trigger(const unsigned char *raw, size_t n, size_t p);

/* next_trigger's loop over whole 64-byte blocks: each candidate of a block's
 * mask is tried in turn, so a '\\' or '%' that starts no escape (a line
 * continuation, "%s") costs one test, not another pass from the byte after
 * it (source code holds ~1,800 of them per MB).  Returns the trigger, or
 * where the blocks end (p + 64 > n) if there is none before. */
__attribute__((target("avx2"))) static size_t next_trigger_avx2(const unsigned char *raw, size_t n, size_t p)
{
	for (; p + 64 <= n; p += 64)
		for (uint64_t m = mask64_avx2(raw, p); m; m &= m - 1) {
			size_t q = p + (size_t)__builtin_ctzll(m);
			if (is_trigger(raw, n, q))
				return q;
		}
	return p;
}
#endif

/* The next ESC, '\\' or '%' at or after p; n if none.  Only next_trigger
 * calls it, and with AVX2 only past its whole 64-byte blocks. */
static size_t next_byte(const unsigned char *raw, size_t n, size_t p)
{
#if defined(__SSE2__)
	{
		const __m128i e = _mm_set1_epi8(0x1b), b = _mm_set1_epi8('\\'), c = _mm_set1_epi8('%');
		for (; p + 16 <= n; p += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(raw + p));
			unsigned m = (unsigned)_mm_movemask_epi8(
				_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, e), _mm_cmpeq_epi8(x, b)), _mm_cmpeq_epi8(x, c)));
			if (m)
				return p + (size_t)__builtin_ctz(m);
		}
	}
#endif
	for (; p < n; p++)
		if (raw[p] == 0x1b || raw[p] == '\\' || raw[p] == '%')
			return p;
	return n;
}

/* Whether raw[p] starts an ANSI sequence, a JSON escape or a percent escape. */
static int is_trigger(const unsigned char *raw, size_t n, size_t p)
{
	unsigned char c;
	return raw[p] == 0x1b ? ansi_len(raw, n, p) > 0 : esc_len(raw, n, p, &c) > 0;
}

/* The next trigger at or after p: an ESC starting an ANSI sequence, a JSON
 * escape or a percent escape; n if none. */
static size_t next_trigger(const unsigned char *raw, size_t n, size_t p)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx2")) {
		p = next_trigger_avx2(raw, n, p);
		if (p + 64 <= n)
			return p;
	}
#endif
	while ((p = next_byte(raw, n, p)) < n) {
		if (is_trigger(raw, n, p))
			return p;
		p++;
	}
	return n;
}

size_t scrub_view_first(const unsigned char *raw, size_t n, size_t from)
{
	return from < n ? next_trigger(raw, n, from) : n;
}

/* Decode raw[s, e) into the view. */
static size_t decode(const unsigned char *raw, size_t s, size_t e, unsigned char *view, uint32_t *map, size_t o)
{
	size_t i = s;
	while (i < e) {
		unsigned char c = raw[i];
		size_t l;
		if (c == 0x1b && (l = ansi_len(raw, e, i)) > 0) {
			i += l;
			continue;
		}
		if ((c == '\\' || c == '%') && (l = esc_len(raw, e, i, &c)) > 0) {
			view[o] = c;
			map[o++] = (uint32_t)i;
			i += l;
			continue;
		}
		view[o] = c;
		map[o++] = (uint32_t)i++;
	}
	return o;
}

/* Only the lines holding a JSON or percent escape go into the view (each at
 * most VIEW_LINE_MAX bytes either side of it; with an ANSI escape, all): scanning the view then costs in proportion to
 * escaped text, not to the window. */
#define VIEW_LINE_MAX 8192u

size_t scrub_view_build(const unsigned char *raw, size_t n, size_t first, unsigned char *view, uint32_t *map)
{
	size_t o = 0, done = 0, p = first;
	for (; p < n; p = next_trigger(raw, n, p)) {
		size_t lo = p > done + VIEW_LINE_MAX ? p - VIEW_LINE_MAX : done, ls, le;
		const unsigned char *q = memrchr(raw + lo, '\n', p - lo);
		size_t lim = n - p < VIEW_LINE_MAX ? n - p : VIEW_LINE_MAX;
		ls = q ? (size_t)(q - raw) + 1 : lo;
		if (raw[p] == 0x1b) {
			/* Colour can split a multi-line token (a PEM block): decode
			 * the whole window. */
			o = decode(raw, 0, n, view, map, 0);
			break;
		}
		q = memchr(raw + p, '\n', lim);
		le = q ? (size_t)(q - raw) + 1 : p + lim;
		o = decode(raw, ls, le, view, map, o);
		done = p = le;
	}
	map[o] = (uint32_t)n;
	return o;
}

size_t scrub_view_raw_end(const unsigned char *raw, size_t n, const uint32_t *map, size_t i)
{
	size_t j = map[i], l;
	unsigned char c;
	if ((l = esc_len(raw, n, j, &c)) > 0)
		return j + l;
	return j + 1;
}
