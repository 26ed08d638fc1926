/*
 * scrub_bloom.h - the blocked Bloom filter of 8-byte grams that both
 * vault-key indexes probe (scrub_fp.c: needles within a line, scrub_wrap.c:
 * needles a tool wrapped across lines).  Internal to the scrub module.
 *
 * A gram's hash is one 64-bit multiply by an odd constant: the top bits of
 * the product depend on every byte of the gram and pick the filter word;
 * the next two groups of six pick its two bits.  About two grams per word
 * keep a random gram's pass rate near (4/64)^2 = 4e-3.
 */
#ifndef SHARNESS_SCRUB_BLOOM_H
#define SHARNESS_SCRUB_BLOOM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SCRUB_BLOOM_K 0x9fb21c651e98df25ull /* odd 64-bit multiplier (moremur) */

struct scrub_bloom {
	uint64_t *word;
	size_t size;	 /* bytes mapped */
	unsigned wshift; /* 64 - log2(words) */
};

static inline uint64_t scrub_load64(const unsigned char *p)
{
	uint64_t g;
	memcpy(&g, p, 8); /* one unaligned load; byte order is the same at build and scan */
	return g;
}

static inline uint64_t scrub_bloom_hash(uint64_t g)
{
	return g * SCRUB_BLOOM_K;
}

static inline uint64_t scrub_bloom_index(uint64_t h, unsigned wshift)
{
	return h >> wshift;
}

static inline uint64_t scrub_bloom_bits(uint64_t h, unsigned wshift)
{
	return (1ull << ((h >> (wshift - 6)) & 63)) | (1ull << ((h >> (wshift - 12)) & 63));
}

/* Bit 0: whether the filter word w holds both bits of h (the others are
 * garbage). */
static inline uint64_t scrub_bloom_pair(uint64_t w, uint64_t h, unsigned wshift)
{
	return (w >> ((h >> (wshift - 6)) & 63)) & (w >> ((h >> (wshift - 12)) & 63));
}

/* Whether the filter may hold the gram of hash h. */
static inline int scrub_bloom_has(const struct scrub_bloom *b, uint64_t h)
{
	return (int)(scrub_bloom_pair(b->word[scrub_bloom_index(h, b->wshift)], h, b->wshift) & 1);
}

static inline void scrub_bloom_add(struct scrub_bloom *b, uint64_t gram)
{
	uint64_t h = scrub_bloom_hash(gram);
	b->word[scrub_bloom_index(h, b->wshift)] |= scrub_bloom_bits(h, b->wshift);
}

/* A zeroed filter sized for `grams` grams (about two per word, 1,024
 * words at least).  0, or -1 on allocation failure. */
int scrub_bloom_alloc(struct scrub_bloom *b, size_t grams);
void scrub_bloom_free(struct scrub_bloom *b);

#endif
