/*
 * procstatus.c - see procstatus.h.
 */
#include "procstatus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int procstatus_read(pid_t pid, char *buf, size_t size)
{
	char path[64];
	if (size == 0)
		return errno = EINVAL, -1;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* One read: proc's seq_file hands over whole lines, and the file is
	 * far below PROCSTATUS_MAX. */
	ssize_t n = read(fd, buf, size - 1);
	int saved = errno;
	close(fd);
	if (n <= 0)
		return errno = n < 0 ? saved : EIO, -1;
	buf[n] = '\0';
	return 0;
}

const char *procstatus_find(const char *buf, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return p + len + 1 + strspn(p + len + 1, "\t ");
	return NULL;
}
