/*
 * errmsg.c - see errmsg.h.
 */
#include "errmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void errmsg_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* Messages quote file names and keys from configuration files; a
	 * control byte there must not break the line or forge another. */
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* Per thread: the sandbox's init runs on a thread's state of its own beside
 * the supervisor, in its memory (root/initclone.c). */
static _Thread_local char failed_op[160];

int errmsg_op_failed(const char *op, const char *path)
{
	int e = errno;
	if (snprintf(failed_op, sizeof(failed_op), "%s %s", op, path ? path : "") >= (int)sizeof(failed_op))
		failed_op[sizeof(failed_op) - 2] = '~';
	errno = e;
	return -1;
}

const char *errmsg_op(void)
{
	return failed_op;
}
