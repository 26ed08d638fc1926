/*
 * utf8.h - strict UTF-8 (RFC 3629: no overlongs, no surrogates, nothing
 * above U+10FFFF; NUL counts as invalid, since it would end a C string):
 * checking text from configuration, cleaning text that goes out as JSON.
 */
#ifndef SHARNESS_UTF8_H
#define SHARNESS_UTF8_H

#include <stdbool.h>
#include <stddef.h>

bool utf8_valid(const char *buf, size_t len);

/* Make `buf` valid UTF-8: each invalid byte becomes U+FFFD.  Returns malloc'd,
 * NUL-terminated; *replaced tells whether anything was replaced. */
char *utf8_clean(const char *buf, size_t len, bool *replaced);

#endif
