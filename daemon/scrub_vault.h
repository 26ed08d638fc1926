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
/* Load a secrets file: one secret per line or name=value; blank lines and
 * lines starting with '#' are skipped.  Errors name the file and line. */
int scrub_vault_load_file(struct scrub_vault *v, const char *path, char *err, size_t errlen);
/* The daemon's TLS private key (PEM): its base64 body lines and the DER bytes
 * they carry become needles; the key counts as one vault key. */
int scrub_vault_load_pem(struct scrub_vault *v, const char *path, char *err, size_t errlen);

size_t scrub_vault_keys(const struct scrub_vault *v);
size_t scrub_vault_needles(const struct scrub_vault *v);
/* Needle i: bytes (not NUL-terminated) and length; owned by the vault. */
const unsigned char *scrub_vault_needle(const struct scrub_vault *v, size_t i, size_t *len);
void scrub_vault_free(struct scrub_vault *v);

#endif
