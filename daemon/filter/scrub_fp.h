/*
 * scrub_fp.h - the vault-key prefilter of the secret filter: hashed 8-byte
 * fingerprints of every long vault needle, probed at every 16th byte of the
 * text, then verified in C.  Internal to the scrub module.
 *
 * Why not Vectorscan literals: ~9 needles per key, 1,000 keys, made its
 * literal matcher (FDR) 3-4 times slower and its compile take 0.2 s; a
 * probe every 16 bytes into a bitmap that fits in L2 costs under two tenths of
 * a nanosecond per byte however many keys there are.
 *
 * Read-only after scrub_fp_new; shared by every stream and thread.
 */
#ifndef SHARNESS_SCRUB_FP_H
#define SHARNESS_SCRUB_FP_H

#include <stddef.h>
#include <stdint.h>

/* Bytes per fingerprint and distance between probes.  Every occurrence of a
 * needle of at least SCRUB_FP_MIN_LEN bytes holds a probe position p with
 * [p, p + SCRUB_FP_GRAM) inside it, at one of SCRUB_FP_STRIDE offsets from
 * its start; those offsets' grams are what the index holds.  Shorter
 * needles go to the literal matcher instead.
 *
 * Why 16 and not 8: the probes are this index's whole cost (measured on
 * the 2-vCPU build machine, every class of bench-filter-classes: 0.32 ns
 * per byte at 8, 0.20-0.24 at 16), while the needles of 15-22 bytes a stride of
 * 16 sends to Vectorscan (~350 at 1,000 keys of 16-40 characters) are long
 * literals, which slowed its scan by 3-5%. */
#define SCRUB_FP_GRAM 8u
#define SCRUB_FP_STRIDE 16u
#define SCRUB_FP_MIN_LEN (SCRUB_FP_GRAM + SCRUB_FP_STRIDE - 1u)

struct scrub_bloom;
struct scrub_fp;
struct scrub_vault;

/* Index every needle of `v` that is at least SCRUB_FP_MIN_LEN bytes long.
 * Returns NULL with errno on allocation failure; an index of no needles is
 * valid and scans nothing. */
struct scrub_fp *scrub_fp_new(const struct scrub_vault *v);
void scrub_fp_free(struct scrub_fp *fp);
size_t scrub_fp_needles(const struct scrub_fp *fp); /* needles indexed */

/* Called once per needle occurrence found in buf: the needle (len bytes)
 * starts at `start` and its first `matched` bytes are there.  matched ==
 * len: the whole needle.  Less: a line end ('\n' or '\r') at start +
 * matched cut it after the gram that found it; scrub_wrap_cut decides
 * whether it goes on across a wrap.  A non-zero return stops the scan. */
typedef int (*scrub_fp_hit_fn)(void *arg, size_t start, const unsigned char *needle, size_t len, size_t matched);

/* Find every occurrence of every indexed needle lying wholly inside
 * buf[0, len).  Returns 0, or the callback's non-zero value. */
int scrub_fp_scan(const struct scrub_fp *fp, const unsigned char *buf, size_t len, scrub_fp_hit_fn hit,
                  void *arg);

/* For each of n <= 32 grams that the filter may hold, every indexed needle
 * holding grams[i] at offset `off`: fn(arg, i, needle, len, off); a
 * non-zero return stops.  For scrub_wrap.c's probes at line breaks. */
typedef int (*scrub_fp_entry_fn)(void *arg, unsigned i, const unsigned char *needle, size_t len, size_t off);
int scrub_fp_lookup(const struct scrub_fp *fp, const uint64_t *grams, unsigned n, scrub_fp_entry_fn fn,
                    void *arg);
/* The filter scrub_fp_lookup tests first, for a caller that tests many
 * grams before it looks any up (scrub_wrap.c). */
const struct scrub_bloom *scrub_fp_bloom(const struct scrub_fp *fp);

/* The same one probe at a time (the plain loop scrub_fp_scan unrolls);
 * for the unit test that checks both paths agree. */
int scrub_fp_scan_portable(const struct scrub_fp *fp, const unsigned char *buf, size_t len,
                           scrub_fp_hit_fn hit, void *arg);

#endif
