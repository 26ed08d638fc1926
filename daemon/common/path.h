/*
 * path.h - lexical path work, shared by the front (a request's cwd), root
 * (which normalises the cwd again before it trusts it) and the file actor
 * (which trees a path lies in, the paths a git config names).
 *
 * Trust: pure string work on hostile input; bounded by `outlen`.
 */
#ifndef SHARNESS_PATH_H
#define SHARNESS_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* Lexically normalise absolute `path` ("/a/./b/../c" -> "/a/c") into out.
 * 0, or -1 when `path` is not absolute or the result does not fit. */
int path_normalise(const char *path, char *out, size_t outlen);

/* Is `path` the directory `tree` or below it (trailing slashes of `tree`
 * ignored; "/a/bc" is not below "/a/b")? */
bool path_under(const char *path, const char *tree);

/* base + "/" + rel (or rel alone, if absolute: as git takes a path from
 * a file or a directory), lexically normalised into out.  false when it
 * does not fit. */
bool path_join(char *out, size_t size, const char *base, const char *rel);

#endif
