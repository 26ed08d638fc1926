/*
 * path.c - see path.h.
 */
#include "path.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int path_normalise(const char *path, char *out, size_t outlen)
{
	size_t n = 0;
	if (path[0] != '/' || outlen < 2)
		return -1;
	out[0] = '\0';
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			out[n] = '\0';
		} else {
			if (n + 1 + len + 1 > outlen)
				return -1;
			out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
			out[n] = '\0';
		}
		p += len;
	}
	if (n == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

bool path_under(const char *path, const char *tree)
{
	size_t n = strlen(tree);
	while (n > 1 && tree[n - 1] == '/')
		n--;
	return strncmp(path, tree, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

bool path_join(char *out, size_t size, const char *base, const char *rel)
{
	char buf[2 * PATH_MAX];
	int len = rel[0] == '/' ? snprintf(buf, sizeof(buf), "%s", rel)
				: snprintf(buf, sizeof(buf), "%s/%s", base, rel);
	return len > 0 && (size_t)len < sizeof(buf) && path_normalise(buf, out, size) == 0;
}
