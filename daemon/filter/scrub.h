/*
 * scrub.h - the secret filter (SPEC §7): vault keys and named token formats,
 * streaming with constant memory per stream.
 *
 * Trust: the input is hostile command output.  Rules are built once at start
 * and are read-only afterwards, shared by all threads; each output stream has
 * its own scrub_stream (not thread-safe, one thread at a time).
 */
#ifndef SHARNESS_SCRUB_H
#define SHARNESS_SCRUB_H

#include <stddef.h>

struct scrub_rules;
struct scrub_stream;

/* Receives filtered bytes, in order.  Called from scrub_stream_feed/finish. */
typedef void (*scrub_emit_fn)(void *arg, const char *buf, size_t len);

/* Build all rules.  `secrets_file` (may be NULL): one secret per line or
 * name=value; a value under 8 characters is refused with an error naming the
 * line.  `tls_key_file` (may be NULL): the daemon's private key, which counts
 * as a vault key.  Returns NULL with err set on failure. */
struct scrub_rules *scrub_rules_new(const char *secrets_file, const char *tls_key_file,
                                    char *err, size_t errlen);
void scrub_rules_free(struct scrub_rules *r);

struct scrub_sources;
/* The same from open descriptors (scrub_vault.h): what the front does with
 * the files root opened for it. */
struct scrub_rules *scrub_rules_from(const struct scrub_sources *src, char *err, size_t errlen);

/* The named detectors (built in: the same for every rules object, and
 * available without one, r = NULL, from scrub_detect.c's table). */
size_t scrub_rules_count(const struct scrub_rules *r);
const char *scrub_rule_name(const struct scrub_rules *r, size_t i);
size_t scrub_vault_count(const struct scrub_rules *r);         /* never their values */

struct scrub_stream *scrub_stream_new(const struct scrub_rules *r, scrub_emit_fn emit, void *arg);
/* Feed raw bytes; filtered bytes go to emit (some may be held back until
 * more input or finish).  Returns 0, -1 on allocation failure. */
int scrub_stream_feed(struct scrub_stream *s, const char *buf, size_t len);
/* The same without a copy: scrub_stream_space gives where the next input may
 * be written (at least one byte, *room of them), scrub_stream_wrote says how
 * many were.  For readers that can read(2) straight into the stream. */
char *scrub_stream_space(struct scrub_stream *s, size_t *room);
int scrub_stream_wrote(struct scrub_stream *s, size_t n);
/* Emit now what lies before the last line end (a live stream's output):
 * every token is still judged whole. */
int scrub_stream_flush(struct scrub_stream *s);
int scrub_stream_finish(struct scrub_stream *s);
unsigned long scrub_stream_count(const struct scrub_stream *s); /* replacements so far */
void scrub_stream_free(struct scrub_stream *s);

/* One-shot: filter a whole buffer. Returns malloc'd, NUL-terminated output. */
char *scrub_buffer(const struct scrub_rules *r, const char *buf, size_t len, size_t *out_len,
                   unsigned long *count);

/* `sharnessd --filter [--secrets FILE]`: stdin -> filtered stdout, one summary
 * line on stderr.  argv excludes the program name and "--filter". */
int scrub_filter_main(int argc, char **argv);

#endif
