/*
 * fdio.h - whole reads and writes on a descriptor (pipes and memfds), with
 * EINTR retried and a short transfer treated as the failure it is here.
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

#endif
