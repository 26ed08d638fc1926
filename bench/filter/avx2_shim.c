/*
 * bench/filter/avx2_shim.c - for `make bench-filter-avx2` only: the filter
 * as a CPU without AVX-512 runs it, measured on one that has it (issue 16.3).
 *
 * Loaded with LD_PRELOAD into filter_bench.  Vectorscan's hs_scan is an
 * ifunc that picks its AVX-512 build on such a CPU; its AVX2 build is
 * exported too (avx2_hs_scan), so hs_scan goes there, and every database
 * is compiled for an AVX2 platform (Haswell tuning), which that build
 * requires.  Our own code's AVX-512 paths are turned off by
 * SHARNESS_FILTER_AVX512=off (daemon/filter).  What it cannot show: a CPU
 * whose AVX2 runs at half width (Zen 1) or at a lower clock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hs/hs.h>

hs_error_t avx2_hs_scan(const hs_database_t *db, const char *data, unsigned length, unsigned flags,
                        hs_scratch_t *scratch, match_event_handler on_event, void *ctx);

hs_error_t hs_scan(const hs_database_t *db, const char *data, unsigned length, unsigned flags,
                   hs_scratch_t *scratch, match_event_handler on_event, void *ctx)
{
	return avx2_hs_scan(db, data, length, flags, scratch, on_event, ctx);
}

typedef hs_error_t (*compile_lit_multi_fn)(const char *const *, const unsigned *, const unsigned *, const size_t *,
                                           unsigned, unsigned, const hs_platform_info_t *, hs_database_t **,
                                           hs_compile_error_t **);

hs_error_t hs_compile_lit_multi(const char *const *expressions, const unsigned *flags, const unsigned *ids,
                                const size_t *lens, unsigned elements, unsigned mode,
                                const hs_platform_info_t *platform, hs_database_t **db, hs_compile_error_t **error)
{
	(void)platform;
	static compile_lit_multi_fn real;
	if (!real)
		real = (compile_lit_multi_fn)dlsym(RTLD_NEXT, "hs_compile_lit_multi");
	const hs_platform_info_t avx2 = {.tune = HS_TUNE_FAMILY_HSW, .cpu_features = HS_CPU_FEATURES_AVX2};
	return real(expressions, flags, ids, lens, elements, mode, &avx2, db, error);
}
