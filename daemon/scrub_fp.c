/*
 * scrub_fp.c - vault-key fingerprints (see scrub_fp.h): a blocked Bloom
 * filter of 8-byte grams taken at the first SCRUB_FP_STRIDE offsets of every
 * long needle, probed every SCRUB_FP_STRIDE bytes of the text; a probe that
 * passes looks its gram up in a hash table and compares the needles that
 * hold it at that offset byte for byte.
 *
 * Cost: one probe per 8 text bytes, two multiplies and one 64-bit word of a
 * filter of at most a few hundred KiB, so the text is read at memory speed.
 * Three bits per gram in one word keep the false-positive rate near 1e-3 at
 * 1,000 keys, so the table behind it is rarely touched.
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
#include "scrub_vault.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define K1 0x9e3779b97f4a7c15ull /* odd constants with well-mixed top bits */
#define K2 0xc2b2ae3d27d4eb4full

struct entry {
	uint64_t gram;
	const unsigned char *p; /* the needle (owned by the vault) */
	uint32_t len;
	uint32_t off; /* where the gram sits in the needle */
};

struct slot { /* open addressing over distinct grams; count 0 = empty */
	uint64_t gram;
	uint32_t first, count; /* run of entries holding this gram */
};

struct scrub_fp {
	uint64_t *bloom;
	unsigned wshift; /* 64 - log2(words) */
	struct slot *slots;
	size_t smask;
	struct entry *ent;
	size_t nent, nneedles;
};

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t g;
	memcpy(&g, p, 8); /* one unaligned load; byte order is the same at build and scan */
	return g;
}

/* Three bits of one word, from the top bits of a second product (the top bits
 * of a product depend on every bit of the gram). */
static const uint64_t bit[64] = {
#define B4(i) 1ull << (i), 1ull << (i + 1), 1ull << (i + 2), 1ull << (i + 3)
	B4(0), B4(4), B4(8), B4(12), B4(16), B4(20), B4(24), B4(28),
	B4(32), B4(36), B4(40), B4(44), B4(48), B4(52), B4(56), B4(60),
#undef B4
};

static inline uint64_t bloom_mask(uint64_t g)
{
	uint64_t h = g * K2;
	return bit[h >> 58] | bit[(h >> 52) & 63];
}

static inline size_t slot_of(uint64_t g, size_t mask)
{
	return (size_t)((g * K2) >> 20) & mask;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->gram != y->gram)
		return x->gram < y->gram ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->p, y->p, x->len);
}

void scrub_fp_free(struct scrub_fp *fp)
{
	if (!fp)
		return;
	if (fp->ent) {
		explicit_bzero(fp->ent, fp->nent * sizeof *fp->ent); /* grams are secret bytes */
		free(fp->ent);
	}
	if (fp->slots) {
		explicit_bzero(fp->slots, (fp->smask + 1) * sizeof *fp->slots);
		free(fp->slots);
	}
	free(fp->bloom);
	free(fp);
}

static unsigned long nverify;
unsigned long scrub_fp_nverify(void);
unsigned long scrub_fp_nverify(void) { return nverify; }
size_t scrub_fp_needles(const struct scrub_fp *fp)
{
	return fp ? fp->nneedles : 0;
}

struct scrub_fp *scrub_fp_new(const struct scrub_vault *v)
{
	struct scrub_fp *fp = calloc(1, sizeof *fp);
	size_t n = scrub_vault_needles(v), k = 0, words = 1024, slots = 16, o;
	if (!fp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		scrub_vault_needle(v, i, &len);
		fp->nneedles += len >= SCRUB_FP_MIN_LEN;
	}
	fp->ent = calloc(fp->nneedles * SCRUB_FP_STRIDE + 1, sizeof *fp->ent);
	if (!fp->ent)
		goto err_free;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const unsigned char *p = scrub_vault_needle(v, i, &len);
		if (len < SCRUB_FP_MIN_LEN)
			continue;
		for (unsigned off = 0; off < SCRUB_FP_STRIDE; off++)
			fp->ent[k++] = (struct entry){load64(p + off), p, (uint32_t)len, off};
	}
	/* Sort by gram and drop exact duplicates (a key listed twice, hex of a
	 * digit-only value in both cases): one report per occurrence is enough. */
	qsort(fp->ent, k, sizeof *fp->ent, cmp_entry);
	for (size_t i = 0; i < k; i++)
		if (o = fp->nent, o == 0 || cmp_entry(&fp->ent[o - 1], &fp->ent[i]) != 0)
			fp->ent[fp->nent++] = fp->ent[i];
	/* About two grams per filter word: with three bits each, a random gram
	 * passes with probability ~ (6/64)^3 < 1e-3. */
	while (words < fp->nent / 2)
		words *= 2;
	while (slots < 2 * fp->nent)
		slots *= 2;
	fp->wshift = 64;
	for (size_t w = words; w > 1; w /= 2)
		fp->wshift--;
	fp->bloom = calloc(words, sizeof *fp->bloom);
	fp->slots = calloc(slots, sizeof *fp->slots);
	if (!fp->bloom || !fp->slots)
		goto err_free;
	fp->smask = slots - 1;
	for (size_t i = 0; i < fp->nent; i++) {
		uint64_t g = fp->ent[i].gram;
		size_t s = slot_of(g, fp->smask);
		{ uint64_t h = g * K1; fp->bloom[h >> fp->wshift] |= bit[(h >> 20) & 63] | bit[(h >> 26) & 63]; }
		while (fp->slots[s].count && fp->slots[s].gram != g)
			s = (s + 1) & fp->smask;
		if (!fp->slots[s].count) {
			fp->slots[s].gram = g;
			fp->slots[s].first = (uint32_t)i;
		}
		fp->slots[s].count++; /* entries of one gram are adjacent after the sort */
	}
	return fp;
err_free:
	scrub_fp_free(fp);
	errno = ENOMEM;
	return NULL;
}

/* A probe at `pos` passed the filter: confirm every needle holding its gram. */
static int verify(const struct scrub_fp *fp, const unsigned char *buf, size_t len, size_t pos, uint64_t g,
                  scrub_fp_hit_fn hit, void *arg)
{
	size_t s = slot_of(g, fp->smask);
	nverify++;
	while (fp->slots[s].count && fp->slots[s].gram != g)
		s = (s + 1) & fp->smask;
	for (uint32_t i = 0; i < fp->slots[s].count; i++) {
		const struct entry *e = &fp->ent[fp->slots[s].first + i];
		size_t a;
		int rc;
		if (pos < e->off)
			continue;
		a = pos - e->off;
		if (e->len > len - a || memcmp(buf + a, e->p, e->len) != 0)
			continue;
		if ((rc = hit(arg, a, e->len)) != 0)
			return rc;
	}
	return 0;
}

int scrub_fp_scan(const struct scrub_fp *fp, const unsigned char *buf, size_t len, scrub_fp_hit_fn hit,
                  void *arg)
{
	const uint64_t *bloom = fp->bloom;
	unsigned sh = fp->wshift;
	size_t p = 0;
	int rc;
	if (!fp->nent || len < SCRUB_FP_GRAM)
		return 0;
	for (; p + SCRUB_FP_GRAM <= len; p += SCRUB_FP_STRIDE) {
		uint64_t g = load64(buf + p), h = g * K1, m = bit[(h >> 20) & 63] | bit[(h >> 26) & 63];
		if (__builtin_expect((bloom[h >> sh] & m) == m, 0) && (rc = verify(fp, buf, len, p, g, hit, arg)))
			return rc;
	}
	return 0;
}
