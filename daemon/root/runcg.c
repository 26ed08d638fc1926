/*
 * runcg.c - one cgroup per run through libcgroup 2.0.2: pids.max and the
 * memory limit, SIGKILL of every process of the run, removal afterwards.
 *
 * Layouts (research/ecosystem.md §2):
 *   v1      every controller on its own v1 hierarchy.  Runs live in
 *           <own cgroup of that controller>/<parent>/<name>; kill is a
 *           freeze + SIGKILL loop over cgroup.procs.
 *   hybrid  as v1 for the limits, plus a same-named cgroup in the
 *           controller-less v2 mount (/sys/fs/cgroup/unified): it gives
 *           cgroup.kill (atomic, races forks, Linux >= 5.14) and
 *           cgroup.events (populated 0 = empty) for free.
 *   v2      one unified hierarchy.  Under systemd (Delegate=yes) our own
 *           cgroup is the delegation point; the no-internal-process rule
 *           means the daemon first moves itself to <own>/daemon, then runs
 *           go to <own>/runs/<name> with +pids +memory enabled on the way.
 *
 * libcgroup names are relative to the hierarchy root, not to the caller's
 * cgroup, so every name below is built from /proc/self/cgroup.
 *
 * The functions are called from per-run forked supervisors, so nothing here
 * relies on memory shared between processes: the cgroup filesystem is the
 * only shared state.  Module state is written once by runcg_init() before
 * any fork and only read afterwards.
 *
 * Trust: privileged.  Run names come from the launcher and are still
 * checked to be one plain path component.
 */
#include "errmsg.h"
#include "runcg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <libcgroup.h>

#define UNIFIED_MNT "/sys/fs/cgroup/unified"
#define NAME_MAX_LEN 64
#define KILL_ROUNDS 400     /* v1 kill loop bound: 400 rounds, ~1 s at most */
#define STALE_WAIT_MS 2000

enum layout { LAYOUT_V1, LAYOUT_HYBRID, LAYOUT_V2 };

/* Where one controller's run cgroups live. */
struct hier {
	bool on;
	char mnt[PATH_MAX];    /* mount point, e.g. /sys/fs/cgroup/pids */
	char parent[PATH_MAX]; /* name below the hierarchy root, no leading '/' */
};

static struct {
	bool lib_inited;
	bool ready;
	enum layout layout;
	char parent_name[NAME_MAX_LEN + 1];
	struct hier pids, mem, frz; /* v2: all three share the one hierarchy; frz unused */
	struct hier track;          /* hybrid: the unified mount; v2: same as pids */
} S;

struct run_cgroup {
	char name[NAME_MAX_LEN + 1];
	struct cgroup *lc[3]; /* libcgroup objects: v1 one per hierarchy, v2 one */
	int nlc;
	char procs_dir[PATH_MAX]; /* pids cgroup: its cgroup.procs lists the run */
	char pids_rel[PATH_MAX];  /* "/<parent>/<name>" as /proc/<pid>/cgroup shows it */
	char mem_dir[PATH_MAX];   /* "" without the memory controller */
	char frz_dir[PATH_MAX];   /* v1 freezer, "" if none */
	char v2_dir[PATH_MAX];    /* cgroup2 dir with cgroup.kill/events, "" on v1 */
	bool own_v2_dir;          /* hybrid: we mkdir/rmdir v2_dir ourselves */
};

/* libcgroup calls itself only "theoretically thread safe"; one lock around
 * every call that creates, attaches or deletes. */
static pthread_mutex_t lc_lock = PTHREAD_MUTEX_INITIALIZER;

static int pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* libcgroup error -> errno, so callers see 0/-1 + errno like everywhere else. */
static int lc_errno(int rc)
{
	switch (rc) {
	case 0:
		return 0;
	case ECGOTHER:
		return cgroup_get_last_errno() ? cgroup_get_last_errno() : EIO;
	case ECGNONEMPTY:
		return EBUSY;
	case ECGROUPNOTEXIST:
		return ENOENT;
	case ECGROUPSUBSYSNOTMOUNTED:
	case ECGROUPNOTMOUNTED:
		return ENODEV;
	default:
		return EIO;
	}
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int saved, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	saved = errno; /* the caller reads read()'s errno, not close()'s */
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

static int write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int saved, fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = write(fd, s, len);
	saved = errno;
	close(fd);
	if (n != (ssize_t)len) {
		errno = n < 0 ? saved : EIO;
		return -1;
	}
	return 0;
}

static bool is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static bool name_ok(const char *name)
{
	size_t i, len = strlen(name);

	if (len == 0 || len > NAME_MAX_LEN || name[0] == '.')
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* This process's cgroup for `ctrl` from /proc/self/cgroup ("N:a,b:/path");
 * ctrl NULL asks for the v2 line ("0::/path").  out gets the path without
 * the leading '/' ("" for the root). */
static int own_cgroup(pid_t pid, const char *ctrl, char *out, size_t outlen)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	errno = ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *nl;
		bool match = false;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c2 = '\0';
		if (!ctrl) {
			match = c1[1] == '\0' && strncmp(line, "0:", 2) == 0;
		} else {
			char *tok, *save = NULL;
			for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, ctrl) == 0)
					match = true;
		}
		if (!match)
			continue;
		if ((nl = strchr(c2 + 1, '\n')))
			*nl = '\0';
		while (*++c2 == '/')
			;
		if (pathf(out, outlen, "%s", c2) == 0)
			rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

/* "a" + "b" -> "a/b", "" + "b" -> "b". */
static int relj(char *out, size_t len, const char *a, const char *b)
{
	return a[0] ? pathf(out, len, "%s/%s", a, b) : pathf(out, len, "%s", b);
}

static int mkdir_ok(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* A v1 controller's hierarchy: its mount and our parent name in it. */
static int setup_v1(struct hier *h, const char *ctrl, bool required, char *err, size_t errlen)
{
	char *mnt = NULL, own[PATH_MAX], dir[PATH_MAX * 2];
	int rc;

	memset(h, 0, sizeof(*h));
	rc = cgroup_get_subsys_mount_point(ctrl, &mnt);
	if (rc != 0 || !mnt) {
		if (required)
			errmsg_set(err, errlen, "cgroup: the %s controller is not mounted", ctrl);
		return required ? -1 : 0;
	}
	if (pathf(h->mnt, sizeof(h->mnt), "%s", mnt) < 0 || own_cgroup(getpid(), ctrl, own, sizeof(own)) < 0 ||
	    relj(h->parent, sizeof(h->parent), own, S.parent_name) < 0 ||
	    pathf(dir, sizeof(dir), "%s/%s", h->mnt, h->parent) < 0 || mkdir_ok(dir) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot create the %s parent cgroup under %s: %s", ctrl, mnt,
		       strerror(errno));
		free(mnt);
		return -1;
	}
	free(mnt);
	h->on = true;
	return 0;
}

/* Enable controllers ("+pids +memory" style, one write each so a missing
 * one is named) in dir/cgroup.subtree_control. */
static int enable_ctrls(const char *dir, const char *ctrls, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], buf[256], tok[64];
	const char *p = ctrls;

	if (pathf(path, sizeof(path), "%s/cgroup.subtree_control", dir) < 0)
		return -1;
	while (*p) {
		size_t n = strcspn(p, " ");
		if (n > 0 && n < sizeof(tok) - 1) {
			memcpy(tok, p, n);
			tok[n] = '\0';
			snprintf(buf, sizeof(buf), "+%s", tok);
			if (write_str(path, buf) < 0) {
				int e = errno;
				errmsg_set(err, errlen, "cgroup: cannot enable %s in %s: %s%s", tok, path, strerror(e),
				       e == EBUSY ? " (a process is still in that cgroup: no-internal-process rule)"
				                  : "");
				errno = e;
				return -1;
			}
		}
		p += n;
		while (*p == ' ')
			p++;
	}
	return 0;
}

int runcg_v2_delegate(const char *dir, const char *controllers, char *err, size_t errlen)
{
	char leaf[PATH_MAX + 16], runs[PATH_MAX + 16], procs[PATH_MAX + 32], pid[32];

	if (pathf(leaf, sizeof(leaf), "%s/daemon", dir) < 0 || pathf(runs, sizeof(runs), "%s/runs", dir) < 0 ||
	    pathf(procs, sizeof(procs), "%s/cgroup.procs", leaf) < 0) {
		errmsg_set(err, errlen, "cgroup: path too long: %s", dir);
		return -1;
	}
	/* The no-internal-process rule: a cgroup with controllers enabled for
	 * its children may hold no process, so we leave our own cgroup for a
	 * leaf before touching subtree_control (cgroups(7), "no internal
	 * processes" rule; systemd docs/CGROUP_DELEGATION.md). */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (mkdir_ok(leaf) < 0 || write_str(procs, pid) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot move the daemon into %s: %s", leaf, strerror(errno));
		return -1;
	}
	if (enable_ctrls(dir, controllers, err, errlen) < 0)
		return -1;
	if (mkdir_ok(runs) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot create %s: %s", runs, strerror(errno));
		return -1;
	}
	return enable_ctrls(runs, controllers, err, errlen);
}

static bool file_has_word(const char *path, const char *word)
{
	char buf[1024], *tok, *save = NULL;

	if (read_small(path, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (strcmp(tok, word) == 0)
			return true;
	return false;
}

/* systemd is PID 1 (sd_booted(3): the same test). */
static bool systemd_booted(void)
{
	struct stat st;
	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

/* systemd marks the cgroup it delegates (Delegate=yes on a service or a
 * scope) with the xattr trusted.delegate=1 (systemd docs/CGROUP_DELEGATION.md,
 * since v251; user.delegate too since v252). */
static bool is_delegated(const char *dir)
{
	char v[4];
	ssize_t n = getxattr(dir, "trusted.delegate", v, sizeof(v));
	if (n <= 0)
		n = getxattr(dir, "user.delegate", v, sizeof(v));
	return n > 0 && v[0] == '1';
}

bool runcg_wants_scope(void)
{
	char own[PATH_MAX], dir[PATH_MAX * 2];
	if (!is_cgroup2("/sys/fs/cgroup") || !systemd_booted() || own_cgroup(getpid(), NULL, own, sizeof(own)) < 0)
		return false;
	if (own[0] == '\0' || pathf(dir, sizeof(dir), "/sys/fs/cgroup/%s", own) < 0)
		return false;
	return !is_delegated(dir);
}

const char *runcg_pids_fix(void)
{
	char cmdline[4096], *p;
	if (read_small("/proc/cmdline", cmdline, sizeof(cmdline)) > 0) {
		/* cgroup_disable=pids[,memory...] switches it off at boot. */
		for (p = strstr(cmdline, "cgroup_disable="); p; p = strstr(p + 1, "cgroup_disable=")) {
			char *v = p + strlen("cgroup_disable="), *end = v + strcspn(v, " \n");
			for (char *w = v; w < end; w += strcspn(w, ",") + 1)
				if (strncmp(w, "pids", 4) == 0 && (w[4] == ',' || w + 4 == end))
					return "the kernel was booted with cgroup_disable=pids: remove pids from that boot "
					       "parameter and reboot";
		}
	}
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 && !file_has_word("/sys/fs/cgroup/cgroup.controllers", "pids"))
		return "this kernel has no pids controller: use one built with CONFIG_CGROUP_PIDS";
	if (systemd_booted())
		return "start sharnessd from its unit (Delegate=yes), or give a drop-in Delegate=pids memory";
	return "use a kernel built with CONFIG_CGROUP_PIDS";
}

/* Pure v2.  Three places, one rule each:
 *   under systemd, a delegated cgroup (the unit's Delegate=yes, or the
 *     transient scope main.c asks for from a login shell): the daemon
 *     moves itself to <own>/daemon and runs go to <own>/runs;
 *   under systemd, not delegated: refused (systemd owns that cgroup and
 *     would undo what we write; its other processes forbid controllers);
 *   no systemd: a subtree of our own at the hierarchy's root,
 *     /sys/fs/cgroup/<parent>/runs; the root is exempt from the
 *     no-internal-process rule, so the daemon may stay where it is. */
static int setup_v2(const char *mnt, char *err, size_t errlen)
{
	char own[PATH_MAX], dir[PATH_MAX * 2], ctrls[PATH_MAX * 2 + 32];
	char base[PATH_MAX];
	const char *want;
	bool at_root;

	if (own_cgroup(getpid(), NULL, own, sizeof(own)) < 0) {
		errmsg_set(err, errlen, "cgroup: no v2 entry in /proc/self/cgroup");
		return -1;
	}
	at_root = own[0] == '\0' || !systemd_booted();
	if (!at_root) {
		if (pathf(base, sizeof(base), "%s", own) < 0 || pathf(dir, sizeof(dir), "%s/%s", mnt, base) < 0) {
			errmsg_set(err, errlen, "cgroup: path too long");
			return -1;
		}
		if (!is_delegated(dir)) {
			errmsg_set(err, errlen,
			           "cgroup: %s is not delegated to sharnessd; start it from its unit (Delegate=yes) or "
			           "as: systemd-run --scope -p Delegate=yes sharnessd ...",
			           dir);
			errno = EPERM;
			return -1;
		}
	} else if (pathf(base, sizeof(base), "%s", S.parent_name) < 0 ||
	           pathf(dir, sizeof(dir), "%s/%s", mnt, base) < 0) {
		errmsg_set(err, errlen, "cgroup: path too long");
		return -1;
	}
	/* What the root (no systemd) or the delegation point offers. */
	if (pathf(ctrls, sizeof(ctrls), "%s/cgroup.controllers", at_root ? mnt : dir) < 0 ||
	    !file_has_word(ctrls, "pids")) {
		errmsg_set(err, errlen, "cgroup: the pids controller is not available in %s; %s", at_root ? mnt : dir,
		           runcg_pids_fix());
		return -1;
	}
	S.mem.on = file_has_word(ctrls, "memory");
	want = S.mem.on ? "pids memory" : "pids";
	if (at_root) {
		char runs[PATH_MAX * 2 + 8];
		if (enable_ctrls(mnt, want, err, errlen) < 0)
			return -1;
		if (mkdir_ok(dir) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot create %s: %s", dir, strerror(errno));
			return -1;
		}
		if (enable_ctrls(dir, want, err, errlen) < 0)
			return -1;
		if (pathf(runs, sizeof(runs), "%s/runs", dir) < 0 || mkdir_ok(runs) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot create %s/runs: %s", dir, strerror(errno));
			return -1;
		}
		if (enable_ctrls(runs, want, err, errlen) < 0)
			return -1;
	} else if (runcg_v2_delegate(dir, want, err, errlen) < 0) {
		return -1;
	}
	pathf(S.pids.mnt, sizeof(S.pids.mnt), "%s", mnt);
	if (pathf(S.pids.parent, sizeof(S.pids.parent), "%s/runs", base) < 0)
		return -1;
	S.pids.on = true;
	if (S.mem.on) {
		memcpy(S.mem.mnt, S.pids.mnt, sizeof(S.mem.mnt));
		memcpy(S.mem.parent, S.pids.parent, sizeof(S.mem.parent));
	}
	S.track = S.pids;
	return 0;
}

int runcg_runs_dir(char *out, size_t outlen)
{
	if (!S.ready)
		return -1;
	return pathf(out, outlen, "%s/%s", S.pids.mnt, S.pids.parent);
}

int runcg_cleanup_previous(const char *dir, char *err, size_t errlen)
{
	char own[PATH_MAX * 2], path[PATH_MAX * 3];
	int removed = 0;

	/* Our own runs directory is runcg_cleanup_stale's; only a v2 directory
	 * elsewhere (the scope of an earlier start) is handled here. */
	if (runcg_runs_dir(own, sizeof(own)) < 0 || strcmp(own, dir) == 0 || !is_cgroup2(dir))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !name_ok(de->d_name))
			continue;
		if (pathf(path, sizeof(path), "%s/%s/cgroup.kill", dir, de->d_name) < 0)
			continue;
		write_str(path, "1");
		path[strlen(path) - strlen("/cgroup.kill")] = '\0';
		/* cgroup.kill is synchronous for signal delivery; the exits
		 * follow within milliseconds, rmdir fails EBUSY until then. */
		for (int i = 0; i < 200 && rmdir(path) < 0 && errno == EBUSY; i++)
			usleep(10000);
		if (access(path, F_OK) == 0) {
			errmsg_set(err, errlen, "cgroup: cannot remove %s of a previous daemon: %s", path, strerror(errno));
			closedir(d);
			return -1;
		}
		removed++;
	}
	closedir(d);
	return removed;
}

int runcg_init_named(const char *parent, bool legacy_only, char *err, size_t errlen)
{
	char *mnt = NULL;
	int rc;

	S.ready = false;
	memset(&S.pids, 0, sizeof(S.pids));
	memset(&S.mem, 0, sizeof(S.mem));
	memset(&S.frz, 0, sizeof(S.frz));
	memset(&S.track, 0, sizeof(S.track));
	if (!name_ok(parent)) {
		errmsg_set(err, errlen, "cgroup: parent name '%s' is not a plain name", parent);
		errno = EINVAL;
		return -1;
	}
	snprintf(S.parent_name, sizeof(S.parent_name), "%s", parent);
	if (!S.lib_inited) {
		/* Parses /proc/mounts once; the table is inherited by forks. */
		rc = cgroup_init();
		if (rc != 0) {
			errmsg_set(err, errlen, "cgroup: libcgroup cgroup_init failed: %s", cgroup_strerror(rc));
			errno = ENODEV;
			return -1;
		}
		S.lib_inited = true;
	}
	rc = cgroup_get_subsys_mount_point("pids", &mnt);
	if (rc != 0 || !mnt) {
		errmsg_set(err, errlen, "cgroup: the pids controller is not mounted (neither v1 nor v2); mount cgroup2 on /sys/fs/cgroup "
		           "(systemd does), or use a kernel built with CONFIG_CGROUP_PIDS");
		errno = ENODEV;
		return -1;
	}
	if (is_cgroup2(mnt)) {
		S.layout = LAYOUT_V2;
		rc = setup_v2(mnt, err, errlen);
		free(mnt);
		if (rc < 0)
			goto fail;
		S.ready = true;
		return 0;
	}
	free(mnt);
	if (setup_v1(&S.pids, "pids", true, err, errlen) < 0 || setup_v1(&S.mem, "memory", false, err, errlen) < 0)
		goto fail;
	S.layout = LAYOUT_V1;
	if (!legacy_only && is_cgroup2(UNIFIED_MNT)) {
		char own[PATH_MAX], dir[PATH_MAX * 2];

		/* Hybrid: the controller-less v2 tree allows internal processes, so
		 * no leaf move is needed here. */
		if (own_cgroup(getpid(), NULL, own, sizeof(own)) < 0 ||
		    relj(S.track.parent, sizeof(S.track.parent), own, S.parent_name) < 0 ||
		    pathf(dir, sizeof(dir), "%s/%s", UNIFIED_MNT, S.track.parent) < 0 || mkdir_ok(dir) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot create our cgroup in %s: %s", UNIFIED_MNT,
			       strerror(errno));
			goto fail;
		}
		snprintf(S.track.mnt, sizeof(S.track.mnt), "%s", UNIFIED_MNT);
		S.track.on = true;
		S.layout = LAYOUT_HYBRID;
	} else if (setup_v1(&S.frz, "freezer", false, err, errlen) < 0) {
		/* Without cgroup.kill the freezer closes the fork race of the kill loop. */
		goto fail;
	}
	S.ready = true;
	return 0;
fail:
	if (errno == 0)
		errno = ENODEV;
	return -1;
}

int runcg_init(char *err, size_t errlen)
{
	return runcg_init_named("sharness", false, err, errlen);
}

const char *runcg_version(void)
{
	if (!S.ready)
		return "none";
	return S.layout == LAYOUT_V2 ? "v2" : S.layout == LAYOUT_HYBRID ? "hybrid" : "v1";
}

bool runcg_has_memory(void)
{
	return S.ready && S.mem.on;
}

/* Fill cg's paths for `name` without touching the kernel. */
static int cg_paths(struct run_cgroup *cg, const char *name)
{
	memset(cg, 0, sizeof(*cg));
	snprintf(cg->name, sizeof(cg->name), "%s", name);
	if (pathf(cg->procs_dir, sizeof(cg->procs_dir), "%s/%s/%s", S.pids.mnt, S.pids.parent, name) < 0 ||
	    pathf(cg->pids_rel, sizeof(cg->pids_rel), "/%s/%s", S.pids.parent, name) < 0)
		return -1;
	if (S.mem.on &&
	    pathf(cg->mem_dir, sizeof(cg->mem_dir), "%s/%s/%s", S.mem.mnt, S.mem.parent, name) < 0)
		return -1;
	if (S.frz.on &&
	    pathf(cg->frz_dir, sizeof(cg->frz_dir), "%s/%s/%s", S.frz.mnt, S.frz.parent, name) < 0)
		return -1;
	if (S.track.on &&
	    pathf(cg->v2_dir, sizeof(cg->v2_dir), "%s/%s/%s", S.track.mnt, S.track.parent, name) < 0)
		return -1;
	cg->own_v2_dir = S.layout == LAYOUT_HYBRID;
	return 0;
}

/* libcgroup objects for every hierarchy the run lives in (values unset). */
static int cg_objects(struct run_cgroup *cg)
{
	char full[PATH_MAX * 2];

	if (S.layout == LAYOUT_V2) {
		if (pathf(full, sizeof(full), "%s/%s", S.pids.parent, cg->name) < 0 ||
		    !(cg->lc[0] = cgroup_new_cgroup(full)) || !cgroup_add_controller(cg->lc[0], "pids") ||
		    (S.mem.on && !cgroup_add_controller(cg->lc[0], "memory")))
			goto nomem;
		cg->nlc = 1;
		return 0;
	}
	{
		const struct hier *hs[3] = { &S.pids, &S.mem, &S.frz };
		const char *names[3] = { "pids", "memory", "freezer" };
		int i;

		for (i = 0; i < 3; i++) {
			struct cgroup *c;
			if (!hs[i]->on)
				continue;
			if (pathf(full, sizeof(full), "%s/%s", hs[i]->parent, cg->name) < 0 ||
			    !(c = cgroup_new_cgroup(full)))
				goto nomem;
			cg->lc[cg->nlc++] = c;
			if (!cgroup_add_controller(c, names[i]))
				goto nomem;
		}
	}
	return 0;
nomem:
	if (errno == 0)
		errno = ENOMEM;
	return -1;
}

static void cg_free_objects(struct run_cgroup *cg)
{
	int i;

	for (i = 0; i < cg->nlc; i++)
		cgroup_free(&cg->lc[i]);
	cg->nlc = 0;
}

static struct cgroup_controller *ctrl_of(struct run_cgroup *cg, const char *ctrl)
{
	int i;

	for (i = 0; i < cg->nlc; i++) {
		struct cgroup_controller *c = cgroup_get_controller(cg->lc[i], ctrl);
		if (c)
			return c;
	}
	return NULL;
}

static int read_u64(const char *dir, const char *file, uint64_t *out)
{
	char path[PATH_MAX + 64], buf[64], *end;

	if (pathf(path, sizeof(path), "%s/%s", dir, file) < 0 || read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	*out = strtoull(buf, &end, 10);
	if (errno || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static bool exists_in(const char *dir, const char *file)
{
	char path[PATH_MAX + 64];

	return pathf(path, sizeof(path), "%s/%s", dir, file) == 0 && access(path, F_OK) == 0;
}

/* The value of `key` in a flat-keyed file ("key value" lines). */
static int read_key(const char *dir, const char *file, const char *key, uint64_t *out)
{
	char path[PATH_MAX + 64], buf[4096], *end;
	size_t klen = strlen(key);

	if (!dir[0] || pathf(path, sizeof(path), "%s/%s", dir, file) < 0 || read_small(path, buf, sizeof(buf)) < 0)
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

void runcg_usage(struct run_cgroup *cg, struct runcg_usage *u)
{
	uint64_t v;

	memset(u, 0, sizeof(*u));
	if (!cg)
		return;
	if (cg->v2_dir[0] && read_key(cg->v2_dir, "cpu.stat", "usage_usec", &v) == 0)
		u->have_cpu = true, u->cpu_us = v;
	if (cg->mem_dir[0] &&
	    read_u64(cg->mem_dir, S.layout == LAYOUT_V2 ? "memory.peak" : "memory.max_usage_in_bytes", &v) == 0)
		u->have_peak_memory = true, u->peak_memory = v;
	if (read_u64(cg->procs_dir, "pids.peak", &v) == 0)
		u->have_peak_pids = true, u->peak_pids = v;
	if (read_key(cg->procs_dir, "pids.events", "max", &v) == 0)
		u->have_pids_limited = true, u->pids_limited = v > 0;
	if (cg->mem_dir[0] &&
	    read_key(cg->mem_dir, S.layout == LAYOUT_V2 ? "memory.events" : "memory.oom_control", "oom_kill", &v) == 0)
		u->have_oom_killed = true, u->oom_killed = v > 0;
}

struct run_cgroup *runcg_create(const char *name, unsigned pids_max, uint64_t memory_max, char *err,
                                size_t errlen)
{
	struct run_cgroup *cg;
	struct cgroup_controller *c;
	uint64_t got, mem = 0;
	bool created = false;
	int rc, e;

	if (!S.ready) {
		errmsg_set(err, errlen, "cgroup: runcg_init was not called");
		errno = EINVAL;
		return NULL;
	}
	if (!name_ok(name) || pids_max == 0) {
		errmsg_set(err, errlen, "cgroup: bad run cgroup name or pids_max 0");
		errno = EINVAL;
		return NULL;
	}
	if (!(cg = calloc(1, sizeof(*cg)))) {
		errmsg_set(err, errlen, "cgroup: out of memory");
		return NULL;
	}
	if (cg_paths(cg, name) < 0 || cg_objects(cg) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot describe %s: %s", name, strerror(errno));
		goto err_free;
	}
	c = ctrl_of(cg, "pids");
	if (!c || cgroup_add_value_uint64(c, "pids.max", pids_max) != 0)
		goto err_value;
	if (S.mem.on && memory_max > 0) {
		long pg = sysconf(_SC_PAGESIZE);
		char mem_parent[PATH_MAX * 2];

		/* The kernel rounds limits down to whole pages; do it here so
		 * the read-back below compares like with like. */
		mem = memory_max - memory_max % (uint64_t)pg;
		if (mem == 0)
			mem = (uint64_t)pg;
		pathf(mem_parent, sizeof(mem_parent), "%s/%s", S.mem.mnt, S.mem.parent);
		c = ctrl_of(cg, "memory");
		if (!c)
			goto err_value;
		if (S.layout == LAYOUT_V2) {
			if (cgroup_add_value_uint64(c, "memory.max", mem) != 0)
				goto err_value;
			/* No swap for runs; only when swap accounting exists. */
			if (exists_in(mem_parent, "memory.swap.max") &&
			    cgroup_add_value_uint64(c, "memory.swap.max", 0) != 0)
				goto err_value;
		} else {
			if (cgroup_add_value_uint64(c, "memory.limit_in_bytes", mem) != 0)
				goto err_value;
			/* memsw (memory+swap) must be >= the limit and exists only
			 * with swapaccount=1; set equal = no swap. */
			if (exists_in(mem_parent, "memory.memsw.limit_in_bytes") &&
			    cgroup_add_value_uint64(c, "memory.memsw.limit_in_bytes", mem) != 0)
				goto err_value;
		}
	}

	pthread_mutex_lock(&lc_lock);
	rc = 0;
	for (int i = 0; i < cg->nlc && rc == 0; i++) {
		rc = cgroup_create_cgroup(cg->lc[i], 1);
		if (rc == 0)
			created = true;
	}
	pthread_mutex_unlock(&lc_lock);
	if (rc != 0) {
		e = lc_errno(rc);
		errmsg_set(err, errlen, "cgroup: cannot create %s: %s (%s)", name, cgroup_strerror(rc), strerror(e));
		errno = e;
		goto err_delete;
	}
	if (cg->own_v2_dir && mkdir(cg->v2_dir, 0755) < 0) {
		e = errno;
		errmsg_set(err, errlen, "cgroup: cannot create %s: %s", cg->v2_dir, strerror(e));
		errno = e;
		goto err_delete;
	}
	/* Fail closed: read the limits back instead of trusting that every
	 * value reached the kernel. */
	if (read_u64(cg->procs_dir, "pids.max", &got) < 0 || got != pids_max) {
		errmsg_set(err, errlen, "cgroup: pids.max of %s did not take effect", name);
		errno = EIO;
		goto err_delete;
	}
	if (mem && (read_u64(cg->mem_dir, S.layout == LAYOUT_V2 ? "memory.max" : "memory.limit_in_bytes", &got) < 0 ||
	            got != mem)) {
		errmsg_set(err, errlen, "cgroup: the memory limit of %s did not take effect", name);
		errno = EIO;
		goto err_delete;
	}
	return cg;

err_value:
	errmsg_set(err, errlen, "cgroup: cannot set a limit value for %s", name);
	errno = EINVAL;
	goto err_free;
err_delete:
	e = errno;
	if (created || cg->own_v2_dir) {
		pthread_mutex_lock(&lc_lock);
		for (int i = 0; i < cg->nlc; i++)
			cgroup_delete_cgroup_ext(cg->lc[i], CGFLAG_DELETE_EMPTY_ONLY);
		pthread_mutex_unlock(&lc_lock);
		if (cg->own_v2_dir)
			rmdir(cg->v2_dir);
	}
	errno = e;
err_free:
	e = errno;
	cg_free_objects(cg);
	free(cg);
	errno = e;
	return NULL;
}

int runcg_attach(struct run_cgroup *cg, pid_t pid)
{
	char path[PATH_MAX + 32], buf[32];
	int rc = 0, e = 0;

	if (!cg || pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	/* The unified (tracking) cgroup first: once the process is in it,
	 * cgroup.kill reaches it whatever happens next. */
	if (cg->own_v2_dir) {
		snprintf(buf, sizeof(buf), "%d", (int)pid);
		if (pathf(path, sizeof(path), "%s/cgroup.procs", cg->v2_dir) < 0 || write_str(path, buf) < 0)
			return -1;
	}
	pthread_mutex_lock(&lc_lock);
	for (int i = 0; i < cg->nlc && rc == 0; i++) {
		rc = cgroup_attach_task_pid(cg->lc[i], pid);
		if (rc)
			e = lc_errno(rc);
	}
	pthread_mutex_unlock(&lc_lock);
	if (rc != 0) {
		errno = e ? e : EIO;
		return -1;
	}
	return 0;
}

/* SIGKILL `pid` only if it is (still) in the run: the pidfd pins the process
 * so a recycled pid cannot be hit (pidfd_open(2)). */
static void kill_member(struct run_cgroup *cg, pid_t pid)
{
	char own[PATH_MAX];
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool member;

	if (fd < 0)
		return;
	if (S.layout == LAYOUT_V2)
		member = own_cgroup(pid, NULL, own, sizeof(own)) == 0;
	else
		member = own_cgroup(pid, "pids", own, sizeof(own)) == 0;
	/* own has no leading '/', pids_rel has one. */
	if (member && strcmp(own, cg->pids_rel + 1) == 0)
		syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	close(fd);
}

/* One pass over cgroup.procs; returns how many processes were listed. */
static int kill_pass(struct run_cgroup *cg)
{
	char path[PATH_MAX + 32];
	FILE *f;
	int pid, n = 0;

	if (pathf(path, sizeof(path), "%s/cgroup.procs", cg->procs_dir) < 0 || !(f = fopen(path, "re")))
		return errno == ENOENT ? 0 : -1;
	while (fscanf(f, "%d", &pid) == 1) {
		n++;
		kill_member(cg, pid);
	}
	fclose(f);
	return n;
}

static void freeze(struct run_cgroup *cg, bool on)
{
	char path[PATH_MAX + 32], buf[32];
	struct timespec ts = { 0, 200000 };

	if (pathf(path, sizeof(path), "%s/freezer.state", cg->frz_dir) < 0 ||
	    write_str(path, on ? "FROZEN" : "THAWED") < 0 || !on)
		return;
	/* FREEZING -> FROZEN is asynchronous; 50 ms at most, then go on (a
	 * partly frozen group is still better than none). */
	for (int i = 0; i < 250; i++) {
		if (read_small(path, buf, sizeof(buf)) > 0 && strncmp(buf, "FROZEN", 6) == 0)
			return;
		nanosleep(&ts, NULL);
	}
}

int runcg_kill(struct run_cgroup *cg)
{
	char path[PATH_MAX + 32];
	struct timespec ts = { 0, 2000000 };
	int round, n;

	if (!cg) {
		errno = EINVAL;
		return -1;
	}
	if (cg->v2_dir[0]) {
		/* cgroup.kill (Linux 5.14, commit 661ee6280) SIGKILLs the whole
		 * subtree and processes forking concurrently. */
		if (pathf(path, sizeof(path), "%s/cgroup.kill", cg->v2_dir) < 0 || write_str(path, "1") < 0)
			return errno == ENOENT ? 0 : -1;
		/* Hybrid: a process attached to the pids cgroup only (attach
		 * half done) is still caught by one pass below. */
		if (cg->own_v2_dir && kill_pass(cg) < 0 && errno != ENOENT)
			return -1;
		return 0;
	}
	for (round = 0; round < KILL_ROUNDS; round++) {
		if (cg->frz_dir[0])
			freeze(cg, true);
		n = kill_pass(cg);
		if (cg->frz_dir[0])
			freeze(cg, false); /* SIGKILL is acted on when thawed */
		if (n <= 0)
			return n;
		nanosleep(&ts, NULL);
	}
	errno = EBUSY;
	return -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 when no process is left in any hierarchy of the run. */
static int is_empty(struct run_cgroup *cg)
{
	char path[PATH_MAX + 32], buf[256];
	int pid;
	FILE *f;

	if (cg->v2_dir[0]) {
		if (pathf(path, sizeof(path), "%s/cgroup.events", cg->v2_dir) < 0)
			return -1;
		if (read_small(path, buf, sizeof(buf)) < 0) {
			if (errno != ENOENT)
				return -1;
		} else if (!strstr(buf, "populated 0")) {
			return 0;
		}
		if (!cg->own_v2_dir)
			return 1;
	}
	if (pathf(path, sizeof(path), "%s/cgroup.procs", cg->procs_dir) < 0)
		return -1;
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? 1 : -1;
	pid = 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid == 0;
}

int runcg_wait_empty(struct run_cgroup *cg, int timeout_ms)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	char path[PATH_MAX + 32];
	int fd = -1, r, rc = -1;

	if (!cg) {
		errno = EINVAL;
		return -1;
	}
	/* cgroup.events raises POLLPRI on every change (cgroup-v2.rst). */
	if (cg->v2_dir[0] && pathf(path, sizeof(path), "%s/cgroup.events", cg->v2_dir) == 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	for (;;) {
		int64_t left;

		r = is_empty(cg);
		if (r < 0)
			break;
		if (r == 1) {
			rc = 0;
			break;
		}
		left = deadline - now_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			break;
		}
		if (left > 20)
			left = 20;
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLPRI };
			char buf[128];
			poll(&p, 1, (int)left);
			/* Re-arm: kernfs notifies after a read from offset 0. */
			if (pread(fd, buf, sizeof(buf), 0) < 0)
				break;
		} else {
			struct timespec ts = { 0, (left > 2 ? 2 : left) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return rc;
}

int runcg_destroy(struct run_cgroup *cg)
{
	int rc = 0, e = 0;

	if (!cg)
		return 0;
	/* EMPTY_ONLY: plain rmdir, ECGNONEMPTY if busy.  The default delete
	 * would migrate leftovers into the parent, i.e. quietly set an escaped
	 * process free of the run's limits. */
	pthread_mutex_lock(&lc_lock);
	for (int i = 0; i < cg->nlc; i++) {
		int r = cgroup_delete_cgroup_ext(cg->lc[i], CGFLAG_DELETE_EMPTY_ONLY);
		if (r != 0 && rc == 0) {
			rc = -1;
			e = lc_errno(r);
		}
	}
	pthread_mutex_unlock(&lc_lock);
	if (cg->own_v2_dir && rmdir(cg->v2_dir) < 0 && errno != ENOENT && rc == 0) {
		rc = -1;
		e = errno;
	}
	/* libcgroup 2.0.2 does not report ECGNONEMPTY ("more or less not an
	 * error", api.c): the directories themselves are the answer. */
	if (rc == 0) {
		const char *dirs[4] = { cg->procs_dir, cg->mem_dir, cg->frz_dir, cg->v2_dir };
		for (int i = 0; i < 4; i++) {
			if (dirs[i][0] && access(dirs[i], F_OK) == 0) {
				rc = -1;
				e = EBUSY;
			}
		}
	}
	cg_free_objects(cg);
	free(cg);
	if (rc)
		errno = e;
	return rc;
}

/* Add the subdirectory names of dir to names (deduplicated). */
static int collect(const char *dir, char (*names)[NAME_MAX_LEN + 1], int *n, int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		int i;
		if (de->d_type != DT_DIR || !name_ok(de->d_name))
			continue;
		for (i = 0; i < *n; i++)
			if (strcmp(names[i], de->d_name) == 0)
				break;
		if (i == *n && *n < max) /* name_ok() bounded the length */
			memcpy(names[(*n)++], de->d_name, strlen(de->d_name) + 1);
	}
	closedir(d);
	return 0;
}

int runcg_cleanup_stale(char *err, size_t errlen)
{
	enum { MAX_STALE = 4096 };
	char (*names)[NAME_MAX_LEN + 1];
	const struct hier *hs[4] = { &S.pids, &S.mem, &S.frz, &S.track };
	char dir[PATH_MAX * 2];
	int n = 0, removed = 0, failed = 0;

	if (!S.ready) {
		errmsg_set(err, errlen, "cgroup: runcg_init was not called");
		errno = EINVAL;
		return -1;
	}
	if (!(names = calloc(MAX_STALE, sizeof(*names)))) {
		errmsg_set(err, errlen, "cgroup: out of memory");
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (!hs[i]->on)
			continue;
		if (pathf(dir, sizeof(dir), "%s/%s", hs[i]->mnt, hs[i]->parent) < 0 ||
		    collect(dir, names, &n, MAX_STALE) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot list %s: %s", dir, strerror(errno));
			free(names);
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		struct run_cgroup *cg = calloc(1, sizeof(*cg));

		if (!cg || cg_paths(cg, names[i]) < 0 || cg_objects(cg) < 0) {
			if (cg)
				cg_free_objects(cg);
			free(cg);
			failed++;
			continue;
		}
		/* v1 leftovers may exist in some hierarchies only; kill in each
		 * way we have, then remove what is there. */
		runcg_kill(cg);
		if (runcg_wait_empty(cg, STALE_WAIT_MS) < 0)
			failed++;
		if (runcg_destroy(cg) < 0)
			failed++;
		else
			removed++;
	}
	free(names);
	if (failed) {
		errmsg_set(err, errlen, "cgroup: %d stale run cgroup(s) of a previous daemon could not be removed; a process in them "
		           "would not die: look with systemd-cgls or ls /sys/fs/cgroup, and reboot if it is stuck in the kernel",
		       failed);
		errno = EBUSY;
		return -1;
	}
	return removed;
}

/* ---- read-only probe (sharnessd --doctor) ----------------------------- */

/* The mount point of the v1 hierarchy holding `ctrl`, from /proc/self/mounts
 * (what libcgroup's cgroup_init reads too). */
static bool probe_v1_mount(const char *ctrl, char *out, size_t outlen)
{
	char line[PATH_MAX + 256], dev[64], mnt[PATH_MAX], type[32], opts[512];
	FILE *f = fopen("/proc/self/mounts", "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;
		if (sscanf(line, "%63s %4095s %31s %511s", dev, mnt, type, opts) != 4 || strcmp(type, "cgroup") != 0)
			continue;
		for (tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (strcmp(tok, ctrl) == 0)
				found = pathf(out, outlen, "%s", mnt) == 0;
	}
	fclose(f);
	return found;
}

void runcg_probe(struct runcg_probe *p)
{
	char mnt[PATH_MAX], own[PATH_MAX], ctrls[PATH_MAX * 2];

	memset(p, 0, sizeof(*p));
	p->systemd = systemd_booted();
	if (is_cgroup2("/sys/fs/cgroup")) {
		snprintf(p->layout, sizeof(p->layout), "v2");
		if (own_cgroup(getpid(), NULL, own, sizeof(own)) < 0)
			own[0] = '\0';
		p->at_root = own[0] == '\0' || !p->systemd;
		if (p->at_root)
			snprintf(p->base, sizeof(p->base), "/sys/fs/cgroup");
		else
			pathf(p->base, sizeof(p->base), "/sys/fs/cgroup/%s", own);
		p->delegated = !p->at_root && is_delegated(p->base);
		/* Not delegated: the transient scope gets what the root offers. */
		pathf(ctrls, sizeof(ctrls), "%s/cgroup.controllers",
		      p->at_root || !p->delegated ? "/sys/fs/cgroup" : p->base);
		p->pids = file_has_word(ctrls, "pids");
		p->memory = file_has_word(ctrls, "memory");
		p->writable = access(p->base, W_OK) == 0;
		return;
	}
	if (!probe_v1_mount("pids", mnt, sizeof(mnt)))
		return;
	snprintf(p->layout, sizeof(p->layout), is_cgroup2(UNIFIED_MNT) ? "hybrid" : "v1");
	p->pids = true;
	if (own_cgroup(getpid(), "pids", own, sizeof(own)) < 0)
		own[0] = '\0';
	pathf(p->base, sizeof(p->base), own[0] ? "%s/%s" : "%s%s", mnt, own);
	p->writable = access(p->base, W_OK) == 0;
	p->memory = probe_v1_mount("memory", ctrls, sizeof(ctrls));
}
