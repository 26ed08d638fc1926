/*
 * path.h - lexical path normalising, shared by the front (a request's cwd)
 * and root (which normalises the cwd again before it trusts it).
 *
 * Trust: pure string work on hostile input; bounded by `outlen`.
 */
#ifndef SHARNESS_PATH_H
#define SHARNESS_PATH_H

#include <stddef.h>

/* Lexically normalise absolute `path` ("/a/./b/../c" -> "/a/c") into out.
 * 0, or -1 when `path` is not absolute or the result does not fit. */
int path_normalise(const char *path, char *out, size_t outlen);

#endif
