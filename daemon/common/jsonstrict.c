/*
 * jsonstrict.c - see jsonstrict.h.
 */
#include "jsonstrict.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

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

/* cJSON turns "\u0000" into a string that silently ends there ("/etc\u0000/x"
 * would become "/etc"); refuse the escape in any string instead of guessing. */
static bool has_nul_escape(const char *s, size_t len)
{
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		if (!in_str) {
			in_str = s[i] == '"';
			continue;
		}
		if (s[i] == '"') {
			in_str = false;
		} else if (s[i] == '\\' && i + 1 < len) {
			if (s[i + 1] == 'u' && i + 5 < len && !strncmp(s + i + 2, "0000", 4))
				return true;
			i++;
		}
	}
	return false;
}

/* 1-based line of byte `off`, for "not valid JSON near line N". */
static unsigned line_of(const char *s, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

cJSON *jsonstrict_parse(const char *origin, const char *json, size_t len, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *root;

	if (has_nul_escape(json, len)) {
		errmsg_set(err, errlen, "%s: a string holds \\u0000, which is not allowed", origin);
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	/* cJSON stops after the first value; anything but whitespace after it is an error too. */
	if (root && end) {
		while (end < json + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
			end++;
		if (end != json + len) {
			cJSON_Delete(root);
			root = NULL;
		}
	}
	if (!root) {
		size_t off = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;

		errmsg_set(err, errlen, "%s: not valid JSON near line %u", origin, line_of(json, off));
	}
	return root;
}

int jsonstrict_hash(const char *canonical, char out[JSONSTRICT_HASH_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	static const char hex[] = "0123456789abcdef";

	if (!EVP_Digest(canonical, strlen(canonical), md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
		return -1;
	memcpy(out, "sha256:", 7);
	for (unsigned i = 0; i < mdlen; i++) {
		out[7 + 2 * i] = hex[md[i] >> 4];
		out[8 + 2 * i] = hex[md[i] & 15];
	}
	out[JSONSTRICT_HASH_LEN] = '\0';
	return 0;
}
