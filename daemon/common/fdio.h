/*
 * fdio.h - whole reads and writes on a descriptor (pipes and memfds), with
 * EINTR retried and a short transfer treated as the failure it is here;
 * the close of a descriptor kept in a variable; and the one-read, one-write
 * files of the kernel's own file systems (cgroup, /proc); the placing of
 * descriptors for an exec.
 *
 * Trust: none of its own; the callers bound the lengths.
 */
#ifndef SHARNESS_FDIO_H
#define SHARNESS_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* Write all `len` bytes.  0, or -1 (errno set; a write of 0 bytes counts
 * as a failure). */
int fdio_write_all(int fd, const void *buf, size_t len);
/* Read exactly `len` bytes.  0, or -1 on an error or an early EOF. */
int fdio_read_all(int fd, void *buf, size_t len);
/* Close *fd if it is open and mark it closed (-1), so that no later path
 * closes a number the process may have reused. */
void fdio_close(int *fd);
/* Read up to len-1 bytes of `path` in one read() and NUL-terminate them.
 * Returns the count, or -1 (errno: open()'s or read()'s). */
ssize_t fdio_read_file(const char *path, char *buf, size_t len);
/* Write the string `s` to `path` in one write(): what a cgroup or /proc
 * file takes as one value.  0, or -1 (errno; EIO for a short write). */
int fdio_write_file(const char *path, const char *s);
/* The two above on a file already open (fd from an open() whose -1 is
 * passed on with its errno); the fd is closed. */
ssize_t fdio_read_fd(int fd, char *buf, size_t len);
int fdio_write_fd(int fd, const char *s);
/* Before an exec: put `fds` at 3, 4, ... (in order; -1 leaves that number
 * closed), `exe_fd` right after them (close-on-exec), and close everything
 * above.  At most FDIO_PLACE_MAX fds.  Returns the executable's new
 * number, or -1.  Async-signal-safe. */
#define FDIO_PLACE_MAX 8
int fdio_place(const int *fds, int n, int exe_fd);

#endif
