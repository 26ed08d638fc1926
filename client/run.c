/*
 * run.c - POST /v0/run request and exit-record mapping (see run.h).
 */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api.h"

int run_call(const struct conf *c, const char *cmd, size_t len, const struct run_opts *o, json_t **reply,
	     char *err, size_t errlen)
{
	char cwdbuf[PATH_MAX];
	int status, rc = -1;
	*reply = NULL;
	if (len == 0) {
		snprintf(err, errlen, "no command given: put the command after --");
		return -1;
	}
	if (len > RUN_MAX_CMD) {
		snprintf(err, errlen, "the command is %zu bytes, more than the %u KiB sharnessd accepts", len,
			 RUN_MAX_CMD >> 10);
		return -1;
	}
	const char *cwd = o->cwd;
	if (!cwd) {
		cwd = getcwd(cwdbuf, sizeof cwdbuf);
		if (!cwd) {
			snprintf(err, errlen, "cannot find the current directory: %s (pass --cwd)", strerror(errno));
			return -1;
		}
	}
	json_t *req = json_object();
	json_t *jcmd = json_stringn(cmd, len);
	json_t *jcwd = json_string(cwd);
	if (!req || !jcmd || !jcwd) {
		json_decref(jcmd);
		json_decref(jcwd);
		snprintf(err, errlen, "%s is not valid UTF-8 text, which the JSON API requires",
			 !jcmd ? "the command" : "the working directory");
		goto out;
	}
	json_object_set_new(req, "cmd", jcmd);
	json_object_set_new(req, "cwd", jcwd);
	if (o->profile)
		json_object_set_new(req, "profile", json_string(o->profile));
	if (o->timeout_s > 0)
		json_object_set_new(req, "timeout_s", json_integer(o->timeout_s));
	if (o->stdin_data) {
		json_t *s = json_stringn(o->stdin_data, o->stdin_len);
		if (!s) {
			snprintf(err, errlen, "stdin is not valid UTF-8 text, which the JSON API requires");
			goto out;
		}
		json_object_set_new(req, "stdin", s);
	}
	if (o->env)
		json_object_set(req, "env", o->env);
	rc = api_call(c, "POST", "/v0/run", req, reply, &status, err, errlen);
out:
	json_decref(req);
	return rc;
}

static int signo_of(json_t *sig)
{
	if (json_is_integer(sig))
		return (int)json_integer_value(sig);
	const char *name = json_string_value(sig);
	if (!name)
		return -1;
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (int i = 1; i < NSIG; i++) {
		const char *abbrev = sigabbrev_np(i);
		if (abbrev && strcasecmp(abbrev, name) == 0)
			return i;
	}
	return -1;
}

int run_exit_code(json_t *reply, char *err, size_t errlen)
{
	json_t *ex = json_object_get(reply, "exit");
	if (json_is_true(json_object_get(reply, "timed_out")))
		return RUN_EXIT_TIMEOUT;
	if (json_is_integer(ex)) {
		json_int_t v = json_integer_value(ex);
		if (v >= 0 && v <= 255)
			return (int)v;
	}
	json_t *sig = json_object_get(reply, "signal");
	if (sig && !json_is_null(sig)) {
		int s = signo_of(sig);
		if (s > 0 && s < 128)
			return 128 + s;
		snprintf(err, errlen, "sharnessd reported an unknown signal for the command");
		return RUN_EXIT_ERROR;
	}
	snprintf(err, errlen, "sharnessd's reply carries no exit status");
	return RUN_EXIT_ERROR;
}

const char *run_stream(json_t *reply, const char *name, size_t *len)
{
	json_t *s = json_object_get(reply, name);
	if (!json_is_string(s)) {
		*len = 0;
		return "";
	}
	*len = json_string_length(s);
	return json_string_value(s);
}
