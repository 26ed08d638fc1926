/*
 * scrub_wrap.h - vault keys whose hex or base64 a tool wrapped into lines:
 * `base64` at 76 columns, `openssl base64` at 64, `xxd -p` at 60, a PEM or
 * MIME body, a block indented in YAML.  The other prefilters look inside a
 * line; this one finds an encoded needle that crosses a line break.
 * Internal to the scrub module.
 *
 * The text it searches is the input with every wrap taken out.  A wrap is a
 * line break ("\n" or "\r\n", then at most SCRUB_WRAP_INDENT spaces or
 * tabs) with SCRUB_WRAP_LINE encoding characters before it and one after
 * it; the encoding characters are those of hex, base64, base64url and '='
 * (A-Z a-z 0-9 + / - _ =).  Every line a tool wraps but its last is full
 * (60 columns and more), so every break inside its output is a wrap, and
 * so is the break after a first line that starts with other text ("key: "
 * and the first 76 columns).  Within a hit, a line shorter than
 * SCRUB_WRAP_LINE is joined to the next too (a last line of "==").  A hit
 * is a needle that holds at least one wrap; it is reported as the raw bytes
 * it covers, breaks included, and only when they number at most
 * SCRUB_WRAP_MAX_SPAN.
 *
 * Read-only after scrub_wrap_new; shared by every stream and thread.
 */
#ifndef SHARNESS_SCRUB_WRAP_H
#define SHARNESS_SCRUB_WRAP_H

#include <stddef.h>

#define SCRUB_WRAP_LINE	    16
#define SCRUB_WRAP_INDENT   16
#define SCRUB_WRAP_MAX_SPAN 8192u

struct scrub_fp;
struct scrub_wrap;
struct scrub_vault;

/* The wrap finder for vault `v`, whose long needles `fp` (kept, not owned)
 * indexes: it indexes the short encoded needles itself.  NULL with errno on
 * allocation failure. */
struct scrub_wrap *scrub_wrap_new(const struct scrub_vault *v, const struct scrub_fp *fp);
void scrub_wrap_free(struct scrub_wrap *w);
/* The most raw bytes a hit covers: a stream resumes its scan this far
 * before the bytes it already scanned. */
size_t scrub_wrap_maxspan(const struct scrub_wrap *w);

/* Called once per needle occurrence, with the raw bytes [start, end) it
 * covers; a non-zero return stops the scan. */
typedef int (*scrub_wrap_hit_fn)(void *arg, size_t start, size_t end);

/* Find every occurrence of an indexed needle in buf[0, len) that crosses
 * a line break.  Returns 0, or the callback's non-zero value. */
int scrub_wrap_scan(const struct scrub_wrap *w, const unsigned char *buf, size_t len, scrub_wrap_hit_fn hit,
		    void *arg);
/* A long needle (n bytes) that the fingerprint scan of buf found cut by a
 * line end after its first `matched` bytes, at raw `start`: whether it goes
 * on across a wrap there, ending at raw *end. */
int scrub_wrap_cut(const struct scrub_wrap *w, const unsigned char *buf, size_t len, size_t start,
		   const unsigned char *needle, size_t n, size_t matched, size_t *end);

/* Whether the line end just before `end` (of buf, len bytes so far) may be
 * a wrap that a needle crosses into bytes yet to come: 16 encoding
 * characters before it, and after it nothing yet, an indent so far, or an
 * encoding character.  A stream that emits up to a line end before its
 * input is complete (scrub_stream_flush) must then hold back
 * scrub_wrap_maxspan bytes before the end of what it has. */
int scrub_wrap_may_go_on(const unsigned char *buf, size_t len, size_t end);

/* The same looking at every newline (the loop scrub_wrap_scan filters with
 * AVX2); for the unit test that checks both agree. */
int scrub_wrap_scan_portable(const struct scrub_wrap *w, const unsigned char *buf, size_t len,
			     scrub_wrap_hit_fn hit, void *arg);

#endif
