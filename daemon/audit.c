/*
 * audit.c - see audit.h.
 */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int audit_open(const char *path)
{
	if (strcmp(path, "-") == 0)
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

int audit_write(int fd, cJSON *line)
{
	struct timespec ts;
	struct tm tm;
	char when[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t wl = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + wl, sizeof(when) - wl, ".%03ldZ", ts.tv_nsec / 1000000);
	cJSON_AddStringToObject(line, "time", when);
	char *text = cJSON_PrintUnformatted(line);
	if (!text)
		return -1;
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	ssize_t n = -1;
	if (buf) {
		memcpy(buf, text, len);
		buf[len] = '\n';
		n = write(fd, buf, len + 1);
		if (n >= 0 && (size_t)n != len + 1) {
			/* A torn line is still a lost line. */
			n = -1;
			errno = ENOSPC;
		}
		free(buf);
	}
	free(text);
	return n < 0 ? -1 : 0;
}
