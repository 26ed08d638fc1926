/*
 * scrub_tri.h - the three-byte detector anchors ("eyJ", "hf_", "SK0"...,
 * "0Q~"...) found by a table lookup per byte instead of by Vectorscan, on
 * CPUs with AVX-512 VBMI.  Internal to the scrub module.
 *
 * Why: Vectorscan's literal matcher (FDR) is fastest when its shortest
 * literal has four bytes or more.  Measured on a Zen 5 EPYC (session 9,
 * bench-filter-classes, ns per byte of the whole filter): dropping the 30
 * three-byte anchors saved 0.063 on base64, 0.042 on JSON, 0.013-0.024 on
 * source, minified JS and prose, nothing on build logs; this finder costs
 * 0.031-0.035 on a hot window, and it also finds "://", which saves
 * scrub.c's own "://" pass (build logs, JSON) or Vectorscan's reports of it.
 * VBMI's two-table byte permute looks up a 128-entry table for 64 bytes in
 * one instruction, so three lookups (one per anchor position) and an AND
 * find every anchor's start in 64 bytes.  Without VBMI the same finder
 * costs more than it saves (session 8, on a Zen 1 EPYC with AVX2 nibble
 * shuffles: 2-21% slower), so the anchors then stay in Vectorscan
 * (scrub_tri_usable says no).
 *
 * Each anchor is put in one of 8 buckets (a bit of the tables); a bucket's
 * anchors differ in at most one position, so its table entries are almost
 * exactly its anchors.  Every candidate is confirmed byte by byte, so a
 * table entry that lets through more than its anchors (bytes >= 0x80 alias
 * bytes < 0x80 in the lookup) costs time, never a wrong report.
 *
 * Read-only after scrub_tri_new; shared by every stream and thread.
 */
#ifndef SHARNESS_SCRUB_TRI_H
#define SHARNESS_SCRUB_TRI_H

#include <stddef.h>

struct scrub_tri;

/* One anchor for the finder: three case-sensitive bytes and the id reported. */
struct scrub_tri_anchor {
	unsigned char b[3];
	unsigned id;
};

/* Whether this CPU runs the finder: scrub_cpu.h's scrub_avx512_usable(). */
int scrub_tri_usable(void);

/* A finder for the n anchors, or NULL when they do not fit 8 buckets or on
 * allocation failure (errno says which: E2BIG, ENOMEM): the caller then
 * leaves them to Vectorscan. */
struct scrub_tri *scrub_tri_new(const struct scrub_tri_anchor *a, size_t n);
void scrub_tri_free(struct scrub_tri *t);

/* Called once per occurrence, with the anchor's id and the offset just past
 * it (as Vectorscan reports a literal), in increasing order of offset; a
 * non-zero return stops the scan. */
typedef int (*scrub_tri_hit_fn)(void *arg, unsigned id, size_t end);

/* Find every occurrence of every anchor in buf[0, len).  Only call it when
 * scrub_tri_usable() said yes.  Returns 0, or the callback's value. */
int scrub_tri_scan(const struct scrub_tri *t, const unsigned char *buf, size_t len, scrub_tri_hit_fn hit,
		   void *arg);

/* The same one position at a time, for any CPU: the unit test checks that
 * both agree. */
int scrub_tri_scan_portable(const struct scrub_tri *t, const unsigned char *buf, size_t len,
			    scrub_tri_hit_fn hit, void *arg);

#endif
