/*
 * fdpath.h - where the kernel says a file is, for the file actor: read
 * through the host's /proc (opened by root before the chroot), which a run
 * can neither fake nor hide.  The actor decides on these paths, never on
 * the ones a run names.
 */
#ifndef SHARNESS_FDPATH_H
#define SHARNESS_FDPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The path of `fd` into real[size]: its length, or -1 when the kernel
 * cannot say or the path does not fit (never a cut path). */
ssize_t fdpath_of(int hostproc, int fd, char *real, size_t size);

/* Where `path` resolves now: its longest existing prefix, through every
 * symlink, with the rest appended.  false when that cannot be told. */
bool fdpath_resolve(int hostproc, const char *path, char *out, size_t size);

/* Is the longest part of `path` that exists a dangling symlink (the path
 * itself, or a directory on the way)?  Where it leads is not in the run's
 * view, but the person's tools on the host read it (gitpaths.c,
 * agentpaths.c).  true also for a path too long to look at. */
bool fdpath_behind_link(const char *path);

#endif
