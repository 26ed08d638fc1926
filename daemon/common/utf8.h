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

/* Where to cut `buf` to keep at most `max` of its `len` bytes without cutting
 * a character in two: `max`, or less by the lead and continuation bytes of
 * a character that would not fit whole (len <= max: len).  Bytes that are
 * not UTF-8 are left as they are: utf8_clean judges them. */
size_t utf8_cut(const char *buf, size_t len, size_t max);

/* The character at `s` (at most `left` bytes): its length, and its code
 * point in *cp; 0 when no valid UTF-8 character starts there. */
size_t utf8_decode(const char *s, size_t left, unsigned *cp);

#endif
