/*
 * scrub_wrap.c - encoded vault keys across line breaks (see scrub_wrap.h).
 *
 * A needle that holds a wrap is found in one of three ways, by where it
 * starts relative to its first wrap j (positions in the joined text):
 *
 *   - 23 characters or more before j, if it is a long needle (of
 *     SCRUB_FP_MIN_LEN = 23 bytes or more): the fingerprint index finds it
 *     within the line, as it finds every long needle (its probe every 16
 *     bytes lands in [s, s + 15], and its gram ends by s + 23 <= j), and
 *     reports it cut by the line end; scrub_wrap_cut follows it across.
 *   - less than 23 before j, if it is long: two probes of the same index,
 *     at j - 7 and j + 9.  The index holds a needle's grams at its first 16
 *     offsets; for a start s in [j - 22, j - 7] the probe at j - 7 lies in
 *     [s, s + 15], for s in [j - 6, j - 1] the one at j + 9, and its gram
 *     ends inside the needle (n >= 23).
 *   - any short needle (under 23 bytes): an index of its own holding the
 *     gram at every offset, probed at j - 8, j - 8 + d, ... and j, where d
 *     = min(8, shortest short needle - 7).  If s <= j - 8 the probe at j - 8
 *     lies inside the needle; otherwise the probes from s on are at most d
 *     apart, and [s, s + n - 8] spans n - 7 >= d positions.
 *
 * So the long needles, which most keys give, cost no index of their own (one
 * of every offset of every needle held 185,000 grams for the benchmark's
 * 1,000 keys, 1 MiB of filter whose probes missed the caches: base64 dumps
 * ran at a fifth of their rate), and a wrap costs two probes of a filter
 * that the line scan keeps warm.  Every candidate is compared
 * character by character across the wraps.  Each probe reports only the
 * needles it is the designated probe of, so a needle is reported once here
 * (the fingerprint path may report it too: equal spans merge).
 *
 * Finding wraps (with AVX2): a mask of each 64 bytes' newlines; a block
 * that has one gets its runs of encoding characters (a nibble-table lookup
 * and four shift-and steps), so that a newline with fewer than 16 before it,
 * which is most lines of text, costs no more.  The wraps go to a batch
 * whose four probes each (the two above and the short needles' two) are
 * tested in a loop of their own: their filter loads, which mostly miss the
 * cache, overlap there, and a base64 dump has a wrap every line.
 *
 * Cost, measured on the 2-vCPU build machine with 1,000 vault keys (the
 * benchmark's): about 0.1 ns a byte on prose and source code, 0.4 on a
 * base64 dump, 0.02 on minified JavaScript (docs/bench.md has the filter's
 * rate per class).
 *
 * Trust: needles are the operator's secrets (the vault owns and wipes them;
 * this index keeps pointers and 8-byte grams, wiped on free); the text is
 * hostile, read only inside [0, len).
 */
#include "scrub_wrap.h"
#include "scrub_bloom.h"
#include "scrub_fp.h"
#include "scrub_vault.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOPOS SIZE_MAX
#define GRAM  8u
#define LONG  SCRUB_FP_MIN_LEN

_Static_assert(SCRUB_FP_GRAM == GRAM && SCRUB_FP_STRIDE == 16 && LONG == 23,
	       "the long needles' probes at j - 7 and j + 9 assume the fingerprint index's shape");

struct gram {
	uint64_t gram;
	const unsigned char *p; /* the needle (owned by the vault) */
	uint32_t len;
	uint32_t off; /* where the gram sits in the needle */
};

struct scrub_wrap {
	const struct scrub_fp *fp; /* the long needles */
	struct scrub_bloom bloom;  /* the short needles' grams */
	struct gram *g;		   /* sorted by gram */
	size_t ng, maxspan;
	unsigned step; /* d above */
	int avx2;      /* the CPU has AVX2: scan with scan_avx2 */
};

/* The characters of hex, base64, base64url and base64's padding. */
static const unsigned char enc[256] = {
    ['+'] = 1, ['-'] = 1, ['/'] = 1, ['='] = 1, ['_'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1,
    ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1,
    ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
    ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1,
    ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1,
    ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1,
    ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1,
    ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

static int cmp_gram(const void *a, const void *b)
{
	const struct gram *x = a, *y = b;
	return x->gram < y->gram ? -1 : x->gram > y->gram;
}

void scrub_wrap_free(struct scrub_wrap *w)
{
	if (!w)
		return;
	if (w->g) {
		explicit_bzero(w->g, w->ng * sizeof *w->g); /* grams are secret bytes */
		free(w->g);
	}
	scrub_bloom_free(&w->bloom);
	free(w);
}

size_t scrub_wrap_maxspan(const struct scrub_wrap *w)
{
	return w ? w->maxspan : 0;
}

struct scrub_wrap *scrub_wrap_new(const struct scrub_vault *v, const struct scrub_fp *fp)
{
	struct scrub_wrap *w = calloc(1, sizeof *w);
	size_t n = scrub_vault_needles(v), minlen = SIZE_MAX, maxlen = 0;
	if (!w)
		return NULL;
	w->fp = fp;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		scrub_vault_needle(v, i, &len);
		if (len > maxlen)
			maxlen = len;
		if (!scrub_vault_needle_encoded(v, i) || len < GRAM || len >= LONG)
			continue;
		w->ng += len - GRAM + 1;
		minlen = len < minlen ? len : minlen;
	}
	w->g = calloc(w->ng + 1, sizeof *w->g);
	if (!w->g || scrub_bloom_alloc(&w->bloom, w->ng) < 0)
		goto err_free;
	w->ng = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const unsigned char *p = scrub_vault_needle(v, i, &len);
		if (!scrub_vault_needle_encoded(v, i) || len < GRAM || len >= LONG)
			continue;
		for (size_t off = 0; off + GRAM <= len; off++) {
			uint64_t g = scrub_load64(p + off);
			w->g[w->ng++] = (struct gram){g, p, (uint32_t)len, (uint32_t)off};
			scrub_bloom_add(&w->bloom, g);
		}
	}
	qsort(w->g, w->ng, sizeof *w->g, cmp_gram);
	w->step = minlen - (GRAM - 1) < GRAM ? (unsigned)(minlen - (GRAM - 1)) : GRAM;
	/* A needle's characters and its wraps: every line but the last it
	 * crosses ends in SCRUB_WRAP_LINE of them, and a wrap is at most
	 * "\r\n" and the indent. */
	w->maxspan = maxlen ? maxlen + (maxlen / SCRUB_WRAP_LINE + 1) * (2 + SCRUB_WRAP_INDENT) : 0;
	if (w->maxspan > SCRUB_WRAP_MAX_SPAN)
		w->maxspan = SCRUB_WRAP_MAX_SPAN;
#if defined(__x86_64__) && defined(__GNUC__)
	w->avx2 = __builtin_cpu_supports("avx2");
#endif
	return w;
err_free:
	scrub_wrap_free(w);
	errno = ENOMEM;
	return NULL;
}

/* Whether the SCRUB_WRAP_LINE bytes before raw b are encoding characters
 * (the break rule), one at a time. */
static int line_before(const unsigned char *buf, size_t b)
{
	if (b < SCRUB_WRAP_LINE)
		return 0;
	for (size_t i = b - SCRUB_WRAP_LINE; i < b; i++)
		if (!enc[buf[i]])
			return 0;
	return 1;
}

/* Where the wrap whose line end ('\r' or '\n') is at raw p ends: the
 * encoding character after "\r\n" or "\n" and at most SCRUB_WRAP_INDENT
 * spaces or tabs; NOPOS if there is none.  The rule's other half, the 16
 * characters before p, is the caller's. */
static size_t wrap_end(const unsigned char *buf, size_t len, size_t p)
{
	size_t a, indent = 0;
	if (p < len && buf[p] == '\r')
		p++;
	if (p >= len || buf[p] != '\n')
		return NOPOS;
	for (a = p + 1; a < len && indent < SCRUB_WRAP_INDENT && (buf[a] == ' ' || buf[a] == '\t'); a++)
		indent++;
	return a < len && enc[buf[a]] ? a : NOPOS;
}

/* The raw position of the joined character after the one at raw p (an
 * encoding character): p + 1 if that is one, the end of a wrap there, or
 * NOPOS. */
static size_t next_char(const unsigned char *buf, size_t len, size_t p)
{
	if (p + 1 < len && enc[buf[p + 1]])
		return p + 1;
	return line_before(buf, p + 1) ? wrap_end(buf, len, p + 1) : NOPOS;
}

/* Whether x[0, k) ends at raw b within its line; its raw start in *start. */
static int match_back(const unsigned char *buf, size_t b, const unsigned char *x, size_t k, size_t *start)
{
	if (k > b || memcmp(buf + b - k, x, k) != 0)
		return 0;
	*start = b - k;
	return 1;
}

/* Whether x[0, k) starts at raw a of the joined text; the raw end in *end. */
static int match_fwd(const unsigned char *buf, size_t len, size_t a, const unsigned char *x, size_t k,
		     size_t *end)
{
	for (size_t i = 0; i < k; i++) {
		if (i > 0)
			a = next_char(buf, len, a);
		if (a == NOPOS || buf[a] != x[i])
			return 0;
	}
	*end = a + 1;
	return 1;
}

int scrub_wrap_may_go_on(const unsigned char *buf, size_t len, size_t end)
{
	size_t b = end - 1, a = end, indent = 0;
	if (end == 0 || (buf[b] != '\n' && buf[b] != '\r'))
		return 0;
	if (buf[b] == '\n' && b > 0 && buf[b - 1] == '\r')
		b--;
	if (!line_before(buf, b))
		return 0;
	while (a < len && indent < SCRUB_WRAP_INDENT && (buf[a] == ' ' || buf[a] == '\t')) {
		a++;
		indent++;
	}
	/* nothing yet, an indent so far, or the character that makes it a wrap */
	return a == len || enc[buf[a]];
}

int scrub_wrap_cut(const struct scrub_wrap *w, const unsigned char *buf, size_t len, size_t start,
		   const unsigned char *needle, size_t n, size_t matched, size_t *end)
{
	size_t cut = start + matched, a;
	if (!line_before(buf, cut) || (a = wrap_end(buf, len, cut)) == NOPOS ||
	    !match_fwd(buf, len, a, needle + matched, n - matched, end))
		return 0;
	return *end - start <= w->maxspan;
}

/* Whether one of the 8 bytes of x is '\n' or '\r' (exact per byte: bit 7
 * of ((v & 0x7f..) + 0x7f..) | v is set for each byte of v that is not 0,
 * and no carry crosses a byte). */
static inline int has_line_end(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full, high = 0x8080808080808080ull;
	uint64_t n = x ^ 0x0a0a0a0a0a0a0a0aull, r = x ^ 0x0d0d0d0d0d0d0d0dull;
	return ((((n & low7) + low7) | n) & (((r & low7) + low7) | r) & high) != high;
}

/* Whether one of the 8 bytes of x is '\n' (whether one is zero after the
 * xor: exact as to whether, not as to which). */
static inline int has_newline(uint64_t x)
{
	x ^= 0x0a0a0a0a0a0a0a0aull;
	return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

/* A wrap raw [b, a) and where the joined characters around it are: the 16
 * raw bytes before it (the rule's), and 17 after it: raw bytes when no line
 * end is among them
 * (fwd_raw), else read across the wraps into c.  Grams are loaded from the
 * text itself where they can be: one loaded from a buffer just written
 * stalls on its stores. */
struct around {
	const unsigned char *buf;
	size_t len, b, a;
	unsigned nb, nf; /* how many there are before, after */
	int fwd_raw;
	unsigned char c[24];
};

#define AFTER 17u /* j + 9 and its gram */

static void around_of(struct around *x, const unsigned char *buf, size_t len, size_t b, size_t a)
{
	x->buf = buf;
	x->len = len;
	x->b = b;
	x->a = a;
	x->nb = b < SCRUB_WRAP_LINE ? (unsigned)b : SCRUB_WRAP_LINE;
	x->fwd_raw = a + 24 <= len && !has_line_end(scrub_load64(buf + a)) &&
		     !has_line_end(scrub_load64(buf + a + 8)) &&
		     !has_line_end(scrub_load64(buf + a + 16) << 56);
	if (x->fwd_raw) {
		x->nf = AFTER;
		return;
	}
	memset(x->c, 0, sizeof x->c);
	x->nf = 0;
	for (size_t p = a; x->nf < AFTER && p != NOPOS; p = next_char(buf, len, p))
		x->c[x->nf++] = buf[p];
}

/* The joined characters from the wrap's end on, from offset `from`. */
static uint64_t after8(const struct around *x, unsigned from)
{
	return x->fwd_raw ? scrub_load64(x->buf + x->a + from) : scrub_load64(x->c + from);
}

/* Whether the gram at joined position t (t < 0: before the wrap) is there,
 * and what it is. */
static int have(const struct around *x, int t)
{
	return -t <= (int)x->nb && t + (int)GRAM <= (int)x->nf;
}

static uint64_t gram_at(const struct around *x, int t)
{
	unsigned m = t < 0 ? (unsigned)-t : 0; /* characters before the wrap */
	if (m >= GRAM)
		return scrub_load64(x->buf + x->b - m);
	if (m == 0)
		return after8(x, (unsigned)t);
	return scrub_load64(x->buf + x->b - GRAM) >> (8 * (GRAM - m)) | after8(x, 0) << (8 * m);
}

/* Report the needle p (n bytes) if it starts at joined position s (before
 * the wrap, after it) and is there. */
static int report(const struct around *x, const unsigned char *p, size_t n, int s, size_t maxspan,
		  scrub_wrap_hit_fn hit, void *arg)
{
	size_t k = (size_t)-s, start, end; /* its characters before the wrap */
	if (!match_back(x->buf, x->b, p, k, &start) || !match_fwd(x->buf, x->len, x->a, p + k, n - k, &end) ||
	    end - start > maxspan)
		return 0;
	return hit(arg, start, end);
}

/* The probes of the fingerprint index at a wrap: at joined positions
 * LONG_AT[i], each designated for the needles that start after the one
 * before it and hold the wrap. */
static const int LONG_AT[2] = {-7, 9};

struct long_probes {
	const struct scrub_wrap *w;
	const struct around *x;
	unsigned at[2]; /* which of LONG_AT were probed */
	scrub_wrap_hit_fn hit;
	void *arg;
};

static int long_entry(void *arg, unsigned i, const unsigned char *p, size_t n, size_t off)
{
	const struct long_probes *lp = arg;
	int t = LONG_AT[lp->at[i]], s = t - (int)off;
	if ((lp->at[i] > 0 && s <= LONG_AT[lp->at[i] - 1]) || s >= 0 || s + (int)n <= 0)
		return 0;
	return report(lp->x, p, n, s, lp->w->maxspan, lp->hit, lp->arg);
}

/* The first index entry holding gram g. */
static size_t first_entry(const struct scrub_wrap *w, uint64_t g)
{
	size_t lo = 0, hi = w->ng;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->g[mid].gram < g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The short needles' probe at joined position t (-8 <= t <= 0), designated
 * for those that hold the wrap and have no earlier probe (prev) inside. */
static int short_probe(const struct scrub_wrap *w, const struct around *x, int t, int prev,
		       scrub_wrap_hit_fn hit, void *arg)
{
	uint64_t g;
	int rc;
	if (!have(x, t) ||
	    __builtin_expect(!scrub_bloom_has(&w->bloom, scrub_bloom_hash(g = gram_at(x, t))), 1))
		return 0;
	for (size_t i = first_entry(w, g); i < w->ng && w->g[i].gram == g; i++) {
		int s = t - (int)w->g[i].off;
		if (s < 0 && s + (int)w->g[i].len > 0 && prev < s &&
		    (rc = report(x, w->g[i].p, w->g[i].len, s, w->maxspan, hit, arg)) != 0)
			return rc;
	}
	return 0;
}

/* Every probe at wrap x. */
static int probe_wrap(const struct scrub_wrap *w, const struct around *x, scrub_wrap_hit_fn hit, void *arg)
{
	struct long_probes lp = {w, x, {0, 0}, hit, arg};
	uint64_t grams[2];
	unsigned n = 0;
	int rc;
	for (unsigned i = 0; i < 2; i++)
		if (have(x, LONG_AT[i])) {
			lp.at[n] = i;
			grams[n++] = gram_at(x, LONG_AT[i]);
		}
	if ((rc = scrub_fp_lookup(w->fp, grams, n, long_entry, &lp)) != 0)
		return rc;
	if (!w->ng)
		return 0;
	for (int t = -(int)GRAM, prev = INT_MIN;; prev = t, t = t + (int)w->step < 0 ? t + (int)w->step : 0) {
		if ((rc = short_probe(w, x, t, prev, hit, arg)) != 0 || t == 0)
			return rc;
	}
}

/* Every newline in buf[p, stop), one at a time (buf is len bytes). */
static int scan_scalar(const struct scrub_wrap *w, const unsigned char *buf, size_t len, size_t p,
		       size_t stop, scrub_wrap_hit_fn hit, void *arg)
{
	const unsigned char *q;
	int rc;
	while (p < stop && (q = memchr(buf + p, '\n', stop - p)) != NULL) {
		size_t nl = (size_t)(q - buf), b = nl > 0 && buf[nl - 1] == '\r' ? nl - 1 : nl, a;
		struct around x;
		p = nl + 1;
		if (!line_before(buf, b) || (a = wrap_end(buf, len, b)) == NOPOS)
			continue;
		around_of(&x, buf, len, b, a);
		if ((rc = probe_wrap(w, &x, hit, arg)) != 0)
			return rc;
	}
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The encoding characters by two table lookups, one per nibble: each entry
 * is a set of groups (bit 0: + - /, 1: digits and =, 2: A-O a-o, 3: P-Z
 * p-z, 4: _), and a byte is one when its two sets meet.  A byte from 0x80
 * has a high nibble of 8 or more, whose set is empty. */
#define ENC_LO 10, 14, 14, 14, 14, 14, 14, 14, 14, 14, 12, 5, 4, 7, 4, 21
#define ENC_HI 0, 0, 1, 2, 4, 24, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0

/* The encoding characters of 64 bytes: bit i for byte i. */
__attribute__((target("avx2"))) static inline uint64_t enc64(const unsigned char *p)
{
	const __m256i lo_t = _mm256_setr_epi8(ENC_LO, ENC_LO), hi_t = _mm256_setr_epi8(ENC_HI, ENC_HI);
	const __m256i nib = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	uint64_t m = 0;
	for (int i = 0; i < 2; i++) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * i));
		__m256i e = _mm256_and_si256(
		    _mm256_shuffle_epi8(lo_t, _mm256_and_si256(x, nib)),
		    _mm256_shuffle_epi8(hi_t, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib)));
		m |= (uint64_t)(uint32_t)~_mm256_movemask_epi8(_mm256_cmpeq_epi8(e, zero)) << (32 * i);
	}
	return m;
}

/* Whether the usual wrap raw [b, a) passes neither filter: step 8, no line
 * end in the 17 bytes after it (24 readable).  Its four grams are tested at
 * once, with one branch; a pass, or any other case, goes to probe_wrap.  In
 * a base64 dump every line ends in a wrap. */
static inline int quiet(const struct scrub_wrap *w, const struct scrub_bloom *fpb, const unsigned char *buf,
			size_t len, size_t b, size_t a)
{
	uint64_t f0, f8, f16, back;
	int pass;
	if (b < GRAM || a + 24 > len || (w->ng && w->step != GRAM))
		return 0;
	f0 = scrub_load64(buf + a);
	f8 = scrub_load64(buf + a + 8);
	f16 = scrub_load64(buf + a + 16);
	/* a '\n' in the 18 bytes: a line end among the 17 (a "\r\n" whose '\r'
	 * is the 17th has its '\n' next); a lone '\r' only fails a probe */
	if (has_newline(f0) | has_newline(f8) | has_newline(f16 << 48))
		return 0;
	back = scrub_load64(buf + b - GRAM);
	pass = scrub_bloom_has(fpb, scrub_bloom_hash(back >> 8 | f0 << 56)) |
	       scrub_bloom_has(fpb, scrub_bloom_hash(f8 >> 8 | f16 << 56));
	if (w->ng)
		pass |= scrub_bloom_has(&w->bloom, scrub_bloom_hash(back)) |
			scrub_bloom_has(&w->bloom, scrub_bloom_hash(f0));
	return !pass;
}

/* Which bytes of a block of 64 end a run of 1, 2, 4, 8 and 16 encoding
 * characters.  The next block uses only the top bits, which depend on this
 * block alone. */
struct runs {
	uint64_t e1, e2, e4, e8, e16;
};

__attribute__((target("avx2"))) static inline struct runs runs_of(const unsigned char *p,
								  const struct runs *prev)
{
	struct runs r;
	r.e1 = enc64(p);
	r.e2 = r.e1 & (r.e1 << 1 | prev->e1 >> 63);
	r.e4 = r.e2 & (r.e2 << 2 | prev->e2 >> 62);
	r.e8 = r.e4 & (r.e4 << 4 | prev->e4 >> 60);
	r.e16 = r.e8 & (r.e8 << 8 | prev->e8 >> 56);
	return r;
}

/* Wraps found and not yet tested, at most BATCH: found first, then tested
 * in a loop of their own, whose filter loads (which mostly miss the cache)
 * overlap, with no branch between that the blocks' irregular newlines
 * would make the CPU mispredict.  One at a time, a wrap cost 35 ns. */
#define BATCH 32u

struct batch {
	size_t b[BATCH], a[BATCH];
	unsigned n;
};

static int test_batch(const struct scrub_wrap *w, const struct scrub_bloom *fpb, const unsigned char *buf,
		      size_t len, struct batch *q, scrub_wrap_hit_fn hit, void *arg)
{
	uint32_t loud = 0;
	int rc;
	for (unsigned i = 0; i < q->n; i++)
		loud |= (uint32_t)!quiet(w, fpb, buf, len, q->b[i], q->a[i]) << i;
	for (; loud; loud &= loud - 1) {
		unsigned i = (unsigned)__builtin_ctz(loud);
		struct around xa;
		around_of(&xa, buf, len, q->b[i], q->a[i]);
		if ((rc = probe_wrap(w, &xa, hit, arg)) != 0)
			return rc;
	}
	q->n = 0;
	return 0;
}

/* scrub_wrap_scan with AVX2: 64 bytes a step.  A block with a newline gets
 * its runs of encoding characters (and the block before it its own); a
 * newline right after 16 of them (plain), or after 16 and a '\r' (cr), is
 * checked with wrap_end, and the wraps go to a batch.  The runs are exact,
 * so that no other check of the 16 is needed. */
__attribute__((target("avx2"))) static int scan_avx2(const struct scrub_wrap *w, const unsigned char *buf,
						     size_t len, scrub_wrap_hit_fn hit, void *arg)
{
	const __m256i nl = _mm256_set1_epi8('\n');
	const struct scrub_bloom *fpb = scrub_fp_bloom(w->fp);
	const struct runs none = {0, 0, 0, 0, 0};
	struct runs prev = none, cur;
	struct batch q;
	size_t p = 0, have = 0; /* prev holds the runs of the block before `have` */
	int rc;
	q.n = 0;
	for (; p + 64 <= len; p += 64) {
		__m256i x =
		    _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(buf + p)), nl);
		__m256i y =
		    _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(buf + p + 32)), nl);
		uint64_t n, m, plain, cr;
		if (_mm256_testz_si256(_mm256_or_si256(x, y), _mm256_or_si256(x, y)))
			continue;
		n = (uint32_t)_mm256_movemask_epi8(x) | (uint64_t)(uint32_t)_mm256_movemask_epi8(y) << 32;
		if (have != p)
			prev = runs_of(buf + p - 64, &none); /* have starts at 0: here p >= 64 */
		cur = runs_of(buf + p, &prev);
		plain = n & (cur.e16 << 1 | prev.e16 >> 63); /* 16 end just before */
		cr = n & (cur.e16 << 2 | prev.e16 >> 62);    /* ... or one before */
		prev = cur;
		have = p + 64;
		for (m = plain | cr; m; m &= m - 1) {
			unsigned k = (unsigned)__builtin_ctzll(m);
			size_t at = p + k, b = at - (buf[at - 1] == '\r'), a;
			if (!((b == at ? plain : cr) >> k & 1) || (a = wrap_end(buf, len, b)) == NOPOS)
				continue;
			q.b[q.n] = b;
			q.a[q.n] = a;
			if (++q.n == BATCH && (rc = test_batch(w, fpb, buf, len, &q, hit, arg)) != 0)
				return rc;
		}
	}
	if ((rc = test_batch(w, fpb, buf, len, &q, hit, arg)) != 0)
		return rc;
	return scan_scalar(w, buf, len, p, len, hit, arg);
}
#endif

int scrub_wrap_scan(const struct scrub_wrap *w, const unsigned char *buf, size_t len, scrub_wrap_hit_fn hit,
		    void *arg)
{
	if (!w->maxspan)
		return 0; /* no vault needle at all */
#if defined(__x86_64__) && defined(__GNUC__)
	if (w->avx2)
		return scan_avx2(w, buf, len, hit, arg);
#endif
	return scan_scalar(w, buf, len, 0, len, hit, arg);
}

int scrub_wrap_scan_portable(const struct scrub_wrap *w, const unsigned char *buf, size_t len,
			     scrub_wrap_hit_fn hit, void *arg)
{
	return scan_scalar(w, buf, len, 0, len, hit, arg);
}
