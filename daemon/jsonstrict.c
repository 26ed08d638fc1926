/*
 * jsonstrict.c - see jsonstrict.h.
 */
#include "jsonstrict.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"

int jsonstrict_check_keys(const char *origin, const char *prefix, const cJSON *obj,
                          const char *const *known, char *err, size_t errlen)
{
	for (const cJSON *a = obj->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (!strcmp(a->string, b->string)) {
				errmsg_set(err, errlen, "%s: key '%s%s' appears more than once", origin, prefix,
				           a->string);
				return -1;
			}
	for (const cJSON *m = obj->child; m; m = m->next) {
		size_t i;

		for (i = 0; known[i]; i++)
			if (!strcmp(m->string, known[i]))
				break;
		if (!known[i]) {
			errmsg_set(err, errlen, "%s: key '%s%s' is unknown", origin, prefix, m->string);
			return -1;
		}
	}
	return 0;
}

int jsonstrict_get_uint(const char *origin, const char *key, const cJSON *v, uint64_t lo, uint64_t hi,
                        uint64_t *out, char *err, size_t errlen)
{
	double d;

	if (!cJSON_IsNumber(v)) {
		errmsg_set(err, errlen, "%s: key '%s' must be a number", origin, key);
		return -1;
	}
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) {
		errmsg_set(err, errlen, "%s: key '%s' must be a whole number from %llu to %llu", origin, key,
		           (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = (uint64_t)d;
	return 0;
}

int jsonstrict_read_file(int dirfd, const char *name, const char *origin, size_t max, char **buf_out,
                         size_t *len_out, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc = -1;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		errmsg_set(err, errlen, "%s: cannot open: %s", origin, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		errmsg_set(err, errlen, "%s: not a regular file", origin);
		goto out;
	}
	if (st.st_size > (off_t)max) {
		errmsg_set(err, errlen, "%s: larger than %zu bytes", origin, max);
		goto out;
	}
	/* Read to EOF with a bound rather than trusting st_size (the file may change under us). */
	buf = malloc(max + 1);
	if (!buf) {
		errmsg_set(err, errlen, "%s: out of memory", origin);
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, max + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			errmsg_set(err, errlen, "%s: cannot read: %s", origin, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max) {
			errmsg_set(err, errlen, "%s: larger than %zu bytes", origin, max);
			goto out;
		}
	}
	*buf_out = buf;
	*len_out = len;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}
