/*
 * run.h - POST /v0/run: build the request, read the reply's exit record.
 * Shared by the `run` command and the MCP tool.
 */
#ifndef SHARNESS_CLIENT_RUN_H
#define SHARNESS_CLIENT_RUN_H

#include <stddef.h>

#include <jansson.h>

#include "conf.h"

#define RUN_MAX_STDIN (1u << 20)     /* SPEC §3: stdin ≤ 1 MiB */
#define RUN_MAX_CMD (256u << 10)     /* SPEC §3: cmd ≤ 256 KiB */

#define RUN_EXIT_TIMEOUT 124         /* as timeout(1) */
#define RUN_EXIT_ERROR 125            /* the client's or the daemon's own failure */
#define RUN_TIMEOUT_MAX_S 100000000L  /* --timeout at most, in seconds */

struct run_opts {
	const char *profile;        /* NULL: the daemon's default */
	const char *cwd;            /* NULL: getcwd() */
	long timeout_s;             /* 0: the profile's default */
	const char *stdin_data;     /* NULL: no stdin field */
	size_t stdin_len;
	json_t *env;                /* object string->string or NULL; borrowed */
	const char *path;           /* NULL: /v0/run; "/v0/jobs" starts a job */
	/* "stream": true - each piece of output as it arrives (fd 1 stdout, 2
	 * stderr); the reply is then the final event, without stdout/stderr. */
	void (*on_output)(void *arg, int fd, const char *buf, size_t len);
	void *on_output_arg;
};

/* Runs cmd (len bytes) and returns the reply in *reply.  0, or -1 with err. */
int run_call(const struct conf *c, const char *cmd, size_t len, const struct run_opts *o, json_t **reply,
	     char *err, size_t errlen);

/* The process exit code for a reply: the command's exit, 128+signal number,
 * RUN_EXIT_TIMEOUT on timeout; RUN_EXIT_ERROR with err set when the record is
 * malformed. */
int run_exit_code(json_t *reply, char *err, size_t errlen);

/* The reply's stdout or stderr field (may contain NUL); "" when absent. */
const char *run_stream(json_t *reply, const char *name, size_t *len);

/* The reply's denial `i` as one `sharness: LOCK: DETAIL; HINT` line, control
 * characters blanked; -1 past the last. */
int run_denial_line(json_t *reply, size_t i, char *line, size_t len);

#endif
