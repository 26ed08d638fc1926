/*
 * usage.h - what a run cost, read from its cgroup by its supervisor, which
 * runs as the run's uid by then (usage.c).
 */
#ifndef SHARNESS_USAGE_H
#define SHARNESS_USAGE_H

#include "privsep.h"

struct run_cgroup;

/* The run's counter files, each -1 where the kernel or the layout has none. */
struct usage_files {
	int cpu_stat, memory_peak, pids_peak, pids_events, memory_events;
};

/* Open the counter files of the run's cgroup.  Called while the command
 * starts: opening five cgroup files by path once it has ended cost each
 * reply about 0.15 ms.  Then usage_read. */
void usage_open(const struct run_cgroup *cg, struct usage_files *f);

/* Fill `u` from the files usage_open opened, and close them.  The cgroup
 * still exists: every process of the run is gone (or being killed), and
 * cgroup counters outlive them.  A counter the kernel or the layout cannot
 * give stays out of u->have. */
void usage_read(struct usage_files *f, struct privsep_usage *u);

#endif
