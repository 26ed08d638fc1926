/*
 * scrub_cpu.h - whether the filter uses AVX-512 (scrub_tri.c's anchor
 * finder, scrub_fp.c's eight-probe loop): both or neither.  Internal to the
 * scrub module.
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

/* Whether the filter's AVX-512 paths run: the CPU has F, BW, DQ and VBMI
 * (Intel since Ice Lake, AMD since Zen 4: the generations whose 512-bit
 * instructions do not lower the core's clock for the code around them),
 * the OS saves their registers (libgcc's check reads XCR0), and
 * SHARNESS_FILTER_AVX512 is not "off". */
static inline int scrub_avx512_usable(void)
{
	const char *v = getenv("SHARNESS_FILTER_AVX512");
	if (v && strcmp(v, "off") == 0)
		return 0;
#if defined(__x86_64__) && defined(__GNUC__)
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vbmi");
#else
	return 0;
#endif
}

#endif
