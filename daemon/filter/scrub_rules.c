/*
 * scrub_rules.c - build the secret filter's rules once at start: load the
 * vault, index its long needles by fingerprint (scrub_fp.c), and compile the
 * detector anchors and the few short needles into Vectorscan literal
 * databases (block mode): one without "://" and one with it (url_id); or,
 * where the CPU runs the three-byte finder (scrub_tri.h), that finder for
 * the three-byte anchors and "://" and one database for the rest.
 *
 * Why split the vault: each key becomes up to 9 needles (raw, hex in two
 * cases, base64 and base64url at three alignments), so 1,000 keys put ~9,000
 * literals of 10-60 bytes into the literal matcher; measured on the benchmark
 * log that made the scan 3 times slower and the compile 0.15 s.  Needles of
 * SCRUB_FP_MIN_LEN (23) bytes and more go to the fingerprint index, whose
 * cost does not depend on how many there are; the database keeps ~180
 * anchors and the shorter needles (a few hundred at 1,000 keys: long
 * literals, which cost it little) and compiles in well under a second.
 * Literals only: every validation is in C (scrub_detect.c), so no pattern can
 * make the engine slow or its state large.
 *
 * Trust: operator files only; the result is read-only and shared by threads.
 */
#include "scrub.h"
#include "scrub_detect.h"
#include "scrub_fp.h"
#include "scrub_rules.h"
#include "scrub_tri.h"
#include "scrub_vault.h"
#include "scrub_wrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether anchor a of rule goes to the three-byte finder (scrub_tri.h)
 * when the CPU runs it: three case-sensitive bytes ("://" too, which then
 * needs neither db_url nor scrub.c's own "://" pass). */
static int tri_anchor(const struct scrub_rule *rule, size_t a)
{
	return !rule->caseless && strlen(rule->anchors[a]) == 3;
}

/* The three-byte finder, where this CPU runs it; r->tri stays NULL (and the
 * anchors go to Vectorscan) otherwise.  Returns -1 only when out of memory. */
static int build_tri(struct scrub_rules *r)
{
	struct scrub_tri_anchor *ta;
	size_t n = 0;
	if (!scrub_tri_usable())
		return 0;
	ta = calloc(r->nanchors + 1, sizeof *ta);
	if (!ta)
		return -1;
	for (size_t i = 0, id = 0; i < scrub_detect_nrules; i++)
		for (size_t a = 0; scrub_detect_rules[i].anchors[a]; a++, id++)
			if (tri_anchor(&scrub_detect_rules[i], a)) {
				memcpy(ta[n].b, scrub_detect_rules[i].anchors[a], 3);
				ta[n++].id = (unsigned)id;
			}
	r->tri = n ? scrub_tri_new(ta, n) : NULL;
	free(ta);
	return n && !r->tri && errno == ENOMEM ? -1 : 0;
}

static int compile(struct scrub_rules *r, char *err, size_t errlen)
{
	size_t n = r->nanchors + r->nshort + 1, k = 0; /* + 1: never calloc(0), and room for "://" */
	const char **exprs = calloc(n, sizeof *exprs);
	size_t *lens = calloc(n, sizeof *lens);
	unsigned *flags = calloc(n, sizeof *flags), *ids = calloc(n, sizeof *ids);
	hs_compile_error_t *cerr = NULL;
	int rc = -1;
	if (!exprs || !lens || !flags || !ids) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto out;
	}
	/* k counts the expressions, id the anchors: the "://" anchor keeps its
	 * id and is added last, to db_url only (scrub_rules.h: url_id). */
	r->url_id = SCRUB_NO_ANCHOR;
	for (size_t i = 0, id = 0; i < scrub_detect_nrules; i++) {
		const struct scrub_rule *rule = &scrub_detect_rules[i];
		for (size_t a = 0; rule->anchors[a]; a++, id++) {
			if (!rule->caseless && strcmp(rule->anchors[a], SCRUB_URL_ANCHOR) == 0) {
				r->url_id = (unsigned)id; /* goes last, into db_url only */
				continue;
			}
			if (r->tri && tri_anchor(rule, a))
				continue; /* scrub_tri.c finds it */
			exprs[k] = rule->anchors[a];
			lens[k] = strlen(rule->anchors[a]);
			if (lens[k] > r->maxlit)
				r->maxlit = lens[k];
			flags[k] = rule->caseless ? HS_FLAG_CASELESS : 0;
			ids[k] = (unsigned)id;
			k++;
		}
	}
	for (size_t i = 0, nv = scrub_vault_needles(r->vault), id = r->nanchors; i < nv; i++) {
		size_t len;
		const char *p = (const char *)scrub_vault_needle(r->vault, i, &len);
		if (len >= SCRUB_FP_MIN_LEN) {
			if (len > r->fp_maxlen)
				r->fp_maxlen = len;
			continue;
		}
		if (len > r->maxlit)
			r->maxlit = len;
		exprs[k] = p;
		lens[k] = len;
		ids[k] = (unsigned)id++;
		k++;
	}
	if (r->url_id != SCRUB_NO_ANCHOR && !r->tri) {
		exprs[k] = SCRUB_URL_ANCHOR;
		lens[k] = strlen(SCRUB_URL_ANCHOR);
		flags[k] = 0;
		ids[k] = r->url_id;
	}
	/* With the three-byte finder, "://" is its anchor and db serves all. */
	if (hs_compile_lit_multi(exprs, flags, ids, lens, (unsigned)k, HS_MODE_BLOCK, NULL, &r->db, &cerr) !=
	        HS_SUCCESS ||
	    (!r->tri && hs_compile_lit_multi(exprs, flags, ids, lens, (unsigned)k + (r->url_id != SCRUB_NO_ANCHOR),
	                                     HS_MODE_BLOCK, NULL, &r->db_url, &cerr) != HS_SUCCESS)) {
		snprintf(err, errlen, "secret filter: cannot compile the rules: %s",
		         cerr && cerr->message ? cerr->message : "unknown error");
		hs_free_compile_error(cerr);
		goto out;
	}
	/* One scratch fits both databases (hs_alloc_scratch grows it). */
	if (hs_alloc_scratch(r->db, &r->scratch) != HS_SUCCESS ||
	    (r->db_url && hs_alloc_scratch(r->db_url, &r->scratch) != HS_SUCCESS)) {
		snprintf(err, errlen, "secret filter: cannot allocate scratch space");
		goto out;
	}
	rc = 0;
out:
	free(exprs);
	free(lens);
	free(flags);
	free(ids);
	return rc;
}

struct scrub_rules *scrub_rules_new(const char *secrets_file, const char *tls_key_file, char *err,
                                    size_t errlen)
{
	struct scrub_sources src;
	if (scrub_sources_open(&src, secrets_file, tls_key_file, err, errlen) < 0)
		return NULL;
	struct scrub_rules *r = scrub_rules_from(&src, err, errlen);
	scrub_sources_close(&src);
	return r;
}

struct scrub_rules *scrub_rules_from(const struct scrub_sources *src, char *err, size_t errlen)
{
	struct scrub_rules *r = calloc(1, sizeof *r);
	size_t k = 0;
	if (!r || !(r->vault = scrub_vault_new())) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto err_free;
	}
	if (scrub_vault_load(r->vault, src, err, errlen) < 0)
		goto err_free;
	for (size_t i = 0; i < scrub_detect_nrules; i++)
		for (size_t a = 0; scrub_detect_rules[i].anchors[a]; a++)
			r->nanchors++;
	for (size_t i = 0, nv = scrub_vault_needles(r->vault); i < nv; i++) {
		size_t len;
		scrub_vault_needle(r->vault, i, &len);
		r->nshort += len < SCRUB_FP_MIN_LEN;
	}
	r->anchors = calloc(r->nanchors + 1, sizeof *r->anchors);
	r->short_len = calloc(r->nshort + 1, sizeof *r->short_len);
	r->fp = scrub_fp_new(r->vault);
	r->wrap = r->fp ? scrub_wrap_new(r->vault, r->fp) : NULL;
	if (!r->anchors || !r->short_len || !r->fp || !r->wrap) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto err_free;
	}
	for (size_t i = 0; i < scrub_detect_nrules; i++)
		for (size_t a = 0; scrub_detect_rules[i].anchors[a]; a++, k++) {
			r->anchors[k].rule = (unsigned)i;
			r->anchors[k].len = (unsigned)strlen(scrub_detect_rules[i].anchors[a]);
		}
	k = 0;
	for (size_t i = 0, nv = scrub_vault_needles(r->vault); i < nv; i++) {
		size_t len;
		scrub_vault_needle(r->vault, i, &len);
		if (len < SCRUB_FP_MIN_LEN)
			r->short_len[k++] = (unsigned)len;
	}
	if (build_tri(r) < 0) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto err_free;
	}
	if (compile(r, err, errlen) < 0)
		goto err_free;
#if defined(__x86_64__) && defined(__GNUC__)
	r->avx2 = __builtin_cpu_supports("avx2");
#endif
	return r;
err_free:
	scrub_rules_free(r);
	return NULL;
}

void scrub_rules_free(struct scrub_rules *r)
{
	if (!r)
		return;
	hs_free_scratch(r->scratch);
	hs_free_database(r->db);
	if (r->db_url)
		hs_free_database(r->db_url);
	free(r->anchors);
	free(r->short_len);
	scrub_fp_free(r->fp);
	scrub_wrap_free(r->wrap);
	scrub_tri_free(r->tri);
	scrub_vault_free(r->vault);
	free(r);
}

size_t scrub_vault_count(const struct scrub_rules *r)
{
	return r ? scrub_vault_keys(r->vault) : 0;
}
