/*
 * scrub_rules.h - the compiled secret-filter rules shared by every stream:
 * one Vectorscan literal database holding every detector anchor and the
 * vault needles too short for the fingerprint index, the fingerprint index
 * (scrub_fp.h) holding all longer ones, plus what a match id means.
 * Internal to the scrub module (scrub.h is the public contract).
 *
 * Read-only after scrub_rules_new; streams clone the prototype scratch.
 */
#ifndef SHARNESS_SCRUB_RULES_H
#define SHARNESS_SCRUB_RULES_H

#include <hs/hs.h>
#include <stddef.h>
#include <stdint.h>

struct scrub_fp;
struct scrub_vault;

/* A stream scans windows of SCRUB_WINDOW bytes and holds back the last
 * SCRUB_HOLD of each (> the longest token and vault needle) for the next. */
#define SCRUB_WINDOW (128u * 1024u)
#define SCRUB_HOLD (16u * 1024u)

/* What a prefilter id stands for: ids below nanchors are detector anchors,
 * the rest are short vault needles (short_len[id - nanchors] long). */
struct scrub_anchor {
	unsigned rule; /* index into scrub_detect_rules */
	unsigned len;
};

#define SCRUB_URL_ANCHOR "://"
#define SCRUB_NO_ANCHOR UINT32_MAX

struct scrub_rules {
	hs_database_t *db;
	hs_scratch_t *scratch; /* prototype for hs_clone_scratch */
	struct scrub_anchor *anchors;
	size_t nanchors;
	unsigned *short_len;
	size_t nshort;
	struct scrub_fp *fp; /* vault needles of SCRUB_FP_MIN_LEN bytes and more */
	size_t maxlit;       /* longest literal in db */
	/* The anchor id of "://" (url-password), which is not in db: it
	 * occurs on most lines of JSON and build logs, and reporting it from
	 * Vectorscan's literal matcher cost a third of that scan (measured:
	 * 0.53 against 0.38 ns/byte on JSON records); scrub.c finds it with
	 * a SIMD compare of its own.  SCRUB_NO_ANCHOR when no rule has it. */
	unsigned url_id;
	size_t fp_maxlen;    /* longest needle in fp */
	struct scrub_vault *vault;
};

#endif
