/*
 * scrub_fp.c - vault-key fingerprints (see scrub_fp.h): a blocked Bloom
 * filter of 8-byte grams taken at the first SCRUB_FP_STRIDE offsets of every
 * long needle, probed every SCRUB_FP_STRIDE bytes of the text; a probe that
 * passes looks its gram up in a hash table and compares the needles that
 * hold it at that offset byte for byte.
 *
 * Cost: one probe per 16 text bytes: a load, one multiply and one 64-bit
 * word of a filter of 512 KiB at 1,000 keys (measured 0.17-0.22 ns per byte
 * on the 2-vCPU build machine, hot window; the filter loads, which miss L2,
 * are most of it).  Two bits per gram, two grams per word, keep the
 * false-positive rate near 4e-3, so the table behind it is rarely touched.
 * (Three bits, four grams per word, a filter of 256 KiB: 2-4% slower.)
 *
 * Correctness: a needle occurrence [a, a + n) with n >= SCRUB_FP_MIN_LEN
 * contains the probe position p = a rounded up to a multiple of the stride,
 * with p - a < stride and p + 8 <= a + n; the gram at offset p - a of the
 * needle is in the index, so the occurrence is found.  Every candidate is
 * confirmed by memcmp, so a hash collision costs time, never a false match.
 *
 * Trust: needles are the operator's secrets (the vault owns and wipes them;
 * this index keeps pointers and 8-byte grams, wiped on free); the text is
 * hostile, read only inside [0, len).
 */
#include "scrub_fp.h"
#include "scrub_bloom.h"
#include "scrub_cpu.h"
#include "scrub_vault.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define K3 0xc2b2ae3d27d4eb4full /* odd 64-bit multiplier (murmur3) for the table */

#define NONE UINT32_MAX

struct entry {
	uint64_t gram;
	const unsigned char *p; /* the needle (owned by the vault) */
	uint32_t len;
	uint32_t off;  /* where the gram sits in the needle */
	uint32_t next; /* the next entry with the same gram, or NONE */
};

struct slot { /* open addressing over distinct grams */
	uint64_t gram;
	uint32_t first; /* its first entry; NONE = empty slot */
};

struct scrub_fp {
	struct scrub_bloom bloom;
	struct slot *slots;
	size_t smask;
	struct entry *ent;
	size_t nent, cap, nneedles;
	int bmi2; /* the CPU has BMI2: scan with scan_bmi2 */
	int avx512; /* scrub_avx512_usable(): scan with scan_avx512 */
};

static inline size_t slot_of(uint64_t g, size_t mask)
{
	return (size_t)((g * K3) >> 20) & mask;
}

void scrub_fp_free(struct scrub_fp *fp)
{
	if (!fp)
		return;
	if (fp->ent) {
		explicit_bzero(fp->ent, fp->cap * sizeof *fp->ent); /* grams are secret bytes */
		free(fp->ent);
	}
	if (fp->slots) {
		explicit_bzero(fp->slots, (fp->smask + 1) * sizeof *fp->slots);
		free(fp->slots);
	}
	scrub_bloom_free(&fp->bloom);
	free(fp);
}

size_t scrub_fp_needles(const struct scrub_fp *fp)
{
	return fp ? fp->nneedles : 0;
}

/* Index the gram at `off` of needle p, unless the same needle already holds
 * it there (a key listed twice, the hex of a digit-only value in both
 * cases): one report per occurrence is enough. */
static void add(struct scrub_fp *fp, const unsigned char *p, uint32_t len, uint32_t off)
{
	uint64_t g = scrub_load64(p + off);
	size_t s = slot_of(g, fp->smask);
	struct entry *e;
	while (fp->slots[s].first != NONE && fp->ent[fp->slots[s].first].gram != g)
		s = (s + 1) & fp->smask;
	for (uint32_t i = fp->slots[s].first; i != NONE; i = fp->ent[i].next)
		if (fp->ent[i].off == off && fp->ent[i].len == len && memcmp(fp->ent[i].p, p, len) == 0)
			return;
	e = &fp->ent[fp->nent];
	*e = (struct entry){g, p, len, off, fp->slots[s].first};
	fp->slots[s].gram = g;
	fp->slots[s].first = (uint32_t)fp->nent++;
	scrub_bloom_add(&fp->bloom, g);
}

struct scrub_fp *scrub_fp_new(const struct scrub_vault *v)
{
	struct scrub_fp *fp = calloc(1, sizeof *fp);
	size_t n = scrub_vault_needles(v), slots = 16;
	if (!fp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		scrub_vault_needle(v, i, &len);
		fp->nneedles += len >= SCRUB_FP_MIN_LEN;
	}
	fp->cap = fp->nneedles * SCRUB_FP_STRIDE + 1;
	fp->ent = calloc(fp->cap, sizeof *fp->ent);
	if (!fp->ent)
		goto err_free;
	/* About two grams per filter word (scrub_bloom.h).  (One gram per
	 * word, twice the size, measured no faster: the probes are bound by
	 * their instructions, not by the cache.) */
	while (slots < 2 * fp->nneedles * SCRUB_FP_STRIDE)
		slots *= 2;
	if (scrub_bloom_alloc(&fp->bloom, fp->nneedles * SCRUB_FP_STRIDE) < 0)
		goto err_free;
	fp->slots = malloc(slots * sizeof *fp->slots);
	if (!fp->slots)
		goto err_free;
	fp->smask = slots - 1;
	for (size_t i = 0; i < slots; i++)
		fp->slots[i].first = NONE;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const unsigned char *p = scrub_vault_needle(v, i, &len);
		if (len < SCRUB_FP_MIN_LEN)
			continue;
		for (uint32_t off = 0; off < SCRUB_FP_STRIDE; off++)
			add(fp, p, (uint32_t)len, off);
	}
#if defined(__x86_64__) && defined(__GNUC__)
	fp->bmi2 = __builtin_cpu_supports("bmi2");
	fp->avx512 = scrub_avx512_usable();
#endif
	return fp;
err_free:
	scrub_fp_free(fp);
	errno = ENOMEM;
	return NULL;
}

/* The slot of gram g's entries (its `first` is NONE when none). */
static const struct slot *slot_for(const struct scrub_fp *fp, uint64_t g)
{
	size_t s = slot_of(g, fp->smask);
	while (fp->slots[s].first != NONE && fp->slots[s].gram != g)
		s = (s + 1) & fp->smask;
	return &fp->slots[s];
}

/* How many leading bytes of x and y, n long, agree. */
static size_t agree(const unsigned char *x, const unsigned char *y, size_t n)
{
	size_t i = 0;
	while (i < n && x[i] == y[i])
		i++;
	return i;
}

/* A probe at `pos` passed the filter: confirm every needle holding its gram,
 * whole or cut by a line end after the gram (scrub_fp_hit_fn). */
static int verify(const struct scrub_fp *fp, const unsigned char *buf, size_t len, size_t pos, uint64_t g,
                  scrub_fp_hit_fn hit, void *arg)
{
	for (uint32_t i = slot_for(fp, g)->first; i != NONE; i = fp->ent[i].next) {
		const struct entry *e = &fp->ent[i];
		size_t a, n;
		int rc;
		if (pos < e->off)
			continue;
		a = pos - e->off;
		n = agree(buf + a, e->p, e->len < len - a ? e->len : len - a);
		if (n < e->len && (n < e->off + SCRUB_FP_GRAM || n == len - a || (buf[a + n] != '\n' && buf[a + n] != '\r')))
			continue;
		if ((rc = hit(arg, a, e->p, e->len, n)) != 0)
			return rc;
	}
	return 0;
}

const struct scrub_bloom *scrub_fp_bloom(const struct scrub_fp *fp)
{
	return &fp->bloom;
}

int scrub_fp_lookup(const struct scrub_fp *fp, const uint64_t *grams, unsigned n, scrub_fp_entry_fn fn,
                    void *arg)
{
	unsigned pass = 0;
	int rc;
	if (!fp->nent)
		return 0;
	/* every filter word first: their loads overlap */
	for (unsigned i = 0; i < n; i++)
		pass |= (unsigned)scrub_bloom_has(&fp->bloom, scrub_bloom_hash(grams[i])) << i;
	for (; __builtin_expect(pass != 0, 0); pass &= pass - 1) {
		unsigned i = (unsigned)__builtin_ctz(pass);
		for (uint32_t e = slot_for(fp, grams[i])->first; e != NONE; e = fp->ent[e].next)
			if ((rc = fn(arg, i, fp->ent[e].p, fp->ent[e].len, fp->ent[e].off)) != 0)
				return rc;
	}
	return 0;
}

/* Probes from p on, one per stride, before `stop`; returns 0 or the
 * callback's value. */
static int scan_simple(const struct scrub_fp *fp, const unsigned char *buf, size_t len, size_t p, size_t stop,
                       scrub_fp_hit_fn hit, void *arg)
{
	int rc;
	for (; p < stop && p + SCRUB_FP_GRAM <= len; p += SCRUB_FP_STRIDE) {
		uint64_t g = scrub_load64(buf + p), h = scrub_bloom_hash(g);
		if (__builtin_expect(scrub_bloom_has(&fp->bloom, h), 0) &&
		    (rc = verify(fp, buf, len, p, g, hit, arg)) != 0)
			return rc;
	}
	return 0;
}

/* Four probes per 64 bytes with one branch for all four: the probes are
 * independent, so the core overlaps their multiplies and filter loads, and
 * when one passes (~0.4% of blocks) scan_simple probes the four again to
 * find which.  Measured on the 2-vCPU build machine (AMD EPYC of the first
 * Zen generation: its AVX2 gather is slow; hot 128 KiB windows): 0.23-0.27
 * ns per byte with the former AVX2 gather (two thirds of that loop's
 * samples sat on the gather) or the scalar two-multiply hash one probe a
 * branch; 0.17-0.22 with this, and 0.13-0.16 with one test for the four
 * results instead of a bit mask of them. */
static inline __attribute__((always_inline)) int scan_fast(const struct scrub_fp *fp, const unsigned char *buf,
                                                           size_t len, scrub_fp_hit_fn hit, void *arg)
{
	const uint64_t *bloom = fp->bloom.word;
	const unsigned ws = fp->bloom.wshift;
	size_t p = 0;
	int rc;
	_Static_assert(SCRUB_FP_STRIDE == 16, "scan_fast probes every 16th byte");
	for (; p + 3 * SCRUB_FP_STRIDE + SCRUB_FP_GRAM <= len; p += 4 * SCRUB_FP_STRIDE) {
		uint64_t h0 = scrub_bloom_hash(scrub_load64(buf + p)), h1 = scrub_bloom_hash(scrub_load64(buf + p + 16));
		uint64_t h2 = scrub_bloom_hash(scrub_load64(buf + p + 32)), h3 = scrub_bloom_hash(scrub_load64(buf + p + 48));
		/* bit 0 of each term: that probe passed; one test for all four */
		if (__builtin_expect((scrub_bloom_pair(bloom[scrub_bloom_index(h0, ws)], h0, ws) |
		                      scrub_bloom_pair(bloom[scrub_bloom_index(h1, ws)], h1, ws) |
		                      scrub_bloom_pair(bloom[scrub_bloom_index(h2, ws)], h2, ws) |
		                      scrub_bloom_pair(bloom[scrub_bloom_index(h3, ws)], h3, ws)) &
		                         1,
		                     0) &&
		    (rc = scan_simple(fp, buf, len, p, p + 4 * SCRUB_FP_STRIDE, hit, arg)) != 0)
			return rc;
	}
	return scan_simple(fp, buf, len, p, len, hit, arg);
}

static int scan_base(const struct scrub_fp *fp, const unsigned char *buf, size_t len, scrub_fp_hit_fn hit,
                     void *arg)
{
	return scan_fast(fp, buf, len, hit, arg);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same loop compiled for BMI2: its shifts by a register (shrx) need no
 * CL and set no flags, so the 12 shifts of four probes no longer queue on
 * one register.  Measured on the build machine: the fingerprint pass 8-10%
 * faster (0.17 -> 0.15 ns per byte on source code). */
__attribute__((target("bmi2"))) static int scan_bmi2(const struct scrub_fp *fp, const unsigned char *buf,
                                                     size_t len, scrub_fp_hit_fn hit, void *arg)
{
	return scan_fast(fp, buf, len, hit, arg);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Eight probes per 128 bytes in vector registers, where the CPU has AVX-512
 * (DQ for the 64-bit multiply): one permute picks the eight grams out of two
 * loads, one multiply hashes them, one gather loads their filter words.  The
 * results of a block of BLOCK steps are collected first and the few that
 * passed are probed again one by one after, so that no call inside the
 * vector loop makes the compiler spill its registers. */
#define BLOCK 32u

__attribute__((target("avx512f,avx512dq"))) static size_t masks_avx512(const struct scrub_fp *fp,
								       const unsigned char *buf, size_t p,
								       size_t len, uint8_t *m, size_t *nm)
{
	const __m512i pick = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14),
		      k4 = _mm512_set1_epi64((long long)SCRUB_BLOOM_K);
	const __m512i six = _mm512_set1_epi64(63), one = _mm512_set1_epi64(1);
	const unsigned wshift = fp->bloom.wshift;
	const __m128i ws = _mm_cvtsi32_si128((int)wshift), ws6 = _mm_cvtsi32_si128((int)wshift - 6);
	const __m128i ws12 = _mm_cvtsi32_si128((int)wshift - 12);
	const long long *bloom = (const long long *)(const void *)fp->bloom.word;
	size_t k = 0;
	_Static_assert(SCRUB_FP_STRIDE == 16, "masks_avx512 probes every 16th byte");
	/* the last probe's gram ends at p + 120; both loads end at p + 128 */
	for (; k < BLOCK && p + 128 <= len; k++, p += 128) {
		__m512i g = _mm512_permutex2var_epi64(_mm512_loadu_si512((const void *)(buf + p)), pick,
						      _mm512_loadu_si512((const void *)(buf + p + 64)));
		__m512i h = _mm512_mullo_epi64(g, k4);
		__m512i w = _mm512_i64gather_epi64(_mm512_srl_epi64(h, ws), bloom, 8);
		__m512i b1 = _mm512_and_si512(_mm512_srl_epi64(h, ws6), six);
		__m512i b2 = _mm512_and_si512(_mm512_srl_epi64(h, ws12), six);
		__m512i both = _mm512_and_si512(_mm512_srlv_epi64(w, b1), _mm512_srlv_epi64(w, b2));
		m[k] = (uint8_t)_mm512_test_epi64_mask(both, one);
	}
	*nm = k;
	return p;
}

static int scan_avx512(const struct scrub_fp *fp, const unsigned char *buf, size_t len, scrub_fp_hit_fn hit,
		       void *arg)
{
	uint8_t m[BLOCK];
	size_t p = 0, nm;
	int rc;
	for (;;) {
		size_t base = p;
		p = masks_avx512(fp, buf, p, len, m, &nm);
		for (size_t k = 0; k < nm; k++)
			for (unsigned bits = m[k]; bits; bits &= bits - 1) {
				size_t at = base + 128 * k + SCRUB_FP_STRIDE * (size_t)__builtin_ctz(bits);
				if ((rc = scan_simple(fp, buf, len, at, at + 1, hit, arg)) != 0)
					return rc;
			}
		if (nm < BLOCK)
			return scan_simple(fp, buf, len, p, len, hit, arg);
	}
}
#endif

int scrub_fp_scan(const struct scrub_fp *fp, const unsigned char *buf, size_t len, scrub_fp_hit_fn hit,
                  void *arg)
{
	if (!fp->nent || len < SCRUB_FP_GRAM)
		return 0;
#if defined(__x86_64__) && defined(__GNUC__)
	if (fp->avx512)
		return scan_avx512(fp, buf, len, hit, arg);
	if (fp->bmi2)
		return scan_bmi2(fp, buf, len, hit, arg);
#endif
	return scan_base(fp, buf, len, hit, arg);
}

int scrub_fp_scan_portable(const struct scrub_fp *fp, const unsigned char *buf, size_t len,
                           scrub_fp_hit_fn hit, void *arg)
{
	if (!fp->nent || len < SCRUB_FP_GRAM)
		return 0;
	return scan_simple(fp, buf, len, 0, len, hit, arg);
}
