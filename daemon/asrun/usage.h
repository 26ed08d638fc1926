/*
 * usage.h - what a run cost, read from its cgroup by its supervisor, which
 * runs as the run's uid by then (usage.c).
 */
#ifndef SHARNESS_USAGE_H
#define SHARNESS_USAGE_H

#include "privsep.h"

struct run_cgroup;

/* Fill `u` from the run's cgroup, which still exists: every process of the
 * run is gone (or being killed), and cgroup counters outlive them.  A
 * counter the kernel or the layout cannot give stays out of u->have. */
void usage_read(const struct run_cgroup *cg, struct privsep_usage *u);

#endif
