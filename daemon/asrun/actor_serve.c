/*
 * actor_serve.c - the file actor's request loop (root/actor.c says why it
 * exists and what it refuses): it runs as the run, never as root.
 *
 * root/actor.c makes it and, before anything here runs, chroots it into
 * the run's root and drops it to the run's uid and gid with no capability,
 * no_new_privs and not dumpable; then it execs sharness-actor
 * (actor_main.c), which calls in here.  It reads one request at a
 * time from the supervisor over a socketpair (lengths and terminators
 * checked), resolves the parent directory once, asks the kernel where it
 * really is, and acts on that descriptor.
 *
 * Trust: the requests carry the run's own paths, copied by the supervisor
 * out of the run's memory: hostile.  Its rights are the run's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actor.h"
#include "actor_msg.h"
#include "actor_serve.h"
#include "connect_run.h"
#include "fdpath.h"
#include "gitpaths.h"
#include "guardnames.h"
#include "path.h"
#include "privsep.h"
#include "profile.h"
#include "sandbox.h"

#define LINK_DEPTH_MAX 40 /* as the kernel's MAXSYMLINKS */

static int hostproc = -1; /* the host's /proc, opened by root before the chroot */
static const char *guarded[1 + PROFILE_LIST_MAX]; /* the workspace and write paths */
static size_t n_guarded;
static const char *writable[1 + PROFILE_LIST_MAX]; /* where the run's Landlock lets it write */
static size_t n_writable;
static dev_t tmp_dev, shm_dev; /* and the run's private /tmp and /dev/shm, by device: a
                                * workspace below /tmp is mounted over it */
static struct gitrepos git_repos; /* what each repository's config names in its tree */

/* A FIFO (or a socket file) opens for writing even on a read-only mount,
 * where only Landlock stops a run: the actor, outside the run's domain,
 * checks it here.  Otherwise an analyse run could write into a FIFO of
 * the person's or of a build run in the workspace: a channel. */
static bool in_writable(int fd)
{
	char real[PATH_MAX];
	if (fdpath_of(hostproc, fd, real, sizeof(real)) < 0)
		return false;
	if (real[0] != '/')
		return true; /* a pipe or socket the run already holds (/proc/PID/fd) */
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_dev == tmp_dev || st.st_dev == shm_dev))
		return true;
	for (size_t i = 0; i < n_writable; i++)
		if (path_under(real, writable[i]))
			return true;
	return false;
}
static bool refused;       /* the last request was refused by a check here ... */
static const char *refused_why; /* ... for this reason */
static int refused_kind;        /* enum actor_denied */

/* Note why the request is refused (for the reply's denials): -err. */
static int refuse_as(int kind, int err, const char *why)
{
	refused = true;
	refused_kind = kind;
	refused_why = why;
	return -err;
}

static int refuse_why(int err, const char *why)
{
	return refuse_as(ACTOR_DENIED_GIT, err, why);
}

static int refuse(int err)
{
	return refuse_why(err, "it would create or change a .git");
}

/* A path the person's git runs or reads as config, or an AI agent's
 * configuration runs (gitpaths.h: `agent`). */
static int refuse_git_runs(const char *why, bool agent)
{
	return refuse_as(agent ? ACTOR_DENIED_AGENT : ACTOR_DENIED_GIT_RUNS, EACCES, why);
}

#define GIT_DIR_WHY "it would create or change a git directory (HEAD, objects, refs), which git reads by any name"

/* An AI agent's configuration (actor_serve.h). */
static int refuse_agent(int err)
{
	return refuse_as(ACTOR_DENIED_AGENT, err,
	                 "it would change an AI agent's configuration, which the agent runs on the host");
}

/* No setuid or setgid file, no chmod o+w (seccomp.c says why): the modes
 * are checked here since these calls all come here. */
static int refuse_mode(mode_t mode, bool chmod_call)
{
	if (!(mode & (S_ISUID | S_ISGID)) && !(chmod_call && (mode & S_IWOTH)))
		return 0;
	return refuse_as(ACTOR_DENIED_MODE, EPERM,
	                 chmod_call && (mode & S_IWOTH) ? "a world-writable mode" : "a setuid or setgid mode");
}

/* No device node: CAP_MKNOD, which no run has, guards all but the
 * whiteout (a character device 0:0, free to make since Linux 5.8), which
 * overlayfs reads as a deleted file. */
static int refuse_device(void)
{
	return refuse_as(ACTOR_DENIED_MODE, EPERM, "a device node");
}

static const char *op_name(uint32_t op)
{
	static const char *const names[] = {"?", "open", "mkdir", "mknod", "symlink", "link", "rename",
	                                    "unlink", "truncate", "chmod", "fchmod", "connect", "bind"};
	return op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

/* The length of the shortest guarded tree `path` lies in (without its
 * trailing slashes), or SIZE_MAX. */
static size_t guarded_len(const char *path, const char *const *trees, size_t n_trees)
{
	size_t skip = SIZE_MAX;
	for (size_t i = 0; i < n_trees; i++)
		if (trees[i] && path_under(path, trees[i])) {
			size_t n = strlen(trees[i]);
			while (n > 1 && trees[i][n - 1] == '/')
				n--;
			skip = skip == SIZE_MAX || n < skip ? n : skip;
		}
	return skip;
}

/* Is the component `name` (len bytes) of a path, with `rest` after it, a
 * repository (guardnames.h)? */
static bool git_at(const char *name, size_t len, const char *rest)
{
	(void)rest;
	return guard_name_is_git(name, len);
}

/* Is it an AI agent's configuration, but for a `.vscode` the run may
 * reach: the directory itself, or its `extensions.json` (guardnames.h)?
 * Trailing slashes count as none. */
static bool agent_config_at(const char *name, size_t len, const char *rest)
{
	if (!guard_name_is_agent_config(name, len))
		return false;
	if (!guard_name_is_vscode(name, len))
		return true;
	rest += strspn(rest, "/");
	size_t n = strcspn(rest, "/");
	return n && (rest[n + strspn(rest + n, "/")] != '\0' || !guard_name_is_vscode_free(rest, n));
}

/* Is `path` (absolute, as the kernel prints it) in a tree we guard - a
 * workspace or a write path of the profile, whatever lies above it - and
 * is one of its components below that tree one `at` takes?  The private
 * /tmp and /dev/shm are not guarded (gone with the run). */
static bool path_has(const char *path, const char *const *trees, size_t n_trees,
                     bool (*at)(const char *, size_t, const char *))
{
	size_t skip = guarded_len(path, trees, n_trees);
	if (skip == SIZE_MAX)
		return false;
	for (const char *p = path + skip; *p;) {
		p += strspn(p, "/");
		size_t len = strcspn(p, "/");
		if (len && at(p, len, p + len))
			return true;
		p += len;
	}
	return false;
}

bool actor_path_in_git(const char *path, const char *const *trees, size_t n_trees)
{
	return path_has(path, trees, n_trees, git_at);
}

bool actor_path_in_agent_config(const char *path, const char *const *trees, size_t n_trees)
{
	return path_has(path, trees, n_trees, agent_config_at);
}

/* Is the last component of `real` (absolute, as the kernel prints it) a
 * `.vscode`? */
static bool ends_in_vscode(const char *real)
{
	const char *last = strrchr(real, '/');
	last = last ? last + 1 : real;
	return guard_name_is_vscode(last, strlen(last));
}

/* Does the directory `name` in `dir` hold anything but what a run may
 * make in a `.vscode` (or is it not a directory one can list)? */
static bool vscode_holds_more(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return true;
	}
	bool more = false;
	for (struct dirent *e; !more && (e = readdir(d)) != NULL;)
		more = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		       !guard_name_is_vscode_free(e->d_name, strlen(e->d_name));
	closedir(d);
	return more;
}

/* Is there an entry `name` in the directory whose path is `dir` (len
 * bytes, with room for "/commondir" after it)?  1 yes, 0 no, -errno when
 * the kernel cannot say (a directory on the way the run made unsearchable,
 * a path too long): never taken for "no".  `adding` counts as there; `st`,
 * if given, gets the entry's. */
static int entry_state(char *dir, size_t len, const char *name, const char *adding, struct stat *st)
{
	struct stat own;
	if (adding && strcmp(adding, name) == 0)
		return 1;
	snprintf(dir + len, sizeof("/commondir"), "/%s", name);
	int rc = fstatat(AT_FDCWD, dir, st ? st : &own, AT_SYMLINK_NOFOLLOW) == 0 ? 1
	         : errno == ENOENT || errno == ENOTDIR                            ? 0
	                                                                           : -errno;
	dir[len] = '\0';
	return rc;
}

/* Fail closed: an entry the kernel cannot rule out counts as there. */
static bool has_entry(char *dir, size_t len, const char *name, const char *adding)
{
	return entry_state(dir, len, name, adding, NULL) != 0;
}

/* Is the directory at `dir` a git directory by git's own test (setup.c,
 * is_git_directory: HEAD, and objects and refs or a commondir file)?  Git
 * takes one by any name: the `.bare` that a `.git` gitfile or symlink
 * names, a separate or bare repository, Android repo's `projects/x.git`.
 * `adding`: an entry about to be made, counted as there. */
static bool is_git_dir(char *dir, size_t len, const char *adding)
{
	return has_entry(dir, len, "HEAD", adding) &&
	       ((has_entry(dir, len, "objects", adding) && has_entry(dir, len, "refs", adding)) ||
	        has_entry(dir, len, "commondir", adding));
}

#define UNSURE_WHY "a directory on the way cannot be searched, so the file actor cannot tell whether it is in a repository"

/* Is `real` (absolute, as the kernel prints it) a git directory or inside
 * one, from the guarded tree it lies in down?  1 yes, 0 no, -1 cannot
 * tell.  One fstatat a level (HEAD) where none is.  On the way, each
 * working tree with a .git (the workspace's own, a nested one) has its
 * config read (gitrepos_visit) before anything there is written: two
 * fstatat a level in all.  A level the kernel cannot search is "cannot
 * tell" (`chmod 000 ..` would hide a repository), but for `real` itself:
 * an unsearchable directory is acted on only as a whole (`chmod 755 d`
 * after `chmod 000 d`), nothing in it can be reached. */
static int in_git_dir(const char *real)
{
	char buf[PATH_MAX + sizeof("/commondir")];
	size_t skip = guarded_len(real, guarded, n_guarded), n = strlen(real);
	if (skip == SIZE_MAX)
		return 0;
	if (n >= PATH_MAX - 1)
		return -1; /* too long to tell */
	for (size_t i = skip; i <= n; i++)
		if (real[i] == '/' || real[i] == '\0') {
			struct stat st;
			memcpy(buf, real, i); /* the prefix alone: entry_state writes after it */
			buf[i] = '\0';
			int head = entry_state(buf, i, "HEAD", NULL, NULL);
			if (head == -EACCES && i == n)
				continue;
			if (head < 0)
				return -1;
			if (head && is_git_dir(buf, i, NULL))
				return 1;
			int dotgit = entry_state(buf, i, ".git", NULL, &st);
			if (dotgit < 0)
				return -1;
			/* A guarded tree's top is read without a .git too: what the
			 * agents' configuration there runs (agentpaths.h). */
			if (dotgit || i == skip)
				gitrepos_visit(&git_repos, hostproc, buf, dotgit ? st.st_dev : 0, dotgit ? st.st_ino : 0);
		}
	return 0;
}

/* 0, or the refusal for `real` (where the kernel says a descriptor is)
 * in a .git, a git directory or a path the person's git runs. */
static int path_git_check(const char *real)
{
	/* "pipe:[N]", "socket:[N]", "anon_inode:...": in no directory at all. */
	if (real[0] != '/')
		return 0;
	if (actor_path_in_git(real, guarded, n_guarded))
		return refuse(EROFS);
	if (actor_path_in_agent_config(real, guarded, n_guarded))
		return refuse_agent(EROFS);
	/* A .vscode itself (chmod, an entry made in it) only while it holds
	 * nothing but extensions.json: the person's may not be made group-
	 * writable or unreadable (review s37 fixes M2). */
	if (ends_in_vscode(real) && guarded_len(real, guarded, n_guarded) != SIZE_MAX && vscode_holds_more(AT_FDCWD, real))
		return refuse_agent(EROFS);
	int in_git = in_git_dir(real);
	if (in_git)
		return in_git > 0 ? refuse_why(EROFS, GIT_DIR_WHY) : refuse_why(EACCES, UNSURE_WHY);
	bool agent;
	const char *why = gitrepos_why(&git_repos, real, false, &agent);
	return why ? refuse_git_runs(why, agent) : 0;
}

/* 0, or the refusal for an fd in a .git, a git directory or a path the
 * person's git runs. */
static int fd_git_check(int fd)
{
	char real[PATH_MAX];
	if (fdpath_of(hostproc, fd, real, sizeof(real)) < 0)
		return refuse(EROFS); /* cannot tell (or cut): refuse */
	return path_git_check(real);
}

/* 0, or the refusal for the entry `name` in the directory at `dir` (n
 * bytes, room for a name after it; given back as it was) as a path the
 * person's git runs: it, under it or, for a new entry but a directory
 * (`making`), on the way to it. */
static int entry_git_runs(char *dir, size_t n, const char *name, bool making)
{
	if (git_repos.n == 0)
		return 0; /* no repository on the way (path_git_check walked it) */
	snprintf(dir + n, NAME_MAX + 2, "%s%s", dir[n - 1] == '/' ? "" : "/", name);
	bool agent;
	const char *why = gitrepos_why(&git_repos, dir, making, &agent);
	dir[n] = '\0';
	return why ? refuse_git_runs(why, agent) : 0;
}

/* Reopen an O_PATH descriptor as a real one: the same inode, no lookup. */
static int reopen(int pathfd, int flags)
{
	char link[32];
	snprintf(link, sizeof(link), "self/fd/%d", pathfd);
	return openat(hostproc, link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC | O_NOCTTY);
}

/* Reopen `cur` (O_PATH, an existing file) for writing, after the checks
 * an open by name and one through a /proc/PID/fd magic link both need: in
 * no git tree, and a FIFO or socket file only where the run's Landlock
 * lets it write, since one opens for writing on a read-only mount (else
 * an analyse run could write into a FIFO of the person's or of a build
 * run: a channel).  The new fd or -errno. */
static int reopen_checked(int cur, int flags)
{
	struct stat st;
	int rc = fd_git_check(cur);
	if (rc < 0)
		return rc;
	if (fstat(cur, &st) < 0)
		return -errno;
	if ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && !in_writable(cur))
		return -EACCES; /* what the run's Landlock answers */
	rc = reopen(cur, flags);
	return rc < 0 ? -errno : rc;
}

/* Split `path` into its parent (opened O_PATH, beneath `base`) and its
 * last component, copied to `name`.  Trailing slashes are dropped. */
static int open_parent(int base, const char *path, char *name, size_t namelen, bool *trailing_slash)
{
	char buf[PATH_MAX];
	size_t len = strnlen(path, sizeof(buf));
	if (len == 0)
		return -ENOENT;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	*trailing_slash = false;
	while (len > 1 && buf[len - 1] == '/') {
		buf[--len] = '\0';
		*trailing_slash = true;
	}
	char *slash = strrchr(buf, '/');
	const char *last = slash ? slash + 1 : buf;
	if (strlen(last) >= namelen)
		return -ENAMETOOLONG;
	snprintf(name, namelen, "%s", last);
	const char *dir = ".";
	if (slash == buf)
		dir = "/";
	else if (slash) {
		*slash = '\0';
		dir = buf;
	}
	int fd = openat(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* What becomes of an entry: an existing one changed or removed, a new
 * one (made, or renamed or linked there), a new empty directory. */
enum entry_use { ENTRY_OLD, ENTRY_NEW, ENTRY_NEW_DIR };

/* The checks for a new or changed entry `name` in directory `dir`. */
static int check_entry(int dir, const char *name, enum entry_use use)
{
	bool creating = use != ENTRY_OLD;
	char real[PATH_MAX + NAME_MAX + 2]; /* the directory, once; room for a name after it */
	ssize_t n = fdpath_of(hostproc, dir, real, PATH_MAX);
	if (n < 0)
		return refuse(EROFS); /* cannot tell (or cut): refuse */
	int rc = path_git_check(real);
	if (rc < 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return rc;
	if ((rc = entry_git_runs(real, (size_t)n, name, use == ENTRY_NEW)) < 0)
		return rc;
	if (guarded_len(real, guarded, n_guarded) != SIZE_MAX) {
		/* A .vscode may be made empty, and removed or moved while it holds
		 * nothing but its extensions.json; in it, only that file. */
		bool vscode_ok = guard_name_is_vscode(name, strlen(name)) &&
		                 (use == ENTRY_NEW_DIR || (use == ENTRY_OLD && !vscode_holds_more(dir, name)));
		if (guard_name_is_agent_config(name, strlen(name)) && !vscode_ok)
			return refuse_agent(creating ? EPERM : EROFS);
		if (ends_in_vscode(real) && !guard_name_is_vscode_free(name, strlen(name)))
			return refuse_agent(creating ? EPERM : EROFS);
	}
	bool dotgit = guard_name_is_git(name, strlen(name));
	bool mark = creating && (strcmp(name, "HEAD") == 0 || strcmp(name, "objects") == 0 ||
	                         strcmp(name, "refs") == 0 || strcmp(name, "commondir") == 0);
	if (dotgit) {
		/* In a free tree (a throw-away repository in /tmp) anything goes. */
		memcpy(real + n, "/.git", sizeof("/.git"));
		return actor_path_in_git(real, guarded, n_guarded) ? refuse(creating ? EPERM : EROFS) : 0;
	}
	/* The last of git's marks made in a guarded directory would make it a
	 * git directory; in a free tree, anything goes. */
	if (mark && guarded_len(real, guarded, n_guarded) != SIZE_MAX && is_git_dir(real, (size_t)n, name))
		return refuse_why(EPERM, GIT_DIR_WHY);
	return 0;
}

/* 0, or the refusal when `path` (relative to `base`), as the run named it,
 * goes through an AI agent's configuration in a guarded tree: a `.claude`
 * that is a symlink to elsewhere is still where the agent reads, though
 * what it leads to has no such name (review s36 fixes).  Each component
 * of that name is judged in the directory that holds it. */
static int named_agent_check(int base, const char *path)
{
	char prefix[PATH_MAX], real[PATH_MAX];
	size_t len = strnlen(path, sizeof(prefix));
	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < len;) {
		size_t start = i, n;
		while (start < len && path[start] == '/')
			start++;
		n = strcspn(path + start, "/");
		if (n && agent_config_at(path + start, n, path + start + n)) {
			/* the directory holding it: the path before it, as the kernel
			 * resolves it (the root for an absolute one) */
			memcpy(prefix, path, start);
			prefix[start] = '\0';
			int dir = openat(base, start ? prefix : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
			bool guarded_here = dir >= 0 && fdpath_of(hostproc, dir, real, sizeof(real)) >= 0 &&
			                    guarded_len(real, guarded, n_guarded) != SIZE_MAX;
			if (dir >= 0)
				close(dir);
			if (guarded_here)
				return refuse_agent(EROFS);
		}
		i = start + n;
	}
	return 0;
}

/* Whether the directory `dir` lies in a guarded tree. */
static bool in_guarded(int dir)
{
	char real[PATH_MAX];
	return fdpath_of(hostproc, dir, real, sizeof(real)) >= 0 && guarded_len(real, guarded, n_guarded) != SIZE_MAX;
}

/* Whether the directory `name` in `dir` holds an AI agent's configuration
 * at its top: moving it moves that away from where the agent reads. */
static bool holds_agent_config(int dir, const char *name)
{
	struct stat st;
	int d = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return false; /* not a directory (or gone: rename answers) */
	bool found = false;
	for (size_t i = 0; i < GUARD_AGENT_CONFIG_N && !found; i++)
		found = fstatat(d, guard_agent_config[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		        (!guard_name_is_vscode(guard_agent_config[i], strlen(guard_agent_config[i])) ||
		         vscode_holds_more(d, guard_agent_config[i]));
	close(d);
	return found;
}

/* open(2) with write access or O_CREAT: returns the new fd or -errno. */
static int act_open(int base, const char *path, int flags, mode_t mode, int depth)
{
	char name[NAME_MAX + 1];
	bool slash;
	if (flags & O_PATH) { /* no write, no creation: as the kernel would */
		int fd = openat(base, path, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	int rc = depth == 0 ? named_agent_check(base, path) : 0;
	if (rc < 0)
		return rc;
	int dir = open_parent(base, path, name, sizeof(name), &slash);
	if (dir < 0)
		return dir;
	if ((flags & __O_TMPFILE) == __O_TMPFILE) {
		/* An unnamed file in the directory `path` itself. */
		int at = openat(dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		rc = at < 0 ? -errno : fd_git_check(at);
		if (rc == 0 && (rc = openat(at, ".", flags | O_CLOEXEC, mode)) < 0)
			rc = -errno;
		if (at >= 0)
			close(at);
		close(dir);
		return rc;
	}
	for (int tries = 0; tries < 8; tries++) {
		int cur = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (cur >= 0) {
			struct stat st;
			if (fstat(cur, &st) < 0) {
				rc = -errno;
				close(cur);
				break;
			}
			if (S_ISLNK(st.st_mode)) {
				close(cur);
				if (flags & O_NOFOLLOW) {
					rc = (flags & O_CREAT) && (flags & O_EXCL) ? -EEXIST : -ELOOP;
					break;
				}
				if ((flags & O_CREAT) && (flags & O_EXCL)) {
					rc = -EEXIST;
					break;
				}
				if (depth >= LINK_DEPTH_MAX) {
					rc = -ELOOP;
					break;
				}
				struct statfs sfs;
				if (fstatfs(dir, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC) {
					/* A /proc/PID/fd entry (`> /dev/stdout`): a magic
					 * link, which only the kernel can follow. */
					cur = openat(dir, name, O_PATH | O_CLOEXEC);
					rc = cur < 0 ? -errno : reopen_checked(cur, flags);
					if (cur >= 0)
						close(cur);
					break;
				}
				char target[PATH_MAX];
				ssize_t n = readlinkat(dir, name, target, sizeof(target) - 1);
				if (n < 0) {
					rc = -errno;
					break;
				}
				target[n] = '\0';
				rc = act_open(dir, target, flags, mode, depth + 1);
				break;
			}
			if ((flags & O_CREAT) && (flags & O_EXCL)) {
				close(cur);
				rc = -EEXIST;
				break;
			}
			rc = reopen_checked(cur, flags);
			close(cur);
			break;
		}
		if (errno != ENOENT || !(flags & O_CREAT)) {
			rc = -errno;
			break;
		}
		if (slash) {
			rc = -EISDIR;
			break;
		}
		if ((rc = check_entry(dir, name, ENTRY_NEW)) < 0)
			break;
		rc = openat(dir, name, flags | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (rc >= 0)
			break;
		rc = -errno;
		if (rc != -EEXIST || (flags & O_EXCL))
			break; /* else something appeared in between: look again */
	}
	close(dir);
	return rc;
}

/* The entry `path` itself (not followed): its parent and name, checked. */
static int entry_at(int base, const char *path, char *name, size_t namelen, enum entry_use use)
{
	bool slash;
	int rc0 = named_agent_check(base, path);
	if (rc0 < 0)
		return rc0;
	int dir = open_parent(base, path, name, namelen, &slash);
	if (dir < 0)
		return dir;
	int rc = check_entry(dir, name, use);
	if (rc < 0) {
		close(dir);
		return rc;
	}
	return dir;
}

/* A file the call follows to (chmod, truncate, link's source). */
static int target_of(int base, const char *path, bool follow)
{
	int rc0 = named_agent_check(base, path);
	if (rc0 < 0)
		return rc0;
	int fd = openat(base, path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -errno;
	int rc = fd_git_check(fd);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* bind(2) of the run's socket `sock` to `name` in the directory `dir`,
 * checked: sun_path names a path, not a descriptor, so from inside `dir`
 * (fchdir), and back to our root.  The socket's name is then that last
 * component, where the run's bind would have kept its whole path (what
 * getsockname(2) shows; connects go by the file, not the name). */
static int bind_at(int dir, const char *name, int sock)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, name, n);
	if (fchdir(dir) < 0)
		return -errno;
	int rc = bind(sock, (const struct sockaddr *)&sun, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1));
	rc = rc < 0 ? -errno : 0;
	if (chdir("/") < 0)
		_exit(1); /* our own root: cannot fail */
	return rc;
}

static int do_request(const struct actor_req *q, int fd0, int fd1, int *out_fd)
{
	char name[NAME_MAX + 1], name2[NAME_MAX + 1], link[32];
	int base0 = fd0 >= 0 ? fd0 : AT_FDCWD, base1 = fd1 >= 0 ? fd1 : base0;
	int rc = 0, d = -1, d2 = -1, t = -1;

	umask(q->umask & 0777);
	switch (q->op) {
	case ACTOR_OPEN:
		if ((q->flags & O_CREAT) || (q->flags & __O_TMPFILE) == __O_TMPFILE)
			if ((rc = refuse_mode(q->mode, false)) < 0)
				return rc;
		rc = act_open(base0, q->a, q->flags | O_NOCTTY, q->mode, 0);
		if (rc >= 0) {
			*out_fd = rc;
			rc = 0;
		}
		return rc;
	case ACTOR_MKDIR:
		if ((d = entry_at(base0, q->a, name, sizeof(name), ENTRY_NEW_DIR)) < 0)
			return d;
		rc = mkdirat(d, name, q->mode) < 0 ? -errno : 0;
		break;
	case ACTOR_MKNOD:
		if ((rc = refuse_mode(q->mode, false)) < 0)
			return rc;
		if (S_ISCHR(q->mode) || S_ISBLK(q->mode))
			return refuse_device();
		if ((d = entry_at(base0, q->a, name, sizeof(name), ENTRY_NEW)) < 0)
			return d;
		rc = mknodat(d, name, q->mode, (dev_t)q->len) < 0 ? -errno : 0;
		break;
	case ACTOR_SYMLINK: /* a: the link's text, b: where it is made */
		if ((d = entry_at(base1, q->b, name, sizeof(name), ENTRY_NEW)) < 0)
			return d;
		rc = symlinkat(q->a, d, name) < 0 ? -errno : 0;
		break;
	case ACTOR_LINK: /* a: the existing file, b: the new name */
		if ((t = target_of(base0, q->a, q->flags & AT_SYMLINK_FOLLOW)) < 0)
			return t;
		if ((d = entry_at(base1, q->b, name, sizeof(name), ENTRY_NEW)) < 0) {
			rc = d;
			d = -1;
			break;
		}
		snprintf(link, sizeof(link), "self/fd/%d", t);
		rc = linkat(hostproc, link, d, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
		break;
	case ACTOR_RENAME:
		/* RENAME_EXCHANGE puts the destination at the source's name: a
		 * new entry there too. */
		if ((d = entry_at(base0, q->a, name, sizeof(name), q->flags & RENAME_EXCHANGE ? ENTRY_NEW : ENTRY_OLD)) <
		    0)
			return d;
		if ((d2 = entry_at(base1, q->b, name2, sizeof(name2), ENTRY_NEW)) < 0) {
			rc = d2;
			d2 = -1;
			break;
		}
		/* A directory that holds an agent's configuration keeps it where
		 * the agent reads (both of an exchange move). */
		if (in_guarded(d) && (holds_agent_config(d, name) ||
		                      ((q->flags & RENAME_EXCHANGE) && holds_agent_config(d2, name2)))) {
			rc = refuse_agent(EROFS);
			break;
		}
		rc = renameat2(d, name, d2, name2, (unsigned)q->flags) < 0 ? -errno : 0;
		break;
	case ACTOR_UNLINK:
		if ((d = entry_at(base0, q->a, name, sizeof(name), ENTRY_OLD)) < 0)
			return d;
		rc = unlinkat(d, name, q->flags & AT_REMOVEDIR) < 0 ? -errno : 0;
		break;
	case ACTOR_TRUNCATE:
		if ((t = target_of(base0, q->a, true)) < 0)
			return t;
		/* Not waiting for a reader: truncate(2) of a FIFO fails anyway
		 * (EINVAL, or ENXIO here), and a wait would hold every other
		 * write of the run. */
		if ((d = reopen(t, O_WRONLY | O_NONBLOCK)) < 0)
			rc = -errno;
		else
			rc = ftruncate(d, (off_t)q->len) < 0 ? -errno : 0;
		break;
	case ACTOR_CHMOD:
		if ((rc = refuse_mode(q->mode, true)) < 0)
			return rc;
		if ((t = target_of(base0, q->a, !(q->flags & AT_SYMLINK_NOFOLLOW))) < 0)
			return t;
		snprintf(link, sizeof(link), "self/fd/%d", t);
		rc = fchmodat(hostproc, link, q->mode, 0) < 0 ? -errno : 0;
		break;
	case ACTOR_BIND:
		if (fd1 < 0)
			return -EBADF;
		if ((d = entry_at(base0, q->a, name, sizeof(name), ENTRY_NEW)) < 0)
			return d;
		rc = bind_at(d, name, fd1);
		break;
	case ACTOR_FCHMOD:
		if ((rc = refuse_mode(q->mode, true)) < 0)
			return rc;
		if (fd0 < 0)
			return -EBADF;
		if ((rc = fd_git_check(fd0)) < 0)
			return rc;
		rc = fchmod(fd0, q->mode) < 0 ? -errno : 0;
		break;
	default:
		rc = -ENOSYS;
	}
	if (d >= 0)
		close(d);
	if (d2 >= 0)
		close(d2);
	if (t >= 0)
		close(t);
	return rc;
}

/* A connect to a unix socket path, from the caller's working directory
 * (cwd), made by connect_run.c.  Returns the connected socket or -1, with
 * r's error, and what was refused for the reply. */
static int serve_connect(const struct actor_req *q, int cwd, uid_t uid, struct actor_resp *r)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t path_off = offsetof(struct sockaddr_un, sun_path);
	size_t n = q->len > path_off ? q->len - path_off : 0;
	if (cwd < 0 || n == 0 || n > sizeof(addr.sun_path) || fchdir(cwd) < 0) {
		r->err = EINVAL;
		return -1;
	}
	memcpy(addr.sun_path, q->a, n);
	struct connect_reply rep;
	int s = connect_run(uid, q->flags, &addr, (socklen_t)q->len, &rep);
	(void)!chdir("/");
	r->err = rep.err;
	if (rep.internal) {
		r->denied = ACTOR_DENIED_DAEMON;
		snprintf(r->what, sizeof(r->what), "a connect to a unix socket: the daemon could not %s (%s)", rep.step,
		         strerror(rep.internal));
	} else if (rep.err == EACCES) {
		r->denied = ACTOR_DENIED_UNIX;
		snprintf(r->what, sizeof(r->what), "a connect to the unix socket %.*s: its listener is not this run's",
		         (int)strnlen(addr.sun_path, n < 120 ? n : 120), addr.sun_path);
	}
	return s;
}

/* The tables of what is guarded and writable, from the run's profile, and
 * the private /tmp and /dev/shm by device (in the run's view already). */
static void setup(int host_proc, const struct sandbox_spec *spec)
{
	hostproc = host_proc;
	guarded[n_guarded++] = spec->workspace;
	for (size_t i = 0; i < spec->profile->n_write_paths; i++)
		guarded[n_guarded++] = spec->profile->write_paths[i];
	git_repos.trees = guarded;
	git_repos.n_trees = n_guarded;
	if (spec->profile->workspace_write)
		writable[n_writable++] = spec->workspace;
	for (size_t i = 0; i < spec->profile->n_write_paths; i++)
		writable[n_writable++] = spec->profile->write_paths[i];
	struct stat tst;
	if (stat("/tmp", &tst) == 0)
		tmp_dev = tst.st_dev;
	if (stat("/dev/shm", &tst) == 0)
		shm_dev = tst.st_dev;
}

noreturn void actor_serve(int sock, int host_proc, const struct sandbox_spec *spec)
{
	setup(host_proc, spec);
	for (;;) {
		struct actor_req q;
		int fds[2];
		ssize_t got = privsep_recv(sock, &q, sizeof(q), fds, 2);
		if (got <= 0)
			_exit(0);
		struct actor_resp r = {.id = q.id, .cloexec = q.cloexec, .replace = q.replace, .blocking = q.blocking};
		int out = -1;
		if (got != (ssize_t)sizeof(q) || memchr(q.a, '\0', sizeof(q.a)) == NULL ||
		    memchr(q.b, '\0', sizeof(q.b)) == NULL)
			r.err = EINVAL;
		else if (q.op == ACTOR_CONNECT)
			out = serve_connect(&q, q.n_fds > 0 ? fds[0] : -1, spec->uid, &r);
		else {
			refused = false;
			r.err = -do_request(&q, q.n_fds > 0 ? fds[0] : -1, q.n_fds > 1 ? fds[1] : -1, &out);
		}
		if (q.op != ACTOR_CONNECT)
			r.denied = refused && r.err != 0 ? refused_kind : 0;
		if (r.denied && q.op != ACTOR_CONNECT) {
			/* The path as the run gave it, whole: the front filters it
			 * and only then cuts it (a secret cut here would go out in part). */
			const char *p =
			    q.op == ACTOR_SYMLINK || q.op == ACTOR_LINK || q.op == ACTOR_RENAME ? q.b : q.a;
			snprintf(r.what, sizeof(r.what), "%s %s: %s", op_name(q.op), p, refused_why);
		}
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (privsep_send(sock, &r, sizeof(r), &out, out >= 0 ? 1 : 0) < 0)
			_exit(1);
		if (out >= 0) {
			close(out);
			const char closed = ACTOR_CLOSED; /* actor_msg.h */
			if (send(sock, &closed, 1, MSG_NOSIGNAL) != 1)
				_exit(1);
		}
	}
}

