/*
 * scrub_fp.c - vault-key fingerprints (see scrub_fp.h): a blocked Bloom
 * filter of 8-byte grams taken at the first SCRUB_FP_STRIDE offsets of every
 * long needle, probed every SCRUB_FP_STRIDE bytes of the text; a probe that
 * passes looks its gram up in a hash table and compares the needles that
 * hold it at that offset byte for byte.
 *
 * Cost: one probe per 16 text bytes: a load, two multiplies and one 64-bit
 * word of a filter of 512 KiB at 1,000 keys (measured 0.20-0.24 ns per byte
 * on the 2-vCPU build machine, hot in cache).  Two bits per gram, two grams per word, keep
 * the false-positive rate near 4e-3, so the table behind it is rarely
 * touched.
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
#include <sys/mman.h>

#define K1 0x9e3779b1u /* odd 32-bit multipliers (golden ratio, murmur3) */
#define K2 0x85ebca77u
#define K3 0xc2b2ae3d27d4eb4full

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
	uint64_t *bloom;
	size_t bloom_size; /* bytes mapped */
	unsigned wshift; /* 32 - log2(words) */
	struct slot *slots;
	size_t smask;
	struct entry *ent;
	size_t nent, cap, nneedles;
	int avx2; /* the CPU has AVX2: use scan_avx2 */
};

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t g;
	memcpy(&g, p, 8); /* one unaligned load; byte order is the same at build and scan */
	return g;
}

/* A gram's hash in two 32x32->64-bit multiplies (what SSE2/AVX2 do in one
 * instruction per four lanes): the low half times K1, mod 2^32, xored with
 * the high half, times K2.  The low 32 bits of that product are a
 * multiplicative hash of all 8 bytes whose top bits pick the filter word;
 * the top 12 bits of the 64-bit product pick the two bits.  (The high half
 * of a product of raw text alone would not do: it follows the operand's top
 * byte, and text bytes vary little there.) */
static inline uint64_t hash(uint64_t g)
{
	uint32_t u = (uint32_t)((uint64_t)(uint32_t)g * K1) ^ (uint32_t)(g >> 32);
	return (uint64_t)u * K2;
}

static inline uint64_t bloom_word(uint64_t h, unsigned wshift)
{
	return (uint32_t)h >> wshift;
}

static inline uint64_t bloom_bits(uint64_t h)
{
	return (1ull << (h >> 58)) | (1ull << ((h >> 52) & 63));
}

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
	if (fp->bloom)
		munmap(fp->bloom, fp->bloom_size);
	free(fp);
}

size_t scrub_fp_needles(const struct scrub_fp *fp)
{
	return fp ? fp->nneedles : 0;
}

/* The filter is probed at random every 8 bytes: in 4 KiB pages, a filter of
 * 512 KiB misses the TLB on almost every probe (measured: 3 times slower
 * than the probe itself).  In one 2 MiB page it never does, so a filter of
 * 64 KiB or more is mapped 2 MiB-aligned and offered to transparent huge
 * pages; if the kernel declines, it is still correct, only slower. */
#define HUGE_PAGE (2u << 20)

static int bloom_alloc(struct scrub_fp *fp, size_t words)
{
	size_t size = words * sizeof *fp->bloom, map;
	unsigned char *p, *a;
	if (size < (64u << 10)) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		fp->bloom = (uint64_t *)(void *)p;
		fp->bloom_size = size;
		return 0;
	}
	size = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	map = size + HUGE_PAGE;
	p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	a = (unsigned char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + map > a + size)
		munmap(a + size, (size_t)(p + map - (a + size)));
	(void)madvise(a, size, MADV_HUGEPAGE); /* a hint: EINVAL without THP support is fine */
	fp->bloom = (uint64_t *)(void *)a;
	fp->bloom_size = size;
	return 0;
}

/* Index the gram at `off` of needle p, unless the same needle already holds
 * it there (a key listed twice, the hex of a digit-only value in both
 * cases): one report per occurrence is enough. */
static void add(struct scrub_fp *fp, const unsigned char *p, uint32_t len, uint32_t off)
{
	uint64_t g = load64(p + off), h = hash(g);
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
	fp->bloom[bloom_word(h, fp->wshift)] |= bloom_bits(h);
}

struct scrub_fp *scrub_fp_new(const struct scrub_vault *v)
{
	struct scrub_fp *fp = calloc(1, sizeof *fp);
	size_t n = scrub_vault_needles(v), words = 1024, slots = 16;
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
	/* About two grams per filter word: with two bits each, a random gram
	 * passes with probability ~ (4/64)^2 = 4e-3.  (One gram per word,
	 * twice the size, measured no faster: the probes are bound by their
	 * instructions, not by the cache.) */
	while (2 * words < fp->nneedles * SCRUB_FP_STRIDE)
		words *= 2;
	while (slots < 2 * fp->nneedles * SCRUB_FP_STRIDE)
		slots *= 2;
	fp->wshift = 32;
	for (size_t w = words; w > 1; w /= 2)
		fp->wshift--;
	if (bloom_alloc(fp, words) < 0)
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
	fp->avx2 = __builtin_cpu_supports("avx2");
#endif
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
	while (fp->slots[s].first != NONE && fp->slots[s].gram != g)
		s = (s + 1) & fp->smask;
	for (uint32_t i = fp->slots[s].first; i != NONE; i = fp->ent[i].next) {
		const struct entry *e = &fp->ent[i];
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

/* Probes from p on, one per stride; returns 0 or the callback's value. */
static int scan_scalar(const struct scrub_fp *fp, const unsigned char *buf, size_t len, size_t p,
                       scrub_fp_hit_fn hit, void *arg)
{
	int rc;
	for (; p + SCRUB_FP_GRAM <= len; p += SCRUB_FP_STRIDE) {
		uint64_t g = load64(buf + p), h = hash(g), w = fp->bloom[bloom_word(h, fp->wshift)];
		if (__builtin_expect((w >> (h >> 58)) & (w >> ((h >> 52) & 63)) & 1, 0) &&
		    (rc = verify(fp, buf, len, p, g, hit, arg)) != 0)
			return rc;
	}
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

/* Four probes per instruction: the grams at p, p+16, p+32, p+48 are the
 * even quadwords of two 32-byte loads; the filter words come from one
 * gather.  A little faster than the scalar loop on the build machine
 * (0.20-0.24 against 0.21-0.26 ns per byte); chosen at run time. */
__attribute__((target("avx2"))) static int scan_avx2(const struct scrub_fp *fp, const unsigned char *buf,
                                                     size_t len, scrub_fp_hit_fn hit, void *arg)
{
	const __m256i k1 = _mm256_set1_epi64x(K1), k2 = _mm256_set1_epi64x(K2), six = _mm256_set1_epi64x(63),
	              one = _mm256_set1_epi64x(1);
	const __m128i sh = _mm_cvtsi32_si128((int)fp->wshift + 32);
	const long long *bloom = (const long long *)(const void *)fp->bloom;
	size_t p = 0;
	int rc;
	_Static_assert(SCRUB_FP_STRIDE == 16, "scan_avx2 takes every other quadword");
	for (; p + 64 <= len; p += 64) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(buf + p));
		__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(buf + p + 32));
		/* [x0 y0 x2 y2] -> [x0 x2 y0 y2]: lane k is the gram at p + 16k */
		__m256i g = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(x, y), 0xd8);
		__m256i u = _mm256_xor_si256(_mm256_mul_epu32(g, k1), _mm256_srli_epi64(g, 32));
		__m256i h = _mm256_mul_epu32(u, k2);
		__m256i w = _mm256_i64gather_epi64(bloom, _mm256_srl_epi64(_mm256_slli_epi64(h, 32), sh), 8);
		__m256i m = _mm256_or_si256(_mm256_sllv_epi64(one, _mm256_srli_epi64(h, 58)),
		                            _mm256_sllv_epi64(one, _mm256_and_si256(_mm256_srli_epi64(h, 52), six)));
		int t = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(w, m), m)));
		if (__builtin_expect(t != 0, 0))
			for (int k = 0; k < 4; k++)
				if ((t >> k & 1) &&
				    (rc = verify(fp, buf, len, p + SCRUB_FP_STRIDE * (size_t)k,
				                 load64(buf + p + SCRUB_FP_STRIDE * (size_t)k), hit, arg)) != 0)
					return rc;
	}
	return scan_scalar(fp, buf, len, p, hit, arg);
}
#endif

int scrub_fp_scan(const struct scrub_fp *fp, const unsigned char *buf, size_t len, scrub_fp_hit_fn hit,
                  void *arg)
{
	if (!fp->nent || len < SCRUB_FP_GRAM)
		return 0;
#ifdef HAVE_AVX2_PATH
	if (fp->avx2)
		return scan_avx2(fp, buf, len, hit, arg);
#endif
	return scan_scalar(fp, buf, len, 0, hit, arg);
}

int scrub_fp_scan_portable(const struct scrub_fp *fp, const unsigned char *buf, size_t len,
                           scrub_fp_hit_fn hit, void *arg)
{
	if (!fp->nent || len < SCRUB_FP_GRAM)
		return 0;
	return scan_scalar(fp, buf, len, 0, hit, arg);
}
