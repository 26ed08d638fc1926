/*
 * usage.c - a run's cost from its cgroup (SPEC §15.4, `usage` in a reply).
 *
 *   cpu_us        cgroup2 cpu.stat usage_usec (a core file, no cpu
 *                 controller needed): v2 and hybrid (the unified mount);
 *                 pure v1 has none (no cpuacct hierarchy is set up)
 *   peak_memory   v2 memory.peak (Linux 5.19+), v1 memory.max_usage_in_bytes
 *   peak_pids     pids.peak (Linux 6.13+, v1 and v2)
 *   pids_limited  pids.events "max" > 0: a fork was refused at pids.max
 *   oom_killed    v2 memory.events / v1 memory.oom_control "oom_kill" > 0
 *
 * Every one of these files is world-readable: the supervisor reads them as
 * the run's uid.
 *
 * Trust: runs as the run's uid; the files are the kernel's.
 */
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "runcg_layout.h"

void usage_open(const struct run_cgroup *cg, struct usage_files *f)
{
	bool v2 = S.layout == LAYOUT_V2;
	*f = (struct usage_files){-1, -1, -1, -1, -1};
	if (!cg)
		return;
	f->cpu_stat = cg_open(cg, cg->v2_dir, "cpu.stat", O_RDONLY);
	f->memory_peak = cg_open(cg, cg->mem_dir, v2 ? "memory.peak" : "memory.max_usage_in_bytes", O_RDONLY);
	f->pids_peak = cg_open(cg, cg->procs_dir, "pids.peak", O_RDONLY);
	f->pids_events = cg_open(cg, cg->procs_dir, "pids.events", O_RDONLY);
	f->memory_events = cg_open(cg, cg->mem_dir, v2 ? "memory.events" : "memory.oom_control", O_RDONLY);
}

/* Read a counter file from its start, once, and close it. */
static int take(int *fd, char *buf, size_t len)
{
	ssize_t n = *fd >= 0 ? pread(*fd, buf, len - 1, 0) : -1;
	fdio_close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int read_u64(int *fd, uint64_t *out)
{
	char buf[64], *end;
	if (take(fd, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	*out = strtoull(buf, &end, 10);
	return errno || end == buf ? -1 : 0;
}

/* The value of `key` in a flat-keyed file ("key value" lines). */
static int read_key(int *fd, const char *key, uint64_t *out)
{
	char buf[4096], *end;
	size_t klen = strlen(key);

	if (take(fd, buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, klen) != 0 || l[klen] != ' ')
			continue;
		errno = 0;
		*out = strtoull(l + klen + 1, &end, 10);
		if (errno || end == l + klen + 1)
			break;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

void usage_read(struct usage_files *f, struct privsep_usage *u)
{
	uint64_t v;

	memset(u, 0, sizeof(*u));
	if (read_key(&f->cpu_stat, "usage_usec", &v) == 0)
		u->have |= PRIVSEP_USAGE_CPU, u->cpu_us = v;
	if (read_u64(&f->memory_peak, &v) == 0)
		u->have |= PRIVSEP_USAGE_PEAK_MEMORY, u->peak_memory_bytes = v;
	if (read_u64(&f->pids_peak, &v) == 0)
		u->have |= PRIVSEP_USAGE_PEAK_PIDS, u->peak_pids = v;
	if (read_key(&f->pids_events, "max", &v) == 0)
		u->have |= PRIVSEP_USAGE_PIDS_LIMITED, u->pids_limited = v > 0;
	if (read_key(&f->memory_events, "oom_kill", &v) == 0)
		u->have |= PRIVSEP_USAGE_OOM, u->oom_killed = v > 0;
}
