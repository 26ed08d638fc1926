/*
 * runcg_layout.h - the cgroup layout start-up found and the helpers both
 * halves use: start/cgsetup.c (layout, delegation, crash recovery, the
 * doctor's probe) and root/runcg.c (one cgroup per run), and what
 * asrun/usage.c reads of a run's cgroup.  Internal to the
 * two; everything else uses runcg.h.
 *
 * Trust: privileged.
 */
#ifndef SHARNESS_RUNCG_LAYOUT_H
#define SHARNESS_RUNCG_LAYOUT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define UNIFIED_MNT "/sys/fs/cgroup/unified"
#define NAME_MAX_LEN 64
#define STALE_WAIT_MS 2000

enum layout { LAYOUT_V1, LAYOUT_HYBRID, LAYOUT_V2 };

/* Where one controller's run cgroups live. */
struct hier {
	bool on;
	char mnt[PATH_MAX];    /* mount point, e.g. /sys/fs/cgroup/pids */
	char parent[PATH_MAX]; /* name below the hierarchy root, no leading '/' */
};

/* What start-up found (start/cgsetup.c writes it once, before any fork;
 * the per-run code only reads it). */
struct runcg_state {
	bool lib_inited;
	bool ready;
	enum layout layout;
	char parent_name[NAME_MAX_LEN + 1];
	bool made_parent; /* the parent cgroups are ours to remove at a stop */
	struct hier pids, mem, frz; /* v2: all three share the one hierarchy; frz unused */
	struct hier track;          /* hybrid: the unified mount; v2: same as pids */
};
extern struct runcg_state S;

/* A run cgroup's directory, "<mount>/<parent>/<name>", fits in RUN_DIR_MAX
 * bytes: start-up refuses a layout whose parents leave no room for a name
 * (cg_dir_too_long).  Not PATH_MAX: every supervisor and the launcher build
 * one struct run_cgroup per run, and five PATH_MAX buffers are five pages
 * to fault in, each a copy of the launcher's after a fork. */
#define RUN_DIR_MAX 512
/* The longest "<mount>/<parent>" that leaves room for "/<name>" and the NUL:
 * what start-up (cg_dir_too_long) and the doctor's probe compare against. */
#define RUNS_DIR_MAX (RUN_DIR_MAX - NAME_MAX_LEN - 2)

struct run_cgroup {
	char name[NAME_MAX_LEN + 1];
	char procs_dir[RUN_DIR_MAX]; /* pids cgroup: its cgroup.procs lists the run */
	char pids_rel[RUN_DIR_MAX];  /* "/<parent>/<name>" as /proc/<pid>/cgroup shows it */
	char mem_dir[RUN_DIR_MAX];   /* "" without the memory controller */
	char frz_dir[RUN_DIR_MAX];   /* v1 freezer, "" if none */
	char v2_dir[RUN_DIR_MAX];    /* cgroup2 dir with cgroup.kill/events, "" on v1 */
	bool own_v2_dir;          /* hybrid: we mkdir/rmdir v2_dir ourselves */
	int kill_fd;              /* v2_dir's cgroup.kill, opened by root at creation; -1 none */
	int freeze_fd;            /* frz_dir's freezer.state, likewise */
	/* The directories the run lives in (run_dirs, runcg.c: each once, v2's
	 * one for every controller), held open (O_PATH) once runcg_create made
	 * them; -1 before, and in a run_cgroup that only names one (cg_paths). */
	int dir_fd[4];
};

int cg_pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Open `file` in `dir`, one of cg's *_dir fields: through that directory's
 * held fd when there is one, else by path; ENOENT for "" (no such
 * hierarchy).  A walk from /sys revalidates
 * each kernfs component under kernfs's lock, which every run's mkdir and
 * rmdir of its cgroup take for writing: under load, supervisors waited
 * there (docs/bench.md, session 21). */
int cg_open(const struct run_cgroup *cg, const char *dir, const char *file, int flags);
int cg_read_u64(const struct run_cgroup *cg, const char *dir, const char *file, uint64_t *out);
bool cg_name_ok(const char *name);
/* mkdir that takes an existing directory as made (mkdir -p's last step). */
int cg_mkdir_ok(const char *path);
int cg_own_cgroup(pid_t pid, const char *ctrl, char *out, size_t outlen);

/* A run cgroup's paths (runcg.c), and the hierarchy whose parent leaves no
 * room in RUN_DIR_MAX for a run's name, NULL if none (start-up asks). */
int cg_paths(struct run_cgroup *cg, const char *name);
const struct hier *cg_dir_too_long(void);

#endif
