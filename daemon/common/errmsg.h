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

/* The sandbox's set-up steps (root/mount.c, landlock.c) record which call
 * on which path failed, "SYSCALL PATH" (a long one cut, ending in '~'), for
 * the step's log line.  The sandbox child is single-threaded: one buffer
 * per process.  Returns -1 with errno kept. */
int errmsg_op_failed(const char *op, const char *path);
/* The last one recorded ("" before any). */
const char *errmsg_op(void);

#endif
