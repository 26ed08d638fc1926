/*
 * audit.h - the audit log: one JSON object per line per request.
 * Written with one write(2) on an O_APPEND fd, so lines never interleave.
 * Reopened on SIGHUP for log rotation (the launcher opens, auditfile.h; the
 * front writes).
 */
#ifndef SHARNESS_AUDIT_H
#define SHARNESS_AUDIT_H

#include <cjson/cJSON.h>

/* Replace invalid UTF-8 in every string of `node` (and its siblings and
 * children) with U+FFFD: strings cut at a byte limit or taken from a URL. */
void audit_clean_strings(cJSON *node);

/* SHA-256 of `len` bytes as 64 lowercase hex digits: the `cmd_sha256` of
 * every audit line about a run and of the approval listing, so what was
 * filtered out of the text is still pinned to the exact bytes. */
void audit_sha256_hex(const void *buf, size_t len, char out[65]);

/* Print `line` compactly plus "\n" to fd; adds "time" (RFC 3339 UTC, ms).
 * Returns 0, or -1 with errno when the line was not (wholly) written. */
int audit_write(int fd, cJSON *line);

#endif
