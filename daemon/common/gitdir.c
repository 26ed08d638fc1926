/*
 * gitdir.c - see gitdir.h.
 */
#include "gitdir.h"
#include "path.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool gitdir_first_line(const char *file, const char *prefix, char *out, size_t size)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	size_t p = strlen(prefix);
	if (strncmp(out, prefix, p) != 0)
		return false;
	memmove(out, out + p, strlen(out + p) + 1);
	return out[0] != '\0';
}

bool gitdir_gitfile(const char *worktree, char *gitdir, size_t size)
{
	char dotgit[PATH_MAX], line[PATH_MAX];
	struct stat st;
	return path_join(dotgit, sizeof(dotgit), worktree, ".git") && lstat(dotgit, &st) == 0 &&
	       S_ISREG(st.st_mode) && gitdir_first_line(dotgit, "gitdir: ", line, sizeof(line)) &&
	       path_join(gitdir, size, worktree, line);
}

bool gitdir_common(const char *gitdir, char *common, size_t size)
{
	char path[PATH_MAX], line[PATH_MAX];
	if (!path_join(path, sizeof(path), gitdir, "commondir"))
		return false;
	if (!gitdir_first_line(path, "", line, sizeof(line)))
		return snprintf(common, size, "%s", gitdir) < (int)size;
	return path_join(common, size, gitdir, line);
}

char *gitdir_outside(const char *workspace, uid_t owner)
{
	char named[PATH_MAX], common[PATH_MAX];
	struct stat st;
	if (!gitdir_gitfile(workspace, named, sizeof(named)) &&
	    !path_join(named, sizeof(named), workspace, ".git"))
		return NULL;
	char *gitdir = realpath(named, NULL), *shared = NULL;
	if (gitdir && gitdir_common(gitdir, common, sizeof(common)))
		shared = realpath(common, NULL);
	/* Root binds only a directory of the workspace's owner, the one git
	 * reads: not one of another user's a gitfile happens to name. */
	bool bind = shared && path_under(gitdir, shared) && !path_under(shared, workspace) &&
		    !path_under(workspace, shared) && stat(shared, &st) == 0 && S_ISDIR(st.st_mode) &&
		    st.st_uid == owner;
	free(gitdir);
	if (!bind) {
		free(shared);
		return NULL;
	}
	return shared;
}
