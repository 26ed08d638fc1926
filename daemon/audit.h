/*
 * audit.h - the audit log: one JSON object per line per request.
 * Written with one write(2) on an O_APPEND fd, so lines never interleave.
 * Reopened on SIGHUP for log rotation (the launcher opens, the front writes).
 */
#ifndef SHARNESS_AUDIT_H
#define SHARNESS_AUDIT_H

#include <cjson/cJSON.h>

/* Replace invalid UTF-8 in every string of `node` (and its siblings and
 * children) with U+FFFD: strings cut at a byte limit or taken from a URL. */
void audit_clean_strings(cJSON *node);

/* Open `path` for appending ("-" = stderr).  Returns an fd or -1. */
int audit_open(const char *path);
/* Print `line` compactly plus "\n" to fd; adds "time" (RFC 3339 UTC, ms).
 * Returns 0, or -1 with errno when the line was not (wholly) written. */
int audit_write(int fd, cJSON *line);

#endif
