/*
 * jsonstrict.h - the strict reading shared by the config and profile
 * loaders: no unknown keys, no key given twice, whole numbers in range.
 * Errors name the file (`origin`) and the full key.
 */
#ifndef SHARNESS_JSONSTRICT_H
#define SHARNESS_JSONSTRICT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Every member of `obj` must be one of `known` (NULL-terminated) and appear
 * once: cJSON keeps duplicates and a lookup would see only the first.
 * `prefix` is prepended to key names in errors ("limits."). */
int jsonstrict_check_keys(const char *origin, const char *prefix, const cJSON *obj,
                          const char *const *known, char *err, size_t errlen);

/* A whole number in [lo, hi]. */
int jsonstrict_get_uint(const char *origin, const char *key, const cJSON *v, uint64_t lo, uint64_t hi,
                        uint64_t *out, char *err, size_t errlen);

/* Read the regular file `name` (relative to dirfd, or AT_FDCWD) whole, at
 * most `max` bytes; errors name `origin`.  *buf_out is malloc'd. */
int jsonstrict_read_file(int dirfd, const char *name, const char *origin, size_t max, char **buf_out,
                         size_t *len_out, char *err, size_t errlen);

/* Parse exactly one JSON document: no \u0000 in strings, nothing but
 * whitespace after the value; errors name `origin` and the line.  NULL on
 * error. */
cJSON *jsonstrict_parse(const char *origin, const char *json, size_t len, char *err, size_t errlen);

/* "sha256:" + hex SHA-256 of a canonical JSON text (the policy hashes). */
#define JSONSTRICT_HASH_LEN 71
int jsonstrict_hash(const char *canonical, char out[JSONSTRICT_HASH_LEN + 1]);

#endif
