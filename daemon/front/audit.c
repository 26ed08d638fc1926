/*
 * audit.c - see audit.h.
 */
#include "audit.h"

#include <stdbool.h>

#include "capture.h"
#include "utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

void audit_sha256_hex(const void *buf, size_t len, char out[65])
{
	/* Fetched once: EVP_sha256() makes every EVP_Digest look the
	 * algorithm up in the providers again (OpenSSL 3), 30 us a run. */
	static EVP_MD *sha256;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	if (!sha256)
		sha256 = EVP_MD_fetch(NULL, "SHA2-256", NULL);
	if (!sha256 || !EVP_Digest(buf, len, md, &mdlen, sha256, NULL) || mdlen != 32)
		abort(); /* libcrypto without SHA-256: nothing could be recorded truly */
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void audit_clean_strings(cJSON *node)
{
	for (cJSON *it = node; it; it = it->next) {
		if (cJSON_IsString(it) && it->valuestring) {
			bool replaced = false;
			char *clean = utf8_clean(it->valuestring, strlen(it->valuestring), &replaced);
			if (clean && replaced) {
				free(it->valuestring);
				it->valuestring = clean;
			} else {
				free(clean);
			}
		}
		if (it->child)
			audit_clean_strings(it->child);
	}
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
	/* Paths, names and ids come from clients: one JSON line that any strict
	 * reader accepts, whatever bytes they sent. */
	audit_clean_strings(line);
	char *text = cJSON_PrintUnformatted(line);
	if (!text)
		return -1;
	size_t len = strlen(text);
	/* One writev: the line and its newline land together in an O_APPEND
	 * file, never interleaved with another writer's. */
	struct iovec iov[2] = {{.iov_base = text, .iov_len = len}, {.iov_base = "\n", .iov_len = 1}};
	ssize_t n = writev(fd, iov, 2);
	if (n >= 0 && (size_t)n != len + 1) {
		/* A torn line is still a lost line. */
		n = -1;
		errno = ENOSPC;
	}
	free(text);
	return n < 0 ? -1 : 0;
}
