/*
 * scrub_rules.c - build the secret filter's rules once at start: load the
 * vault, collect every detector anchor and vault needle, and compile them into
 * one Vectorscan literal database (block mode).
 *
 * Why one literal database: Vectorscan scans all of them in one pass at
 * several GB/s, and its cost barely moves from 100 to 15,000 literals
 * (research B.3), so 1,000 vault keys with all their encodings are free.
 * Literals only: every validation is in C (scrub_detect.c), so no pattern can
 * make the engine slow or its state large.
 *
 * Trust: operator files only; the result is read-only and shared by threads.
 */
#include "scrub.h"
#include "scrub_detect.h"
#include "scrub_rules.h"
#include "scrub_vault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compile(struct scrub_rules *r, char *err, size_t errlen)
{
	size_t n = r->nanchors + r->nneedles, k = 0;
	const char **exprs = calloc(n, sizeof *exprs);
	size_t *lens = calloc(n, sizeof *lens);
	unsigned *flags = calloc(n, sizeof *flags), *ids = calloc(n, sizeof *ids);
	hs_compile_error_t *cerr = NULL;
	int rc = -1;
	if (!exprs || !lens || !flags || !ids) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto out;
	}
	for (size_t i = 0; i < scrub_detect_nrules; i++) {
		const struct scrub_rule *rule = &scrub_detect_rules[i];
		for (size_t a = 0; rule->anchors[a]; a++, k++) {
			exprs[k] = rule->anchors[a];
			lens[k] = strlen(rule->anchors[a]);
			flags[k] = rule->caseless ? HS_FLAG_CASELESS : 0;
			ids[k] = (unsigned)k;
		}
	}
	for (size_t i = 0; i < r->nneedles; i++, k++) {
		size_t len;
		exprs[k] = (const char *)scrub_vault_needle(r->vault, i, &len);
		lens[k] = len;
		ids[k] = (unsigned)k;
	}
	if (hs_compile_lit_multi(exprs, flags, ids, lens, (unsigned)n, HS_MODE_BLOCK, NULL, &r->db, &cerr) !=
	    HS_SUCCESS) {
		snprintf(err, errlen, "secret filter: cannot compile the rules: %s",
		         cerr && cerr->message ? cerr->message : "unknown error");
		hs_free_compile_error(cerr);
		goto out;
	}
	if (hs_alloc_scratch(r->db, &r->scratch) != HS_SUCCESS) {
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
	struct scrub_rules *r = calloc(1, sizeof *r);
	size_t k = 0;
	if (!r || !(r->vault = scrub_vault_new())) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto err_free;
	}
	if (secrets_file && scrub_vault_load_file(r->vault, secrets_file, err, errlen) < 0)
		goto err_free;
	if (tls_key_file && scrub_vault_load_pem(r->vault, tls_key_file, err, errlen) < 0)
		goto err_free;
	for (size_t i = 0; i < scrub_detect_nrules; i++)
		for (size_t a = 0; scrub_detect_rules[i].anchors[a]; a++)
			r->nanchors++;
	r->nneedles = scrub_vault_needles(r->vault);
	r->anchors = calloc(r->nanchors, sizeof *r->anchors);
	r->needle_len = calloc(r->nneedles + 1, sizeof *r->needle_len);
	if (!r->anchors || !r->needle_len) {
		snprintf(err, errlen, "secret filter: out of memory");
		goto err_free;
	}
	for (size_t i = 0; i < scrub_detect_nrules; i++)
		for (size_t a = 0; scrub_detect_rules[i].anchors[a]; a++, k++) {
			r->anchors[k].rule = (unsigned)i;
			r->anchors[k].len = (unsigned)strlen(scrub_detect_rules[i].anchors[a]);
		}
	for (size_t i = 0; i < r->nneedles; i++) {
		size_t len;
		scrub_vault_needle(r->vault, i, &len);
		r->needle_len[i] = (unsigned)len;
	}
	if (compile(r, err, errlen) < 0)
		goto err_free;
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
	free(r->anchors);
	free(r->needle_len);
	scrub_vault_free(r->vault);
	free(r);
}

size_t scrub_rules_count(const struct scrub_rules *r)
{
	(void)r; /* the detectors are built in; every rules object has them all */
	return scrub_detect_nrules;
}

const char *scrub_rule_name(const struct scrub_rules *r, size_t i)
{
	(void)r;
	return i < scrub_detect_nrules ? scrub_detect_rules[i].name : NULL;
}

size_t scrub_vault_count(const struct scrub_rules *r)
{
	return r ? scrub_vault_keys(r->vault) : 0;
}
