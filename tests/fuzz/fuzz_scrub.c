/*
 * fuzz_scrub.c - libFuzzer target for the secret filter (scrub_stream_*,
 * scrub_buffer) with every detector and five vault keys loaded.
 *
 * Input layout (so that small inputs reach the window logic of a stream
 * that holds 128 KiB and commits all but the last 16 KiB):
 *   byte 0      seed for the chunk sizes the stream is fed in
 *   bytes 1-2   where the payload lands: low 4 bits 1, 2, 3 put it just
 *               before the first commit point, the window end, or the second
 *               commit point (the high bits pick the exact offset); any
 *               other value puts it at 0
 *   byte 3      the benign filler that pads up to that point
 *   rest        the payload; "\x01 k" expands to vault key k, "\x02 k" to
 *               its lowercase hex, "\x03 k" to its base64, "\x04 k" to it
 *               percent-encoded, "\x05 k" to the first half of it (so
 *               splices of a key with itself and with tokens get built),
 *               "\x06 k" to its base64 in lines of 16 (the narrowest wrap)
 *
 * Properties checked on every input:
 *   1. the filtered output contains no vault key and no encoded form of one
 *      that the filter promises to find (each needle of the vault);
 *   2. feeding the stream in random chunks gives exactly the bytes and the
 *      count scrub_buffer gives in one piece;
 *   3. scrub_buffer is idempotent: filtering filtered output changes nothing;
 *   5. with every wrap taken out (scrub_wrap.h: a line end with 16 encoding
 *      characters before it and one after an indent of at most 16), neither
 *      output holds an encoded needle or a raw one of 23 bytes or more, and
 *      the live stream's holds no piece of one more often than the one-shot
 *      filter's (a flush must not let the start of one out).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "scrub.h"
#include "scrub_rules.h"
#include "scrub_vault.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {
	"hunter2-Vault-Key-0001",
	"s3cr3t/with+base64~chars?&%",
	"quote\"back\\slash<tag>",
	"AKIAIOSFODNN7EXAMPLEKEY",
	"Xy7#Qp2!",
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static struct scrub_rules *rules;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[] = "/tmp/sharness-fuzz-secrets.XXXXXX", err[512];
	(void)argc;
	(void)argv;
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	for (size_t i = 0; i < NKEYS; i++) {
		char line[128];
		int n = snprintf(line, sizeof(line), "key%zu=%s\n", i, keys[i]);
		if (write(fd, line, (size_t)n) != n)
			abort();
	}
	close(fd);
	rules = scrub_rules_new(path, NULL, err, sizeof(err));
	unlink(path);
	if (!rules) {
		fprintf(stderr, "fuzz_scrub: rules: %s\n", err);
		abort();
	}
	if (scrub_vault_count(rules) != NKEYS) {
		fprintf(stderr, "fuzz_scrub: %zu vault keys loaded, expected %zu\n", scrub_vault_count(rules),
		        (size_t)NKEYS);
		abort();
	}
	return 0;
}

struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void emit(void *arg, const char *p, size_t n)
{
	put(arg, p, n);
}

static void put_encoded(struct buf *b, unsigned kind, const char *k)
{
	static const char hex[] = "0123456789abcdef";
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(k);
	const unsigned char *u = (const unsigned char *)k;
	switch (kind) {
	case 1:
		put(b, k, n);
		break;
	case 2:
		for (size_t i = 0; i < n; i++) {
			char h[2] = {hex[u[i] >> 4], hex[u[i] & 15]};
			put(b, h, 2);
		}
		break;
	case 3:
		for (size_t i = 0; i < n; i += 3) {
			unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) |
			             (i + 2 < n ? u[i + 2] : 0);
			char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < n ? b64[(v >> 6) & 63] : '=',
			             i + 2 < n ? b64[v & 63] : '='};
			put(b, q, 4);
		}
		break;
	case 4:
		for (size_t i = 0; i < n; i++) {
			if ((u[i] >= 'a' && u[i] <= 'z') || (u[i] >= 'A' && u[i] <= 'Z') ||
			    (u[i] >= '0' && u[i] <= '9') || strchr("-._~", u[i])) {
				put(b, &u[i], 1);
			} else {
				char h[3] = {'%', "0123456789ABCDEF"[u[i] >> 4], "0123456789ABCDEF"[u[i] & 15]};
				put(b, h, 3);
			}
		}
		break;
	case 5:
		put(b, k, n / 2);
		break;
	case 6: {
		struct buf e = {0};
		put_encoded(&e, 3, k);
		for (size_t i = 0; i < e.len; i += 16) {
			put(b, e.p + i, e.len - i < 16 ? e.len - i : 16);
			if (i + 16 < e.len)
				put(b, "\n", 1);
		}
		free(e.p);
		break;
	}
	}
}

static int enc_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c && strchr("+/-_=", c));
}

/* `in` with every wrap taken out, into `out` (property 5). */
static void join_wraps(const struct buf *in, struct buf *out)
{
	for (size_t i = 0; i < in->len; i++) {
		size_t b = i, a = i, run = 0, indent = 0;
		if (in->p[i] == '\r' && i + 1 < in->len && in->p[i + 1] == '\n')
			a = i + 1;
		if (in->p[a] == '\n') {
			while (run < 16 && run < b && enc_char((unsigned char)in->p[b - 1 - run]))
				run++;
			for (a++; a < in->len && indent < 16 && (in->p[a] == ' ' || in->p[a] == '\t'); a++)
				indent++;
			if (run == 16 && a < in->len && enc_char((unsigned char)in->p[a])) {
				i = a - 1; /* the wrap goes */
				continue;
			}
		}
		put(out, &in->p[i], 1);
	}
}

/* Whether needle i is one the filter promises to find across wraps. */
static int promised(size_t i, const unsigned char **nd, size_t *nl)
{
	*nd = scrub_vault_needle(rules->vault, i, nl);
	return scrub_vault_needle_encoded(rules->vault, i) || *nl >= 23;
}

/* A promised needle in `out`, wraps taken out. */
static size_t find_wrapped(const struct buf *out, size_t *which)
{
	struct buf j = {0};
	size_t at = SIZE_MAX;
	join_wraps(out, &j);
	for (size_t i = 0; i < scrub_vault_needles(rules->vault) && at == SIZE_MAX && j.len; i++) {
		size_t nl;
		const unsigned char *nd;
		const char *hit;
		if (promised(i, &nd, &nl) && (hit = memmem(j.p, j.len, nd, nl)) != NULL) {
			*which = i;
			at = (size_t)(hit - j.p);
		}
	}
	free(j.p);
	return at;
}

static size_t count(const struct buf *j, const unsigned char *p, size_t n)
{
	size_t c = 0;
	const char *q = j->p, *end = j->p + j->len;
	while (q && q < end && (q = memmem(q, (size_t)(end - q), p, n)) != NULL) {
		c++;
		q++;
	}
	return c;
}

/* Whether `live`, wraps taken out, holds a piece of 16 bytes (from an offset
 * that is a multiple of 8) of a promised needle more often than `whole`
 * does: a flush let the start of a wrapped needle out.  (A piece alone is
 * not a needle: the fuzzer writes pieces too, and they pass both.) */
static size_t more_pieces(const struct buf *live, const struct buf *whole, size_t *which)
{
	struct buf jl = {0}, jw = {0};
	size_t at = SIZE_MAX;
	join_wraps(live, &jl);
	join_wraps(whole, &jw);
	for (size_t i = 0; i < scrub_vault_needles(rules->vault) && at == SIZE_MAX && jl.len; i++) {
		size_t nl;
		const unsigned char *nd;
		if (!promised(i, &nd, &nl) || nl < 16)
			continue;
		for (size_t o = 0; o + 16 <= nl && at == SIZE_MAX; o += 8)
			if (count(&jl, nd + o, 16) > count(&jw, nd + o, 16)) {
				*which = i;
				at = o;
			}
	}
	free(jl.p);
	free(jw.p);
	return at;
}

static size_t find_needle(const struct buf *out, size_t *which)
{
	if (out->len == 0)
		return SIZE_MAX;
	for (size_t i = 0; i < scrub_vault_needles(rules->vault); i++) {
		size_t nl;
		const unsigned char *nd = scrub_vault_needle(rules->vault, i, &nl);
		const char *hit = memmem(out->p, out->len, nd, nl);
		if (hit) {
			*which = i;
			return (size_t)(hit - out->p);
		}
	}
	return SIZE_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fillers[] = {"\n", " ", "ordinary build output line 42\n", ".", "x",
	                                      "{\"k\": \"v\"}\n", "\x1b[0m", "=\n"};
	struct buf in = {0}, a = {0};
	if (size < 4)
		return 0;
	unsigned long long seed = data[0] | 0x9e3779b97f4a7c15ULL;
	unsigned sel = (unsigned)data[1] | (unsigned)data[2] << 8;
	const char *fill = fillers[data[3] % (sizeof(fillers) / sizeof(fillers[0]))];
	size_t off = (sel >> 4) % 2048, pad = 0;
	switch (sel & 15) { /* most inputs stay small: padding costs 128-256 KiB of scanning */
	case 1:
		pad = SCRUB_WINDOW - SCRUB_HOLD - off;
		break;
	case 2:
		pad = SCRUB_WINDOW - off;
		break;
	case 3:
		pad = 2 * SCRUB_WINDOW - SCRUB_HOLD - off;
		break;
	}
	for (size_t fl = strlen(fill); in.len + fl <= pad;)
		put(&in, fill, fl);
	for (size_t i = 4; i < size; i++) {
		if (data[i] >= 1 && data[i] <= 6 && i + 1 < size) {
			put_encoded(&in, data[i], keys[data[i + 1] % NKEYS]);
			i++;
		} else {
			put(&in, &data[i], 1);
		}
	}

	/* 2. the stream fed in random chunks ... */
	struct scrub_stream *s = scrub_stream_new(rules, emit, &a);
	FUZZ_ASSERT(s, "stream");
	for (size_t pos = 0; pos < in.len;) {
		size_t max = in.len > 65536 ? 65536 : 64;
		size_t n = 1 + (size_t)(fuzz_rand(&seed) % max);
		if (n > in.len - pos)
			n = in.len - pos;
		FUZZ_ASSERT(scrub_stream_feed(s, in.p + pos, n) == 0, "feed");
		pos += n;
	}
	FUZZ_ASSERT(scrub_stream_finish(s) == 0, "finish");
	unsigned long count_a = scrub_stream_count(s);
	scrub_stream_free(s);

	/* ... equals the one-shot filter */
	size_t blen = 0;
	unsigned long count_b = 0;
	char *b = scrub_buffer(rules, in.p ? in.p : "", in.len, &blen, &count_b);
	FUZZ_ASSERT(b, "scrub_buffer");
	FUZZ_ASSERT(blen == a.len && memcmp(b, a.p ? a.p : "", blen) == 0 && count_a == count_b,
	            "chunked stream (%zu bytes, %lu) differs from scrub_buffer (%zu bytes, %lu)", a.len,
	            count_a, blen, count_b);

	/* 4. a live stream (scrub_stream_flush between random chunks, as a
	 * streamed run does every 100 ms): no vault key survives either.  Its
	 * markers may differ from the one-shot's (a flush can end a redaction
	 * early and a second marker follow), so only the leak is checked. */
	struct buf live = {0};
	struct scrub_stream *ls = scrub_stream_new(rules, emit, &live);
	FUZZ_ASSERT(ls, "live stream");
	for (size_t pos = 0; pos < in.len;) {
		size_t max = in.len > 65536 ? 65536 : 64;
		size_t n = 1 + (size_t)(fuzz_rand(&seed) % max);
		if (n > in.len - pos)
			n = in.len - pos;
		FUZZ_ASSERT(scrub_stream_feed(ls, in.p + pos, n) == 0, "feed (live)");
		if (fuzz_rand(&seed) % 3 == 0)
			FUZZ_ASSERT(scrub_stream_flush(ls) == 0, "flush");
		pos += n;
	}
	FUZZ_ASSERT(scrub_stream_finish(ls) == 0, "finish (live)");
	scrub_stream_free(ls);
	size_t lwhich = 0, lat = find_needle(&live, &lwhich);
	FUZZ_ASSERT(lat == SIZE_MAX, "vault needle %zu in the live stream's output at byte %zu", lwhich, lat);
	lat = find_wrapped(&live, &lwhich);
	FUZZ_ASSERT(lat == SIZE_MAX, "vault needle %zu across a wrap in the live stream's output at byte %zu", lwhich,
	            lat);
	lat = more_pieces(&live, &a, &lwhich);
	FUZZ_ASSERT(lat == SIZE_MAX, "16 bytes from %zu of vault needle %zu in the live stream's output only", lat,
	            lwhich);
	for (size_t k = 0; k < NKEYS; k++)
		FUZZ_ASSERT(live.len == 0 || !memmem(live.p, live.len, keys[k], strlen(keys[k])),
		            "vault key %zu in the live stream's output", k);
	free(live.p);

	/* 1. no vault key, in any form the vault knows, survives */
	size_t which = 0, at = find_needle(&a, &which);
	if (at != SIZE_MAX) {
		size_t nl;
		const unsigned char *nd = scrub_vault_needle(rules->vault, which, &nl);
		FUZZ_ASSERT(0, "vault needle %zu '%.*s' in the output at byte %zu of %zu", which, (int)nl, nd,
		            at, a.len);
	}
	for (size_t k = 0; k < NKEYS; k++)
		FUZZ_ASSERT(blen == 0 || !memmem(b, blen, keys[k], strlen(keys[k])), "vault key %zu in the output", k);

	/* 5. nor across a wrap */
	at = find_wrapped(&a, &which);
	FUZZ_ASSERT(at == SIZE_MAX, "vault needle %zu across a wrap, at byte %zu of the output joined", which, at);

	/* 3. idempotent */
	size_t clen = 0;
	char *c = scrub_buffer(rules, b, blen, &clen, NULL);
	FUZZ_ASSERT(c, "scrub_buffer again");
	if (clen != blen || memcmp(b, c, blen) != 0) {
		size_t d = 0;
		while (d < blen && d < clen && b[d] == c[d])
			d++;
		size_t from = d > 40 ? d - 40 : 0;
		FUZZ_ASSERT(0, "not idempotent at byte %zu:\n once: %.*s\ntwice: %.*s", d,
		            (int)((blen - from) < 120 ? blen - from : 120), b + from,
		            (int)((clen - from) < 120 ? clen - from : 120), c + from);
	}
	free(c);
	free(b);
	free(a.p);
	free(in.p);
	return 0;
}
