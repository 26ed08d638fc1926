/*
 * scrub_rules.h - the compiled secret-filter rules shared by every stream:
 * a Vectorscan literal database holding the detector anchors (all, or
 * those of four bytes and more where scrub_tri.h finds the rest) and the
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
struct scrub_tri;
struct scrub_vault;
struct scrub_wrap;

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
	hs_database_t *db;     /* every anchor but "://" (url_id), and the short needles */
	hs_database_t *db_url; /* the same with "://"; NULL with tri */
	hs_scratch_t *scratch; /* prototype for hs_clone_scratch; fits both */
	struct scrub_anchor *anchors;
	size_t nanchors;
	unsigned *short_len;
	size_t nshort;
	struct scrub_fp *fp; /* vault needles of SCRUB_FP_MIN_LEN bytes and more */
	size_t maxlit;       /* longest literal in db */
	/* The anchor id of "://" (url-password).  Where it is rare a
	 * stream scans with db_url and Vectorscan reports it for free; where
	 * it is dense (JSON records: one every ~200 bytes) reporting it from
	 * Vectorscan cost a third of that scan (0.53 against 0.38 ns/byte),
	 * so scrub.c scans with db and finds "://" with a SIMD compare of its
	 * own (which costs about 0.06 ns/byte on text without URLs).  Which
	 * one a window uses is decided by the "://" count of the window
	 * before (scrub.c: URL_DENSE).  SCRUB_NO_ANCHOR when no rule has it. */
	unsigned url_id;
	size_t fp_maxlen;    /* longest needle in fp */
	struct scrub_wrap *wrap; /* encoded vault needles across line breaks */
	/* The three-byte anchors' finder (scrub_tri.h) where the CPU runs it;
	 * those anchors are then in neither database.  NULL: they are in both. */
	struct scrub_tri *tri;
	int avx2;            /* the CPU has AVX2 (scrub_detect_url_no_user) */
	struct scrub_vault *vault;
};

#endif
