/*
 * fuzz_common.h - small helpers shared by the libFuzzer targets.
 *
 * A target aborts (so libFuzzer records a crash with the input) when a
 * property the daemon promises does not hold; sanitizers catch the rest.
 */
#ifndef SHARNESS_FUZZ_COMMON_H
#define SHARNESS_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond, ...)                                                   \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "fuzz property failed: %s (%s:%d): ", #cond, \
			        __FILE__, __LINE__);                             \
			fprintf(stderr, __VA_ARGS__);                            \
			fputc('\n', stderr);                                     \
			abort();                                                 \
		}                                                                \
	} while (0)

static inline int fuzz_lax(void)
{
	static int lax = -1;
	if (lax < 0)
		lax = getenv("SHARNESS_FUZZ_LAX") != NULL;
	return lax;
}

/* An error sentence must exist, be terminated and be one line of text: it
 * goes to the log at start, and a control character echoed from the input
 * (cJSON accepts raw ones inside strings) would forge log lines.
 * SHARNESS_FUZZ_LAX=1 skips the properties known to fail today (this one
 * and fuzz_request's trailing-bytes rule), to look for other findings. */
static inline void fuzz_check_err(const char *err, size_t errlen)
{
	size_t n = strnlen(err, errlen);
	FUZZ_ASSERT(n < errlen, "error string not terminated");
	FUZZ_ASSERT(n > 0, "failure without an error sentence");
	for (size_t i = 0; !fuzz_lax() && i < n; i++)
		FUZZ_ASSERT((unsigned char)err[i] >= 0x20 && err[i] != 0x7f,
		            "control byte 0x%02x at %zu of the error sentence: %s", (unsigned char)err[i], i, err);
}

/* Deterministic PRNG (xorshift64*) seeded from the input, so a crash replays. */
static inline unsigned long long fuzz_rand(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

#endif
