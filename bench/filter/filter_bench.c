/*
 * filter_bench.c - `sharnessd --filter` without the rest of the daemon, for
 * measuring the secret filter before (or besides) build/sharnessd.
 */
#include "scrub.h"

int main(int argc, char **argv)
{
	return scrub_filter_main(argc - 1, argv + 1);
}
