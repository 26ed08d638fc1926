/*
 * auditfile.c - see auditfile.h.
 */
#include "auditfile.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int audit_open(const char *path)
{
	if (strcmp(path, "-") == 0)
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}
