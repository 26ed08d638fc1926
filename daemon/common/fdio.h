/*
 * fdio.h - whole reads and writes on a descriptor (pipes and memfds), with
 * EINTR retried and a short transfer treated as the failure it is here;
 * and the close of a descriptor kept in a variable.
 *
 * Trust: none of its own; the callers bound the lengths.
 */
#ifndef SHARNESS_FDIO_H
#define SHARNESS_FDIO_H

#include <stddef.h>

/* Write all `len` bytes.  0, or -1 (errno set; a write of 0 bytes counts
 * as a failure). */
int fdio_write_all(int fd, const void *buf, size_t len);
/* Read exactly `len` bytes.  0, or -1 on an error or an early EOF. */
int fdio_read_all(int fd, void *buf, size_t len);
/* Close *fd if it is open and mark it closed (-1), so that no later path
 * closes a number the process may have reused. */
void fdio_close(int *fd);

#endif
