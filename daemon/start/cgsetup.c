/*
 * cgsetup.c - the cgroup side of start-up (see cgsetup.h): which layout this
 * system has, the delegated subtree the runs go to, the crash recovery of a
 * predecessor's run cgroups, and the doctor's probe.  It fills the state
 * (runcg_layout.h) that the per-run code in root/runcg.c reads.
 *
 * Trust: privileged, at start.
 */
#include "cgsetup.h"
#include "errmsg.h"
#include "fdio.h"
#include "runcg.h"
#include "runcg_layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
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

/* Helpers only the start-up needs (runcg_layout.h has the shared ones). */
static bool cg_is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* "a" + "b" -> "a/b", "" + "b" -> "b". */
static int cg_relj(char *out, size_t len, const char *a, const char *b)
{
	return a[0] ? cg_pathf(out, len, "%s/%s", a, b) : cg_pathf(out, len, "%s", b);
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
	if (cg_pathf(h->mnt, sizeof(h->mnt), "%s", mnt) < 0 || cg_own_cgroup(getpid(), ctrl, own, sizeof(own)) < 0 ||
	    cg_relj(h->parent, sizeof(h->parent), own, S.parent_name) < 0 ||
	    cg_pathf(dir, sizeof(dir), "%s/%s", h->mnt, h->parent) < 0 || cg_mkdir_ok(dir) < 0) {
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

	if (cg_pathf(path, sizeof(path), "%s/cgroup.subtree_control", dir) < 0)
		return -1;
	while (*p) {
		size_t n = strcspn(p, " ");
		if (n > 0 && n < sizeof(tok) - 1) {
			memcpy(tok, p, n);
			tok[n] = '\0';
			snprintf(buf, sizeof(buf), "+%s", tok);
			if (fdio_write_file(path, buf) < 0) {
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

	if (cg_pathf(leaf, sizeof(leaf), "%s/daemon", dir) < 0 || cg_pathf(runs, sizeof(runs), "%s/runs", dir) < 0 ||
	    cg_pathf(procs, sizeof(procs), "%s/cgroup.procs", leaf) < 0) {
		errmsg_set(err, errlen, "cgroup: path too long: %s", dir);
		return -1;
	}
	/* The no-internal-process rule: a cgroup with controllers enabled for
	 * its children may hold no process, so we leave our own cgroup for a
	 * leaf before touching subtree_control (cgroups(7), "no internal
	 * processes" rule; systemd docs/CGROUP_DELEGATION.md). */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (cg_mkdir_ok(leaf) < 0 || fdio_write_file(procs, pid) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot move the daemon into %s: %s", leaf, strerror(errno));
		return -1;
	}
	if (enable_ctrls(dir, controllers, err, errlen) < 0)
		return -1;
	if (cg_mkdir_ok(runs) < 0) {
		errmsg_set(err, errlen, "cgroup: cannot create %s: %s", runs, strerror(errno));
		return -1;
	}
	return enable_ctrls(runs, controllers, err, errlen);
}

static bool file_has_word(const char *path, const char *word)
{
	char buf[1024], *tok, *save = NULL;

	if (fdio_read_file(path, buf, sizeof(buf)) < 0)
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
	if (!cg_is_cgroup2("/sys/fs/cgroup") || !systemd_booted() || cg_own_cgroup(getpid(), NULL, own, sizeof(own)) < 0)
		return false;
	if (own[0] == '\0' || cg_pathf(dir, sizeof(dir), "/sys/fs/cgroup/%s", own) < 0)
		return false;
	return !is_delegated(dir);
}

const char *runcg_pids_fix(void)
{
	char cmdline[4096], *p;
	if (fdio_read_file("/proc/cmdline", cmdline, sizeof(cmdline)) > 0) {
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

	if (cg_own_cgroup(getpid(), NULL, own, sizeof(own)) < 0) {
		errmsg_set(err, errlen, "cgroup: no v2 entry in /proc/self/cgroup");
		return -1;
	}
	at_root = own[0] == '\0' || !systemd_booted();
	if (!at_root) {
		if (cg_pathf(base, sizeof(base), "%s", own) < 0 || cg_pathf(dir, sizeof(dir), "%s/%s", mnt, base) < 0) {
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
	} else if (cg_pathf(base, sizeof(base), "%s", S.parent_name) < 0 ||
	           cg_pathf(dir, sizeof(dir), "%s/%s", mnt, base) < 0) {
		errmsg_set(err, errlen, "cgroup: path too long");
		return -1;
	}
	/* What the root (no systemd) or the delegation point offers. */
	if (cg_pathf(ctrls, sizeof(ctrls), "%s/cgroup.controllers", at_root ? mnt : dir) < 0 ||
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
		if (cg_mkdir_ok(dir) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot create %s: %s", dir, strerror(errno));
			return -1;
		}
		if (enable_ctrls(dir, want, err, errlen) < 0)
			return -1;
		if (cg_pathf(runs, sizeof(runs), "%s/runs", dir) < 0 || cg_mkdir_ok(runs) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot create %s/runs: %s", dir, strerror(errno));
			return -1;
		}
		if (enable_ctrls(runs, want, err, errlen) < 0)
			return -1;
	} else if (runcg_v2_delegate(dir, want, err, errlen) < 0) {
		return -1;
	}
	cg_pathf(S.pids.mnt, sizeof(S.pids.mnt), "%s", mnt);
	if (cg_pathf(S.pids.parent, sizeof(S.pids.parent), "%s/runs", base) < 0)
		return -1;
	S.pids.on = true;
	S.made_parent = at_root;
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
	return cg_pathf(out, outlen, "%s/%s", S.pids.mnt, S.pids.parent);
}

int runcg_cleanup_previous(const char *dir, char *err, size_t errlen)
{
	char own[PATH_MAX * 2], path[PATH_MAX * 3];
	int removed = 0;

	/* Our own runs directory is runcg_cleanup_stale's; only a v2 directory
	 * elsewhere (the scope of an earlier start) is handled here. */
	if (runcg_runs_dir(own, sizeof(own)) < 0 || strcmp(own, dir) == 0 || !cg_is_cgroup2(dir))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !cg_name_ok(de->d_name))
			continue;
		if (cg_pathf(path, sizeof(path), "%s/%s/cgroup.kill", dir, de->d_name) < 0)
			continue;
		fdio_write_file(path, "1");
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

static void remove_parents(void);

/* The layout is complete: ready for runs if a run's directory fits; if not,
 * the parents just made go again, so a refusal leaves nothing behind. */
static int ready(char *err, size_t errlen)
{
	const struct hier *h = cg_dir_too_long();

	if (h) {
		errmsg_set(
		    err, errlen,
		    "cgroup: the run cgroups' directory is too long (a run's must fit in %d bytes): start "
		    "sharnessd from a cgroup nearer the root than %s/%s",
		    RUN_DIR_MAX, h->mnt, h->parent);
		remove_parents();
		errno = ENAMETOOLONG;
		return -1;
	}
	S.ready = true;
	return 0;
}

int runcg_init_named(const char *parent, bool legacy_only, char *err, size_t errlen)
{
	char *mnt = NULL;
	int rc;

	S.ready = false;
	S.made_parent = false;
	memset(&S.pids, 0, sizeof(S.pids));
	memset(&S.mem, 0, sizeof(S.mem));
	memset(&S.frz, 0, sizeof(S.frz));
	memset(&S.track, 0, sizeof(S.track));
	if (!cg_name_ok(parent)) {
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
	if (cg_is_cgroup2(mnt)) {
		S.layout = LAYOUT_V2;
		rc = setup_v2(mnt, err, errlen);
		free(mnt);
		if (rc < 0)
			goto fail;
		return ready(err, errlen);
	}
	free(mnt);
	if (setup_v1(&S.pids, "pids", true, err, errlen) < 0 || setup_v1(&S.mem, "memory", false, err, errlen) < 0)
		goto fail;
	S.layout = LAYOUT_V1;
	S.made_parent = true;
	if (!legacy_only && cg_is_cgroup2(UNIFIED_MNT)) {
		char own[PATH_MAX], dir[PATH_MAX * 2];

		/* Hybrid: the controller-less v2 tree allows internal processes, so
		 * no leaf move is needed here. */
		if (cg_own_cgroup(getpid(), NULL, own, sizeof(own)) < 0 ||
		    cg_relj(S.track.parent, sizeof(S.track.parent), own, S.parent_name) < 0 ||
		    cg_pathf(dir, sizeof(dir), "%s/%s", UNIFIED_MNT, S.track.parent) < 0 || cg_mkdir_ok(dir) < 0) {
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
	return ready(err, errlen);
fail:
	if (errno == 0)
		errno = ENODEV;
	return -1;
}

void runcg_parent_name(char *out, size_t outlen, unsigned uid_first)
{
	snprintf(out, outlen, "sharness-%u", uid_first);
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

/* Add the subdirectory names of dir to names (deduplicated). */
static int collect(const char *dir, char (*names)[NAME_MAX_LEN + 1], int *n, int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		int i;
		if (de->d_type != DT_DIR || !cg_name_ok(de->d_name))
			continue;
		for (i = 0; i < *n; i++)
			if (strcmp(names[i], de->d_name) == 0)
				break;
		if (i == *n && *n < max) /* cg_name_ok() bounded the length */
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
		if (cg_pathf(dir, sizeof(dir), "%s/%s", hs[i]->mnt, hs[i]->parent) < 0 ||
		    collect(dir, names, &n, MAX_STALE) < 0) {
			errmsg_set(err, errlen, "cgroup: cannot list %s: %s", dir, strerror(errno));
			free(names);
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		struct run_cgroup *cg = malloc(sizeof(*cg));

		if (!cg || cg_paths(cg, names[i]) < 0) {
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

void runcg_remove_parent(void)
{
	if (S.ready)
		remove_parents();
}

static void remove_parents(void)
{
	const struct hier *hs[4] = {&S.pids, &S.mem, &S.frz, &S.track};
	char dir[PATH_MAX * 2];

	if (!S.made_parent)
		return;
	/* rmdir removes only an empty cgroup: a busy one (EBUSY) stays, and the
	 * hierarchies that share a directory see ENOENT after the first. */
	for (int i = 0; i < 4; i++) {
		if (!hs[i]->on || cg_pathf(dir, sizeof(dir), "%s/%s", hs[i]->mnt, hs[i]->parent) < 0)
			continue;
		rmdir(dir);
		if (S.layout == LAYOUT_V2) { /* <parent>/runs, then <parent> */
			char *slash = strrchr(dir, '/');
			*slash = '\0';
			rmdir(dir);
		}
	}
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
				found = cg_pathf(out, outlen, "%s", mnt) == 0;
	}
	fclose(f);
	return found;
}

/* Note dir as where runs would go if it is longer than the one noted. */
static void probe_runs_dir(struct runcg_probe *p, const char *dir)
{
	if (strlen(dir) > strlen(p->runs_dir))
		snprintf(p->runs_dir, sizeof(p->runs_dir), "%s", dir);
}

/* The v1 hierarchy holding ctrl (NULL: the hybrid's unified tree), mounted
 * at mnt: where start-up's setup_v1 (or its hybrid part) would put the runs. */
static void probe_v1_runs_dir(struct runcg_probe *p, const char *ctrl, const char *mnt, const char *parent)
{
	char own[PATH_MAX], dir[PATH_MAX * 2];

	if (cg_own_cgroup(getpid(), ctrl, own, sizeof(own)) == 0 &&
	    cg_pathf(dir, sizeof(dir), own[0] ? "%s/%s/%s" : "%s%s/%s", mnt, own, parent) == 0)
		probe_runs_dir(p, dir);
}

void runcg_probe(struct runcg_probe *p, const char *parent)
{
	char mnt[PATH_MAX], own[PATH_MAX], ctrls[PATH_MAX * 2], dir[PATH_MAX * 2];

	memset(p, 0, sizeof(*p));
	p->systemd = systemd_booted();
	if (cg_is_cgroup2("/sys/fs/cgroup")) {
		snprintf(p->layout, sizeof(p->layout), "v2");
		if (cg_own_cgroup(getpid(), NULL, own, sizeof(own)) < 0)
			own[0] = '\0';
		p->at_root = own[0] == '\0' || !p->systemd;
		if (p->at_root)
			snprintf(p->base, sizeof(p->base), "/sys/fs/cgroup");
		else
			cg_pathf(p->base, sizeof(p->base), "/sys/fs/cgroup/%s", own);
		p->delegated = !p->at_root && is_delegated(p->base);
		/* Not delegated: the transient scope gets what the root offers. */
		cg_pathf(ctrls, sizeof(ctrls), "%s/cgroup.controllers",
		      p->at_root || !p->delegated ? "/sys/fs/cgroup" : p->base);
		p->pids = file_has_word(ctrls, "pids");
		p->memory = file_has_word(ctrls, "memory");
		p->writable = access(p->base, W_OK) == 0;
		p->write_errno = p->writable ? 0 : errno;
		/* setup_v2: <root>/<parent>/runs, or <delegated cgroup>/runs. */
		if (p->at_root)
			cg_pathf(p->runs_dir, sizeof(p->runs_dir), "%s/%s/runs", p->base, parent);
		else if (p->delegated)
			cg_pathf(p->runs_dir, sizeof(p->runs_dir), "%s/runs", p->base);
		p->runs_dir_fits = strlen(p->runs_dir) <= RUNS_DIR_MAX;
		return;
	}
	if (!probe_v1_mount("pids", mnt, sizeof(mnt)))
		return;
	snprintf(p->layout, sizeof(p->layout), cg_is_cgroup2(UNIFIED_MNT) ? "hybrid" : "v1");
	p->pids = true;
	if (cg_own_cgroup(getpid(), "pids", own, sizeof(own)) < 0)
		own[0] = '\0';
	cg_pathf(p->base, sizeof(p->base), own[0] ? "%s/%s" : "%s%s", mnt, own);
	p->writable = access(p->base, W_OK) == 0;
	p->write_errno = p->writable ? 0 : errno;
	if (cg_pathf(dir, sizeof(dir), "%s/%s", p->base, parent) == 0) /* setup_v1's, for pids */
		probe_runs_dir(p, dir);
	p->memory = probe_v1_mount("memory", ctrls, sizeof(ctrls));
	if (p->memory)
		probe_v1_runs_dir(p, "memory", ctrls, parent);
	if (strcmp(p->layout, "hybrid") == 0)
		probe_v1_runs_dir(p, NULL, UNIFIED_MNT, parent);
	else if (probe_v1_mount("freezer", ctrls, sizeof(ctrls)))
		probe_v1_runs_dir(p, "freezer", ctrls, parent);
	p->runs_dir_fits = strlen(p->runs_dir) <= RUNS_DIR_MAX;
}
