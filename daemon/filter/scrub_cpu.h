/*
 * scrub_cpu.h - whether the filter may use AVX-512 (scrub_tri.c's anchor
 * finder, scrub_fp.c's eight-probe loop).  Internal to the scrub module.
 *
 * SHARNESS_FILTER_AVX512=off in the environment keeps both on their older
 * paths (Vectorscan and the scalar probes): the output is the same byte for
 * byte, only the speed differs, so a benchmark of `sharnessd --filter` can
 * compare the two on one CPU.  (The front is exec'd with a clean
 * environment: a daemon always uses what its CPU has.)
 */
#ifndef SHARNESS_SCRUB_CPU_H
#define SHARNESS_SCRUB_CPU_H

#include <stdlib.h>
#include <string.h>

static inline int scrub_avx512_allowed(void)
{
	const char *v = getenv("SHARNESS_FILTER_AVX512");
	return !v || strcmp(v, "off") != 0;
}

#endif
