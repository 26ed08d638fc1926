/*
 * scrub_detect.h - the named token detectors of the secret filter (SPEC §7):
 * a static table of rules, each with the literal anchors the prefilter looks
 * for and a C validator that decides, from the anchor's position, whether a
 * real token sits there and which bytes it covers.
 *
 * Trust: validators read hostile bytes; every one is bounded by the window it
 * is given and by the rule's maximum length, so a stream of anchors costs
 * O(token length) per anchor, never more.
 */
#ifndef SHARNESS_SCRUB_DETECT_H
#define SHARNESS_SCRUB_DETECT_H

#include <stddef.h>

/* Longest span any validator may need: a token (or a PEM block still being
 * parsed) longer than this is decided with what the window holds. */
#define SCRUB_DETECT_MAX_TOKEN 8192
/* How far before a redacted span a validator may look for its anchor
 * (key names, URL schemes, "Authorization:"); the stream keeps this much
 * already-emitted context so a split between name and value still matches. */
#define SCRUB_DETECT_MAX_LOOKBACK 512

enum scrub_prio {
	SCRUB_PRIO_GENERIC = 1, /* context rules: KEY=value, URL passwords, headers */
	SCRUB_PRIO_TOKEN = 2,   /* a vendor format */
	SCRUB_PRIO_VAULT = 3,   /* an exact configured secret */
};

/* The bytes a validator sees.  [0, len) is the window; bytes before `ctx`
 * have already been emitted and are only context; `eof` says no byte will
 * ever follow `len` (otherwise a token touching `len` is undecided);
 * `commit` is where the stream will cut if nothing extends it. */
struct scrub_window {
	const unsigned char *buf;
	size_t len;
	size_t ctx;
	size_t commit;
	int eof;
};

struct scrub_hit {
	size_t start, end;  /* bytes to redact, [start, end) */
	const char *name;   /* rule name for the marker */
	int prio;
	int open;           /* PEM block runs past the window: keep redacting */
};

struct scrub_rule;
typedef int (*scrub_validate_fn)(const struct scrub_rule *rule, const struct scrub_window *w,
                                 size_t at, size_t alen, struct scrub_hit *out);

struct scrub_rule {
	const char *name;
	const char *anchors[17]; /* NULL-terminated literals for the prefilter */
	int caseless;            /* anchors match in any case */
	scrub_validate_fn validate;
	int cls;                 /* body character class (SCRUB_CLS_*) */
	unsigned short min, max; /* body length after the anchor */
	int lbound;              /* class the byte before the anchor must NOT be in */
	int (*check)(const unsigned char *tok, size_t len); /* extra test on the token */
};

extern const struct scrub_rule scrub_detect_rules[];
extern const size_t scrub_detect_nrules;

/* Redaction continuing after a PEM block opened in an earlier window: the end
 * of the block (after its END line) searching from `from`, or `len` with
 * *still_open = 1 when the block goes on past the window. */
size_t scrub_detect_pem_continue(const struct scrub_window *w, size_t from, int *still_open);

/* The name every private-key continuation is reported under. */
extern const char scrub_detect_pem_name[];

/* CRC-32 (IEEE 802.3), as GitHub and npm use for their token checksums. */
unsigned long scrub_detect_crc32(const unsigned char *p, size_t n);
/* Whether [s, e) starts right after or ends right before one of our markers
 * ("[filtered: x]").  What stood there before the filter replaced it decided
 * the match's boundaries in the first pass; on filtered text they are
 * unknown, so such a hit is dropped (idempotence; found by fuzz_scrub). */
int scrub_detect_next_to_marker(const struct scrub_window *w, size_t s, size_t e);
/* Whether a "://" whose last byte is just before p surely starts no
 * url-password: the URL's user part ends within p[0, 32) at a byte other
 * than ':' (what the url-password validator reads first).  Reads exactly
 * p[0, 32); AVX2 only: the caller checks the CPU.  0 means "ask the
 * validator", never "a password is there". */
int scrub_detect_url_no_user(const unsigned char *p);

/* The 6-character base62 checksum suffix GitHub/npm tokens end with. */
void scrub_detect_base62_crc(const unsigned char *body, size_t n, char out[7]);

#endif
