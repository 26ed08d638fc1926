/*
 * monotime.h - milliseconds on the monotonic clock, for deadlines that a
 * change of the wall clock must not move.
 */
#ifndef SHARNESS_MONOTIME_H
#define SHARNESS_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline int64_t monotime_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
