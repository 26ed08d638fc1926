/*
 * fdpath.c - see fdpath.h.
 */
#include "fdpath.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t fdpath_of(int hostproc, int fd, char *real, size_t size)
{
	char link[32];
	snprintf(link, sizeof(link), "self/fd/%d", fd);
	ssize_t n = readlinkat(hostproc, link, real, size - 1);
	if (n <= 0 || n == (ssize_t)size - 1)
		return -1;
	real[n] = '\0';
	return n;
}

bool fdpath_resolve(int hostproc, const char *path, char *out, size_t size)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof(prefix))
		return false;
	memcpy(prefix, path, len + 1);
	for (;;) {
		int fd = open(prefix[0] ? prefix : "/", O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = fdpath_of(hostproc, fd, out, size);
			close(fd);
			if (n < 0)
				return false;
			const char *rest = path + strlen(prefix);
			if (n == 1 && rest[0] == '/')
				n = 0; /* "/" + "/a" */
			size_t r = strlen(rest);
			if ((size_t)n + r >= size)
				return false;
			memcpy(out + n, rest, r + 1);
			return true;
		}
		char *slash = strrchr(prefix, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

bool fdpath_behind_link(const char *path)
{
	char prefix[PATH_MAX];
	struct stat st;
	if (snprintf(prefix, sizeof(prefix), "%s", path) >= (int)sizeof(prefix))
		return true;
	for (char *slash; lstat(prefix, &st) < 0; *slash = '\0')
		if (!(slash = strrchr(prefix, '/')) || slash == prefix)
			return false;
	return S_ISLNK(st.st_mode) && stat(prefix, &st) < 0;
}
