/*
 * scrub_vault.h - vault keys for the secret filter (SPEC §7): the exact
 * secrets the daemon is configured with, and every encoded form of them the
 * filter must also find (base64 std/url in three alignments, hex in both
 * cases, percent- and JSON-escaped), as literal needles for the prefilter.
 *
 * Trust: the secrets file and the TLS key are operator files read once at
 * start; they are parsed strictly and their bytes are wiped on free.
 */
#ifndef SHARNESS_SCRUB_VAULT_H
#define SHARNESS_SCRUB_VAULT_H

#include <stddef.h>

#define SCRUB_VAULT_MIN_LEN 8      /* shorter values would mask ordinary words */
#define SCRUB_VAULT_MAX_LEN 1024   /* keeps every encoded needle under the hold-back */
#define SCRUB_VAULT_MAX_KEYS 100000
#define SCRUB_VAULT_FILE_MAX (16u << 20)

struct scrub_vault;

struct scrub_vault *scrub_vault_new(void);
/* Add one secret and its encodings.  Returns 0, or -1 with errno (EINVAL when
 * shorter than SCRUB_VAULT_MIN_LEN or longer than SCRUB_VAULT_MAX_LEN). */
int scrub_vault_add(struct scrub_vault *v, const unsigned char *val, size_t n);
/* Load a secrets file (open as `fd`, named `path` in errors): one secret
 * per line or name=value; blank lines and lines starting with '#' are
 * skipped.  Errors name the file and line. */
int scrub_vault_load_file(struct scrub_vault *v, int fd, const char *path, char *err, size_t errlen);
/* The daemon's TLS private key (PEM): its base64 body lines and the DER bytes
 * they carry become needles; the key counts as one vault key. */
int scrub_vault_load_pem(struct scrub_vault *v, int fd, const char *path, char *err, size_t errlen);
/* open(2) for reading, with the error message; -1 on failure. */
int scrub_vault_open(const char *path, char *err, size_t errlen);

/* Where the vault keys come from: the secrets file and the TLS key, each
 * an open descriptor (-1: none) and the name errors give it.  Descriptors,
 * not paths: root opens the files, the front (which may not) reads them. */
struct scrub_sources {
	int secrets_fd;
	const char *secrets_name;
	int key_fd;
	const char *key_name;
};
/* Open the files (NULL: none).  0, or -1 with err set and nothing open. */
int scrub_sources_open(struct scrub_sources *src, const char *secrets_file, const char *tls_key_file, char *err,
                       size_t errlen);
void scrub_sources_close(struct scrub_sources *src);
/* Both sources into `v`. */
int scrub_vault_load(struct scrub_vault *v, const struct scrub_sources *src, char *err, size_t errlen);
/* Read and check the sources as the filter would and count the vault keys,
 * without building anything: every copy of a value is zeroed before this
 * returns.  For root, which must not keep a secret (the front builds the
 * rules itself).  0, or -1 with err set. */
int scrub_vault_check(const struct scrub_sources *src, size_t *keys, char *err, size_t errlen);
/* The same from paths (--doctor). */
int scrub_vault_check_files(const char *secrets_file, const char *tls_key_file, size_t *keys, char *err,
                            size_t errlen);

size_t scrub_vault_keys(const struct scrub_vault *v);
size_t scrub_vault_needles(const struct scrub_vault *v);
/* Needle i: bytes (not NUL-terminated) and length; owned by the vault. */
const unsigned char *scrub_vault_needle(const struct scrub_vault *v, size_t i, size_t *len);
/* Whether needle i is an encoding (hex, base64, a PEM body line) that a
 * tool may wrap into lines; the raw value and DER bytes are not. */
int scrub_vault_needle_encoded(const struct scrub_vault *v, size_t i);
void scrub_vault_free(struct scrub_vault *v);

#endif
