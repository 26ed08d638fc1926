/*
 * gitdir.c - see gitdir.h.
 */
#include "gitdir.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gitdir_first_line(const char *file, const char *prefix, char *out, size_t size)
{
	struct stat st;
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, out, size - 1) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	size_t len = strcspn(out, "\r\n");
	if (len == (size_t)n && (size_t)n == size - 1)
		return -1; /* no line end within `size`: cut */
	out[len] = '\0';
	size_t p = strlen(prefix);
	if (strncmp(out, prefix, p) != 0 || !out[p])
		return -1;
	memmove(out, out + p, strlen(out + p) + 1);
	return 1;
}

int gitdir_gitfile(const char *worktree, char *gitdir, size_t size)
{
	char dotgit[PATH_MAX], line[PATH_MAX];
	struct stat st;
	if (!path_join(dotgit, sizeof(dotgit), worktree, ".git"))
		return -1;
	if (lstat(dotgit, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return gitdir_first_line(dotgit, "gitdir: ", line, sizeof(line)) == 1 &&
		       path_join(gitdir, size, worktree, line)
		   ? 1
		   : -1;
}

int gitdir_common(const char *gitdir, char *common, size_t size)
{
	char path[PATH_MAX], line[PATH_MAX];
	if (!path_join(path, sizeof(path), gitdir, "commondir"))
		return -1;
	int rc = gitdir_first_line(path, "", line, sizeof(line));
	if (rc == 0)
		return snprintf(common, size, "%s", gitdir) < (int)size ? 1 : -1;
	return rc == 1 && path_join(common, size, gitdir, line) ? 1 : -1;
}

/* git's own test (setup.c, is_git_directory): HEAD, objects/ and refs/. */
static bool is_git_dir(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;
	return path_join(p, sizeof(p), dir, "HEAD") && lstat(p, &st) == 0 &&
	       path_join(p, sizeof(p), dir, "objects") && stat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
	       path_join(p, sizeof(p), dir, "refs") && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Does the git directory `gitdir` (real) claim the working tree whose
 * gitfile is `dotgit` (real)?  A linked worktree's records it in its
 * `gitdir` file; a submodule's lies in `<super>/.git/modules/` of a
 * superproject that holds the workspace. */
static bool claims(const char *gitdir, const char *shared, const char *workspace, const char *dotgit)
{
	char path[PATH_MAX], line[PATH_MAX], back[PATH_MAX];
	if (strcmp(gitdir, shared) != 0) {
		const char *slash = strrchr(gitdir, '/');
		char *real = NULL;
		bool ok = slash && snprintf(path, sizeof(path), "%s/worktrees", shared) < (int)sizeof(path) &&
			  (size_t)(slash - gitdir) == strlen(path) &&
			  strncmp(gitdir, path, strlen(path)) == 0 &&
			  path_join(path, sizeof(path), gitdir, "gitdir") &&
			  gitdir_first_line(path, "", line, sizeof(line)) == 1 &&
			  path_join(back, sizeof(back), gitdir, line) && (real = realpath(back, NULL)) &&
			  strcmp(real, dotgit) == 0;
		free(real);
		return ok;
	}
	const char *modules = strstr(shared, "/.git/modules/");
	if (!modules || (size_t)(modules - shared) >= sizeof(path))
		return false;
	memcpy(path, shared, (size_t)(modules - shared));
	path[modules - shared] = '\0';
	return path_under(workspace, path) && strcmp(workspace, path) != 0;
}

char *gitdir_outside(const char *workspace, uid_t owner, struct stat *shared_st)
{
	char dotgit[PATH_MAX], named[PATH_MAX], common[PATH_MAX];
	struct stat st;
	if (!path_join(dotgit, sizeof(dotgit), workspace, ".git") || lstat(dotgit, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != owner || (st.st_mode & 022) ||
	    gitdir_gitfile(workspace, named, sizeof(named)) != 1)
		return NULL;
	char *gitdir = realpath(named, NULL), *shared = NULL;
	if (gitdir && gitdir_common(gitdir, common, sizeof(common)) == 1)
		shared = realpath(common, NULL);
	bool bind = shared && !path_under(shared, workspace) && !path_under(workspace, shared) &&
		    stat(shared, shared_st) == 0 && S_ISDIR(shared_st->st_mode) &&
		    shared_st->st_uid == owner && is_git_dir(shared) &&
		    claims(gitdir, shared, workspace, dotgit);
	free(gitdir);
	if (!bind) {
		free(shared);
		return NULL;
	}
	return shared;
}
