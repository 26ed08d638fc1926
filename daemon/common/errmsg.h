/*
 * errmsg.h - filling the caller's error buffer: every parser and set-up
 * function here reports failure as one sentence in (err, errlen).
 */
#ifndef SHARNESS_ERRMSG_H
#define SHARNESS_ERRMSG_H

#include <stddef.h>

/* vsnprintf into err, control bytes replaced by '?'; a NULL or empty
 * buffer is left alone. */
void errmsg_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
