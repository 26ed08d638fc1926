/*
 * scrub_bloom.c - the memory of a gram filter (scrub_bloom.h).
 *
 * The filter is probed at random: in 4 KiB pages, a filter of 512 KiB misses
 * the TLB on almost every probe (measured: 3 times slower than the probe
 * itself).  In one 2 MiB page it never does, so a filter of 64 KiB or more
 * is mapped 2 MiB-aligned and offered to transparent huge pages; if the
 * kernel declines, it is still correct, only slower.
 */
#include "scrub_bloom.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

int scrub_bloom_alloc(struct scrub_bloom *b, size_t grams)
{
	size_t words = 1024, size, map;
	unsigned char *p, *a;
	while (2 * words < grams)
		words *= 2;
	b->wshift = 64;
	for (size_t w = words; w > 1; w /= 2)
		b->wshift--;
	size = words * sizeof *b->word;
	if (size < (64u << 10)) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		b->word = (uint64_t *)(void *)p;
		b->size = size;
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
	b->word = (uint64_t *)(void *)a;
	b->size = size;
	return 0;
}

void scrub_bloom_free(struct scrub_bloom *b)
{
	if (b->word)
		munmap(b->word, b->size);
	b->word = NULL;
}
