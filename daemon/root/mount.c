/*
 * mount.c - build the run's file system view (see mount.h).
 *
 * Every source tree is cloned with open_tree(OPEN_TREE_CLONE) *before*
 * anything is mounted, so later mounts (the tmpfs root, /tmp) cannot shadow
 * a source, and each clone gets its attributes (read-only, noexec, idmap)
 * while still detached, which is the only time MOUNT_ATTR_IDMAP may be set
 * (mount_setattr(2)).  Then the clones are moved into a tmpfs, we pivot into
 * it, and the tmpfs root itself is made read-only.
 */
#include "errmsg.h"
#include "mount.h"
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#define MOUNT_TREES_MAX (12 + 4 * PROFILE_LIST_MAX)

struct tree {
	int fd;
	const char *target;    /* absolute path inside the new root (the profile's
	                        * or a constant: they outlive the view), or ... */
	const char *ws_rel;    /* ... a path relative to the workspace, resolved
	                        * beneath it without following symlinks out */
	unsigned resolve;      /* RESOLVE_* flags for ws_rel */
	bool is_file;
};

struct view {
	struct tree t[MOUNT_TREES_MAX];
	size_t n;
};

/* Writable mounts must never be executable either: Landlock's missing
 * EXECUTE right does not stop `ld.so ./bin`, MS_NOEXEC does. */
#define ATTR_RO_EXEC (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define ATTR_RO_NOEXEC (ATTR_RO_EXEC | MOUNT_ATTR_NOEXEC)
#define ATTR_RW_NOEXEC (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* Clone the tree at O_PATH fd `at` (taking the fd), set its attributes
 * while it is still detached, and append it to the view.  `src` names it
 * in an error. */
static struct tree *view_push(struct view *v, int at, bool recursive, uint64_t attr, int userns_fd,
                              const char *src)
{
	struct stat st;
	struct tree *t = NULL;
	int fd = -1;

	if (v->n >= MOUNT_TREES_MAX) {
		errno = E2BIG;
		errmsg_op_failed("open_tree", src);
		goto out;
	}
	unsigned flags = AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0);
	if (fstat(at, &st) < 0 || (fd = open_tree(at, "", flags)) < 0) {
		errmsg_op_failed("open_tree", src);
		goto out;
	}
	struct mount_attr a = {.attr_set = attr};
	if (userns_fd >= 0) {
		a.attr_set |= MOUNT_ATTR_IDMAP;
		a.userns_fd = (uint64_t)userns_fd;
	}
	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0) {
		errmsg_op_failed(userns_fd >= 0 ? "mount_setattr(idmap)" : "mount_setattr", src);
		goto out;
	}
	t = &v->t[v->n++];
	*t = (struct tree){.fd = fd, .is_file = !S_ISDIR(st.st_mode)};
	fd = -1;
out:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	close(at);
	errno = e;
	return t;
}

static int view_add(struct view *v, const char *src, const char *target, uint64_t attr,
                    int userns_fd, bool recursive)
{
	int at = open(src, O_PATH | O_CLOEXEC);
	if (at < 0)
		return errmsg_op_failed("open", src);
	struct tree *t = view_push(v, at, recursive, attr, userns_fd, src);
	if (!t)
		return -1;
	t->target = target;
	return 0;
}

int mount_open_beneath(int dirfd, const char *rel, unsigned resolve)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
	                       .resolve = resolve | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
}

int mount_open_workspace(const char *path, const struct stat *want)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	struct stat st;
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0 && want &&
	    (fstat(fd, &st) < 0 || st.st_dev != want->st_dev || st.st_ino != want->st_ino)) {
		close(fd);
		errno = ESTALE;
		fd = -1;
	}
	return fd;
}

/* A tree below the workspace (an exec subpath, .git).  Resolved beneath the
 * workspace: a symlink planted by an earlier run can never make us clone,
 * and then mount writable or executable, something outside it.  Returns 0
 * also when the path does not resolve (nothing to bind). */
static int view_add_beneath(struct view *v, int wsfd, const char *rel, unsigned resolve, uint64_t attr,
                            int userns_fd)
{
	/* On the host: not across a mount either (a bind planted in the
	 * workspace by someone else is not the workspace). */
	int at = mount_open_beneath(wsfd, rel, resolve | RESOLVE_NO_XDEV);
	if (at < 0)
		return errno == ENOENT || errno == ELOOP || errno == EXDEV || errno == ENOTDIR ? 0 : -1;
	struct tree *t = view_push(v, at, false, attr, userns_fd, rel);
	if (!t)
		return -1;
	t->ws_rel = rel;
	t->resolve = resolve;
	return 0;
}

static int join(char *buf, size_t len, const char *a, const char *b)
{
	if (snprintf(buf, len, "%s%s", a, b) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* mkdir -p of `path` below `root` (both absolute), its last component a
 * directory or (`file`) an empty file of `mode`. */
static int make_under(const char *root, const char *path, mode_t mode, bool file)
{
	char buf[PATH_MAX];
	int fd;
	if (join(buf, sizeof(buf), root, path) < 0)
		return -1;
	for (char *p = buf + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (!file)
		return mkdir(buf, mode) < 0 && errno != EEXIST ? -1 : 0;
	/* O_RDONLY: an existing mount point needs no write permission (seen
	 * through an idmapped workspace, root may have none). */
	if ((fd = open(buf, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode)) < 0)
		return -1;
	close(fd);
	return 0;
}

/* Clone every source the run may see.  Order matters: a tree must be moved
 * after the tree that contains its target (workspace before .git/hooks). */
static int view_collect(struct view *v, const struct sandbox_spec *s)
{
	const struct profile *p = s->profile;
	struct stat st;

	if (view_add(v, "/usr", "/usr", ATTR_RO_EXEC, -1, true) < 0 ||
	    view_add(v, "/etc", "/etc", ATTR_RO_NOEXEC, -1, true) < 0)
		return -1;
	/* Non-merged-/usr systems keep real directories at the top. */
	static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (lstat(top[i], &st) == 0 && S_ISDIR(st.st_mode) &&
		    view_add(v, top[i], top[i], ATTR_RO_EXEC, -1, true) < 0)
			return -1;
	if (stat("/opt", &st) == 0 && view_add(v, "/opt", "/opt", ATTR_RO_EXEC, -1, true) < 0)
		return -1;

	/* The workspace, only the directory the supervisor checked (a copy of
	 * its mount, in our namespace, is what we may clone), idmapped so files
	 * written there belong to its owner, never executable (exec subpaths
	 * are granted one by one below). */
	int wsfd = mount_open_workspace(s->workspace, &s->workspace_st);
	if (wsfd < 0)
		return errmsg_op_failed("open", s->workspace);
	struct tree *ws = view_push(v, fcntl(wsfd, F_DUPFD_CLOEXEC, 0), false,
	                            p->workspace_write ? ATTR_RW_NOEXEC : ATTR_RO_NOEXEC, s->userns_fd, s->workspace);
	if (!ws)
		return close(wsfd), -1;
	ws->target = s->workspace;
	int rc = 0;
	/* Exec subpaths: no symlink anywhere on the way. */
	for (size_t i = 0; i < p->n_workspace_exec && rc == 0; i++) {
		uint64_t attr = p->workspace_write ? (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) : ATTR_RO_EXEC;
		rc = view_add_beneath(v, wsfd, p->workspace_exec[i], RESOLVE_NO_SYMLINKS, attr, s->userns_fd);
	}
	/* A hook or a config planted in .git runs outside the sandbox at the
	 * person's next git command, and git reads far more than hooks/ and
	 * config (commondir, config.worktree, worktrees/): all of .git is
	 * read-only, and as a mount point it cannot be renamed or replaced.
	 * A .git symlink is followed only while it stays in the workspace. */
	if (p->workspace_write && rc == 0)
		rc = view_add_beneath(v, wsfd, ".git", 0, ATTR_RO_NOEXEC, s->userns_fd);
	close(wsfd);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < p->n_read_paths; i++)
		if (view_add(v, p->read_paths[i], p->read_paths[i], ATTR_RO_NOEXEC, -1, true) < 0)
			return -1;
	for (size_t i = 0; i < p->n_write_paths; i++)
		if (view_add(v, p->write_paths[i], p->write_paths[i], ATTR_RW_NOEXEC, -1, true) < 0)
			return -1;
	for (size_t i = 0; i < p->n_exec_paths; i++)
		if (view_add(v, p->exec_paths[i], p->exec_paths[i], ATTR_RO_EXEC, -1, true) < 0)
			return -1;
	/* A linked worktree's or a submodule's shared git directory, outside
	 * the workspace (common/gitdir.h): git and the file actor read it
	 * there.  Read-only, idmapped as the workspace (start-up checked that
	 * its owner owns it), and only while it is the directory start-up
	 * opened: else left out, and the actor refuses the tree's writes. */
	int gitfd = s->git_dir ? mount_open_workspace(s->git_dir, s->git_dir_st) : -1;
	struct tree *g = gitfd < 0 ? NULL : view_push(v, gitfd, false, ATTR_RO_NOEXEC, s->userns_fd, s->git_dir);
	if (g)
		g->target = s->git_dir;
	return g || gitfd < 0 ? 0 : -1;
}

static int mount_tmpfs(const char *root, const char *path, unsigned long flags, const char *opts)
{
	char dst[PATH_MAX];
	if (join(dst, sizeof(dst), root, path) < 0 || make_under(root, path, 0755, false) < 0)
		return errmsg_op_failed("mkdir", path);
	if (mount("tmpfs", dst, "tmpfs", flags, opts) < 0)
		return errmsg_op_failed("mount(tmpfs)", dst);
	return 0;
}

static int bind_dev(const char *root, const char *name)
{
	char src[64], dst[PATH_MAX];
	snprintf(src, sizeof(src), "/dev/%s", name);
	if (join(dst, sizeof(dst), root, src) < 0 || make_under(root, src, 0644, true) < 0)
		return errmsg_op_failed("open(O_CREAT)", src);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return errmsg_op_failed("mount(bind)", src);
	return 0;
}

static int build_dev(const char *root)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	static const char *const links[][2] = {
		{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
		{"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}};
	char dst[PATH_MAX];

	if (mount_tmpfs(root, "/dev", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (bind_dev(root, nodes[i]) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(dst, sizeof(dst), "%s/dev/%s", root, links[i][1]);
		if (symlink(links[i][0], dst) < 0)
			return errmsg_op_failed("symlink", dst);
	}
	if (mount_tmpfs(root, "/dev/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=64m") < 0)
		return -1;
	if (join(dst, sizeof(dst), root, "/dev") < 0)
		return -1;
	/* The binds above are separate mounts and stay writable devices. */
	if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0)
		return errmsg_op_failed("mount(remount ro)", dst);
	return 0;
}

/* A fresh proc for the new pid namespace: the run sees only its own
 * processes.  vm.memfd_noexec is per pid namespace (since 6.3): 2 forbids
 * executable memfds, which Landlock cannot stop (execve of /proc/self/fd/N). */
static int build_proc(const char *root)
{
	char dst[PATH_MAX], sys[PATH_MAX], knob[PATH_MAX];
	if (join(dst, sizeof(dst), root, "/proc") < 0 || make_under(root, "/proc", 0555, false) < 0)
		return errmsg_op_failed("mkdir", "/proc");
	if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return errmsg_op_failed("mount(proc)", dst);
	if (join(knob, sizeof(knob), dst, "/sys/vm/memfd_noexec") < 0)
		return -1;
	int fd = open(knob, O_WRONLY | O_CLOEXEC);
	/* Before 6.3 the knob does not exist; the seccomp filter then denies
	 * memfd_create instead (seccomp.c, add_memfd_rule). */
	if (fd < 0 && !(errno == ENOENT && !seccomp_kernel_has_memfd_noexec()))
		return errmsg_op_failed("open", knob);
	if (fd >= 0) {
		ssize_t w = write(fd, "2", 1);
		close(fd);
		if (w != 1)
			return errmsg_op_failed("write", knob);
	}
	/* /proc/cmdline is the host's boot line (root device, kernel options,
	 * at times a secret passed to an initramfs): an empty, read-only file
	 * is bound over it.  The file is made on the new root's tmpfs and
	 * unlinked again; the bind keeps its inode. */
	char empty[PATH_MAX], cmdline[PATH_MAX];
	if (join(empty, sizeof(empty), root, "/.cmdline") < 0 || join(cmdline, sizeof(cmdline), dst, "/cmdline") < 0)
		return -1;
	int efd = open(empty, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
	if (efd < 0)
		return errmsg_op_failed("open(O_CREAT)", empty);
	close(efd);
	int bound = mount(empty, cmdline, NULL, MS_BIND, NULL);
	if (bound == 0)
		bound = mount(NULL, cmdline, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		              NULL);
	int e = errno;
	unlink(empty);
	errno = e;
	if (bound < 0)
		return errmsg_op_failed("mount(bind)", cmdline);
	if (join(sys, sizeof(sys), dst, "/sys") < 0)
		return -1;
	if (mount(sys, sys, NULL, MS_BIND | MS_REC, NULL) < 0)
		return errmsg_op_failed("mount(bind)", sys);
	if (mount(NULL, sys, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return errmsg_op_failed("mount(remount ro)", sys);
	return 0;
}

static int top_symlinks(const char *root)
{
	static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
	char target[PATH_MAX], dst[PATH_MAX];
	struct stat st;
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		if (lstat(top[i], &st) < 0 || !S_ISLNK(st.st_mode))
			continue;
		ssize_t n = readlink(top[i], target, sizeof(target) - 1);
		if (n < 0)
			return -1;
		target[n] = '\0';
		if (join(dst, sizeof(dst), root, top[i]) < 0 || symlink(target, dst) < 0)
			return -1;
	}
	return 0;
}

int mount_build(const struct sandbox_spec *s)
{
	struct view v; /* not "= {0}": 10 KiB of stack, three pages, zeroed for nothing */
	const char *root = s->newroot;
	char dst[PATH_MAX];
	int rc = -1;

	v.n = 0;
	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return errmsg_op_failed("mount(MS_PRIVATE)", "/");
	if (view_collect(&v, s) < 0)
		goto out;
	if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0) {
		errmsg_op_failed("mount(tmpfs)", root);
		goto out;
	}
	/* The private /tmp first: a workspace below /tmp is moved in on top
	 * of it, not hidden under it. */
	if (mount_tmpfs(root, "/tmp", MS_NOSUID | MS_NODEV | (s->profile->tmp_exec ? 0 : MS_NOEXEC),
	                "mode=1777,size=512m") < 0)
		goto out;
	for (size_t i = 0; i < v.n; i++) {
		struct tree *t = &v.t[i];
		if (t->ws_rel) {
			/* The target, resolved the same way inside the workspace
			 * mount moved in before it. */
			int wsfd = -1, tfd = -1;
			if (join(dst, sizeof(dst), root, s->workspace) == 0)
				wsfd = open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (wsfd >= 0)
				tfd = mount_open_beneath(wsfd, t->ws_rel, t->resolve);
			int moved = tfd >= 0 ? move_mount(t->fd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) : -1;
			int e = errno;
			if (tfd >= 0)
				close(tfd);
			if (wsfd >= 0)
				close(wsfd);
			errno = e;
			if (moved < 0) {
				errmsg_op_failed(wsfd < 0 ? "open" : tfd < 0 ? "openat2" : "move_mount", t->ws_rel);
				goto out;
			}
			continue;
		}
		if (make_under(root, t->target, t->is_file ? 0644 : 0755, t->is_file) < 0) {
			errmsg_op_failed(t->is_file ? "open(O_CREAT)" : "mkdir", t->target);
			goto out;
		}
		if (join(dst, sizeof(dst), root, t->target) < 0)
			goto out;
		if (move_mount(t->fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
			errmsg_op_failed("move_mount", dst);
			goto out;
		}
	}
	if (top_symlinks(root) < 0) {
		errmsg_op_failed("symlink", "/bin, /lib, ...");
		goto out;
	}
	if (build_dev(root) < 0 || build_proc(root) < 0)
		goto out;
	if (make_under(root, SANDBOX_HOME, 0755, false) < 0) {
		errmsg_op_failed("mkdir", SANDBOX_HOME);
		goto out;
	}
	/* pivot_root(".", ".") stacks the old root under the new one; detaching
	 * it leaves no path back to the host tree (pivot_root(2), NOTES). */
	if (chdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0) {
		errmsg_op_failed("pivot_root", root);
		goto out;
	}
	/* The root tmpfs only holds mount points: make it read-only. */
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0) {
		errmsg_op_failed("mount(remount ro)", "/");
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < v.n; i++)
		close(v.t[i].fd);
	return rc;
}
