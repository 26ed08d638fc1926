/*
 * fdio.c - see fdio.h.
 */
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int fdio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fdio_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void fdio_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

ssize_t fdio_read_fd(int fd, char *buf, size_t len)
{
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	int saved = errno; /* the caller reads read()'s errno, not close()'s */
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

ssize_t fdio_read_file(const char *path, char *buf, size_t len)
{
	return fdio_read_fd(open(path, O_RDONLY | O_CLOEXEC), buf, len);
}

int fdio_write_fd(int fd, const char *s)
{
	if (fd < 0)
		return -1;
	size_t len = strlen(s);
	ssize_t n = write(fd, s, len);
	int saved = errno;
	close(fd);
	if (n != (ssize_t)len) {
		errno = n < 0 ? saved : EIO;
		return -1;
	}
	return 0;
}

int fdio_write_file(const char *path, const char *s)
{
	return fdio_write_fd(open(path, O_WRONLY | O_CLOEXEC), s);
}

int fdio_place(const int *fds, int n, int exe_fd)
{
	int high[FDIO_PLACE_MAX];
	if (n > FDIO_PLACE_MAX)
		return -1;
	int exe_high = fcntl(exe_fd, F_DUPFD_CLOEXEC, 100);
	if (exe_high < 0)
		return -1;
	/* First out of the way (a source may sit on a target number). */
	for (int i = 0; i < n; i++)
		if ((high[i] = fds[i] < 0 ? -1 : fcntl(fds[i], F_DUPFD_CLOEXEC, 100)) < 0 && fds[i] >= 0)
			return -1;
	for (int i = 0; i < n; i++)
		if (high[i] >= 0 && dup2(high[i], 3 + i) < 0) /* dup2: not close-on-exec */
			return -1;
	if (dup3(exe_high, 3 + n, O_CLOEXEC) < 0)
		return -1;
	return syscall(SYS_close_range, 4 + n, ~0U, 0) < 0 ? -1 : 3 + n;
}
