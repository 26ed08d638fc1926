/*
 * request.h - parsing and validating the body of POST /v0/run (SPEC §3).
 *
 * Trust: the body is hostile network input.  Every field is type-checked,
 * every size bounded, unknown fields refused; the result only holds values
 * that passed.  The launcher re-checks what matters anyway.
 */
#ifndef SHARNESS_REQUEST_H
#define SHARNESS_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "profile.h"

struct request_error {
	int status;        /* HTTP status */
	char code[40];     /* machine code, e.g. "unknown_profile" */
	char message[320]; /* one sentence a person can act on */
};

struct run_request {
	char *cmd;
	size_t cmd_len;
	const struct profile *profile;
	size_t profile_id;
	char *cwd;                 /* lexically normalised, absolute */
	size_t workspace_id;
	unsigned timeout_s;
	bool timeout_capped;       /* asked for more than the profile's maximum */
	bool has_stdin;
	char *stdin_data;
	size_t stdin_len;
	char *env;                 /* env_count entries of "NAME=VALUE\0" */
	size_t env_len;
	unsigned env_count;
	bool stream;               /* "stream": true: NDJSON events as output arrives */
};

/* Fill `e` (helper for every error path in the front). */
void request_error_set(struct request_error *e, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Parse and validate a /v0/run body.  Returns 0, or -1 with `e` filled. */
int request_parse_run(const char *body, size_t len, const struct config *cfg,
                      const struct profile_set *profiles, struct run_request *out,
                      struct request_error *e);
void request_free(struct run_request *r);

#endif
