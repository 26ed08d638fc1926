/*
 * scrub_tri.c - the three-byte anchor finder (scrub_tri.h): a 128-entry
 * table per anchor position whose bits are buckets of anchors; a byte
 * position where the three tables' entries share a bit starts a candidate,
 * which is confirmed against that bucket's anchors.
 *
 * Trust: the anchors are the built-in detectors'; the scanned bytes are
 * hostile command output, read only within [0, len).
 */
#include "scrub_tri.h"
#include "scrub_cpu.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 8u

struct scrub_tri {
	/* lut[k][c & 0x7f]: the buckets with an anchor whose byte k is c. */
	unsigned char lut[3][128] __attribute__((aligned(64)));
	struct scrub_tri_anchor *a; /* sorted by bucket */
	size_t first[BUCKETS + 1];  /* bucket b's anchors: a[first[b], first[b + 1]) */
};

int scrub_tri_usable(void)
{
	return scrub_avx512_usable();
}

/* Whether x and y agree everywhere but (at most) position `vary`. */
static int same_but(const unsigned char *x, const unsigned char *y, unsigned vary)
{
	for (unsigned k = 0; k < 3; k++)
		if (k != vary && x[k] != y[k])
			return 0;
	return 1;
}

/* Buckets, greedily: the largest group of unassigned anchors that agree in
 * two positions becomes the next bucket, so a family such as "SK0".."SKf"
 * costs one bucket whose tables hold exactly its anchors.  Returns the
 * number of buckets, or more than BUCKETS when they do not fit. */
static unsigned assign(const struct scrub_tri_anchor *a, size_t n, unsigned *bucket)
{
	unsigned nb = 0;
	for (size_t i = 0; i < n; i++)
		bucket[i] = UINT32_MAX;
	for (;;) {
		size_t best = 0, best_i = 0;
		unsigned best_vary = 0;
		for (size_t i = 0; i < n; i++) {
			if (bucket[i] != UINT32_MAX)
				continue;
			for (unsigned vary = 0; vary < 3; vary++) {
				size_t count = 0;
				for (size_t j = 0; j < n; j++)
					count += bucket[j] == UINT32_MAX && same_but(a[i].b, a[j].b, vary);
				if (count > best) {
					best = count;
					best_i = i;
					best_vary = vary;
				}
			}
		}
		if (best == 0)
			return nb;
		if (nb == BUCKETS)
			return nb + 1;
		for (size_t j = 0; j < n; j++)
			if (bucket[j] == UINT32_MAX && same_but(a[best_i].b, a[j].b, best_vary))
				bucket[j] = nb;
		nb++;
	}
}

struct scrub_tri *scrub_tri_new(const struct scrub_tri_anchor *a, size_t n)
{
	struct scrub_tri *t = NULL;
	unsigned *bucket = calloc(n + 1, sizeof *bucket);
	if (!bucket)
		goto nomem;
	if (assign(a, n, bucket) > BUCKETS) {
		free(bucket);
		errno = E2BIG;
		return NULL;
	}
	t = aligned_alloc(64, (sizeof *t + 63) & ~(size_t)63);
	if (!t)
		goto nomem;
	memset(t, 0, sizeof *t);
	t->a = calloc(n + 1, sizeof *t->a);
	if (!t->a)
		goto nomem;
	for (unsigned b = 0, k = 0; b < BUCKETS; b++) {
		t->first[b] = k;
		for (size_t i = 0; i < n; i++) {
			if (bucket[i] != b)
				continue;
			t->a[k++] = a[i];
			for (unsigned pos = 0; pos < 3; pos++)
				t->lut[pos][a[i].b[pos] & 0x7f] |= (unsigned char)(1u << b);
		}
		t->first[b + 1] = k;
	}
	free(bucket);
	return t;
nomem:
	free(bucket);
	scrub_tri_free(t);
	errno = ENOMEM;
	return NULL;
}

void scrub_tri_free(struct scrub_tri *t)
{
	if (!t)
		return;
	free(t->a);
	free(t);
}

/* The anchors of the buckets in `bits` that start at buf + at (three bytes
 * are there: the callers check). */
static int confirm(const struct scrub_tri *t, const unsigned char *buf, size_t at, unsigned bits,
		   scrub_tri_hit_fn hit, void *arg)
{
	for (; bits; bits &= bits - 1) {
		unsigned b = (unsigned)__builtin_ctz(bits);
		for (size_t i = t->first[b]; i < t->first[b + 1]; i++) {
			const unsigned char *x = t->a[i].b;
			int rc;
			if (buf[at] == x[0] && buf[at + 1] == x[1] && buf[at + 2] == x[2] &&
			    (rc = hit(arg, t->a[i].id, at + 3)) != 0)
				return rc;
		}
	}
	return 0;
}

/* The buckets whose tables admit the three bytes at buf + at. */
static inline unsigned buckets_at(const struct scrub_tri *t, const unsigned char *buf, size_t at)
{
	return t->lut[0][buf[at] & 0x7f] & t->lut[1][buf[at + 1] & 0x7f] & t->lut[2][buf[at + 2] & 0x7f];
}

static int scan_from(const struct scrub_tri *t, const unsigned char *buf, size_t p, size_t len,
		     scrub_tri_hit_fn hit, void *arg)
{
	for (; p + 3 <= len; p++) {
		unsigned bits = buckets_at(t, buf, p);
		int rc;
		if (bits && (rc = confirm(t, buf, p, bits, hit, arg)) != 0)
			return rc;
	}
	return 0;
}

int scrub_tri_scan_portable(const struct scrub_tri *t, const unsigned char *buf, size_t len,
			    scrub_tri_hit_fn hit, void *arg)
{
	return scan_from(t, buf, 0, len, hit, arg);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 64 positions per step: vpermi2b looks each byte's low 7 bits up in the
 * 128-byte table (two registers), for each of the three positions.  The
 * masks of a block of BLOCK steps are collected first and confirmed after,
 * so that no call inside the vector loop makes the compiler keep the six
 * table registers on the stack (every zmm register is caller-saved). */
#define BLOCK 32u

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static size_t
masks_vbmi(const struct scrub_tri *t, const unsigned char *buf, size_t p, size_t len, uint64_t *m, size_t *nm)
{
	const __m512i lo0 = _mm512_load_si512((const void *)t->lut[0]);
	const __m512i hi0 = _mm512_load_si512((const void *)(t->lut[0] + 64));
	const __m512i lo1 = _mm512_load_si512((const void *)t->lut[1]);
	const __m512i hi1 = _mm512_load_si512((const void *)(t->lut[1] + 64));
	const __m512i lo2 = _mm512_load_si512((const void *)t->lut[2]);
	const __m512i hi2 = _mm512_load_si512((const void *)(t->lut[2] + 64));
	size_t k = 0;
	for (; k < BLOCK && p + 66 <= len; k++, p += 64) {
		__m512i b0 = _mm512_permutex2var_epi8(lo0, _mm512_loadu_si512((const void *)(buf + p)), hi0);
		__m512i b1 =
		    _mm512_permutex2var_epi8(lo1, _mm512_loadu_si512((const void *)(buf + p + 1)), hi1);
		__m512i b2 =
		    _mm512_permutex2var_epi8(lo2, _mm512_loadu_si512((const void *)(buf + p + 2)), hi2);
		m[k] = _mm512_test_epi8_mask(_mm512_and_si512(b0, b1), b2);
	}
	*nm = k;
	return p;
}

static int scan_vbmi(const struct scrub_tri *t, const unsigned char *buf, size_t len, scrub_tri_hit_fn hit,
		     void *arg)
{
	uint64_t m[BLOCK];
	size_t p = 0, nm;
	for (;;) {
		size_t base = p;
		p = masks_vbmi(t, buf, p, len, m, &nm);
		for (size_t k = 0; k < nm; k++)
			for (uint64_t bits = m[k]; bits; bits &= bits - 1) {
				size_t at = base + 64 * k + (size_t)__builtin_ctzll(bits); /* at + 2 < len */
				unsigned b = buckets_at(t, buf, at);
				int rc = confirm(t, buf, at, b, hit, arg);
				if (rc != 0)
					return rc;
			}
		if (nm < BLOCK)
			return scan_from(t, buf, p, len, hit, arg);
	}
}
#endif

int scrub_tri_scan(const struct scrub_tri *t, const unsigned char *buf, size_t len, scrub_tri_hit_fn hit,
		   void *arg)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return scan_vbmi(t, buf, len, hit, arg);
#else
	return scan_from(t, buf, 0, len, hit, arg);
#endif
}
