/*
 * request.c - validation of POST /v0/run bodies (see request.h).
 */
#include "request.h"
#include "path.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "privsep.h"
#include "utf8.h"

void request_error_set(struct request_error *e, int status, const char *code, const char *fmt, ...)
{
	va_list ap;
	e->status = status;
	snprintf(e->code, sizeof(e->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/* The workspace lexically containing `cwd`, or -1. */
static int find_workspace(const struct config *cfg, const char *cwd)
{
	for (size_t i = 0; i < cfg->n_workspaces; i++) {
		const char *w = cfg->workspaces[i];
		size_t wl = strlen(w);
		if (strcmp(w, "/") == 0 || (strncmp(cwd, w, wl) == 0 && (cwd[wl] == '\0' || cwd[wl] == '/')))
			return (int)i;
	}
	return -1;
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	return "an object";
}

static int parse_env(const cJSON *obj, struct run_request *r, struct request_error *e)
{
	size_t total = 0;
	unsigned count = 0;
	const cJSON *it;

	if (!cJSON_IsObject(obj)) {
		request_error_set(e, 400, "bad_field", "Field 'env' must be an object of strings, not %s.", type_name(obj));
		return -1;
	}
	cJSON_ArrayForEach(it, obj) {
		const char *name = it->string;
		if (!profile_env_name_valid(name)) {
			request_error_set(e, 400, "bad_env", "env name '%.64s' is not valid: use letters, digits and '_', not starting with a digit.", name);
			return -1;
		}
		if (profile_env_name_dangerous(name)) {
			request_error_set(e, 400, "dangerous_env", "env name '%.64s' is not allowed: it changes how programs load or run.", name);
			return -1;
		}
		if (!cJSON_IsString(it)) {
			request_error_set(e, 400, "bad_env", "env value of '%.64s' must be a string, not %s.", name, type_name(it));
			return -1;
		}
		for (const cJSON *o = obj->child; o != it; o = o->next)
			if (strcmp(o->string, name) == 0) {
				request_error_set(e, 400, "duplicate_env", "env name '%.64s' appears twice.", name);
				return -1;
			}
		if (++count > RUN_ENV_COUNT_MAX) {
			request_error_set(e, 400, "too_many_env", "env has more than %u variables.", RUN_ENV_COUNT_MAX);
			return -1;
		}
		total += strlen(name) + 1 + strlen(it->valuestring) + 1;
		if (total > RUN_ENV_BYTES_MAX) {
			request_error_set(e, 400, "env_too_large", "env is larger than %u bytes in all.", RUN_ENV_BYTES_MAX);
			return -1;
		}
	}
	r->env = malloc(total + 1);
	if (!r->env) {
		request_error_set(e, 500, "internal", "The daemon is out of memory.");
		return -1;
	}
	size_t off = 0;
	cJSON_ArrayForEach(it, obj) {
		off += (size_t)sprintf(r->env + off, "%s=%s", it->string, it->valuestring) + 1;
	}
	r->env_len = total;
	r->env_count = count;
	return 0;
}

static int parse_fields(const cJSON *root, const struct config *cfg, const struct profile_set *profiles,
                        struct run_request *r, struct request_error *e)
{
	const cJSON *cmd = NULL, *profile = NULL, *cwd = NULL, *timeout = NULL, *in = NULL, *env = NULL;
	const cJSON *stream = NULL;
	const cJSON *it;

	cJSON_ArrayForEach(it, root) {
		const cJSON **slot = NULL;
		if (strcmp(it->string, "cmd") == 0)
			slot = &cmd;
		else if (strcmp(it->string, "profile") == 0)
			slot = &profile;
		else if (strcmp(it->string, "cwd") == 0)
			slot = &cwd;
		else if (strcmp(it->string, "timeout_s") == 0)
			slot = &timeout;
		else if (strcmp(it->string, "stdin") == 0)
			slot = &in;
		else if (strcmp(it->string, "env") == 0)
			slot = &env;
		else if (strcmp(it->string, "stream") == 0)
			slot = &stream;
		if (!slot) {
			request_error_set(e, 400, "unknown_field", "Field '%.64s' is unknown; the fields are cmd, profile, cwd, timeout_s, stdin, env and stream.", it->string);
			return -1;
		}
		if (*slot) {
			request_error_set(e, 400, "duplicate_field", "Field '%s' appears twice.", it->string);
			return -1;
		}
		*slot = it;
	}

	if (!cmd) {
		request_error_set(e, 400, "missing_field", "Field 'cmd' is required: the command to run with /bin/bash -c.");
		return -1;
	}
	if (!cJSON_IsString(cmd)) {
		request_error_set(e, 400, "bad_field", "Field 'cmd' must be a string, not %s.", type_name(cmd));
		return -1;
	}
	r->cmd_len = strlen(cmd->valuestring);
	if (r->cmd_len == 0) {
		request_error_set(e, 400, "bad_field", "Field 'cmd' must not be empty.");
		return -1;
	}
	if (r->cmd_len > RUN_CMD_MAX) {
		request_error_set(e, 400, "cmd_too_large", "Field 'cmd' is longer than %u bytes.", RUN_CMD_MAX);
		return -1;
	}

	const char *pname = "analyse";
	if (profile) {
		if (!cJSON_IsString(profile)) {
			request_error_set(e, 400, "bad_field", "Field 'profile' must be a string, not %s.", type_name(profile));
			return -1;
		}
		pname = profile->valuestring;
	}
	r->profile = profile_set_find(profiles, pname, &r->profile_id);
	if (!r->profile) {
		request_error_set(e, 404, "unknown_profile", "There is no profile named '%.64s'; GET /v0/profiles lists them.", pname);
		return -1;
	}

	char norm[RUN_CWD_MAX];
	if (cwd) {
		if (!cJSON_IsString(cwd)) {
			request_error_set(e, 400, "bad_field", "Field 'cwd' must be a string, not %s.", type_name(cwd));
			return -1;
		}
		/* Only text: the approver's listing and every JSON line show the
		 * cwd, and a byte that is not UTF-8 would make them unreadable. */
		if (!utf8_valid(cwd->valuestring, strlen(cwd->valuestring))) {
			request_error_set(e, 400, "bad_cwd", "Field 'cwd' must be valid UTF-8.");
			return -1;
		}
		if (cwd->valuestring[0] != '/' || path_normalise(cwd->valuestring, norm, sizeof(norm)) < 0) {
			request_error_set(e, 400, "bad_cwd", "Field 'cwd' must be an absolute path of at most %u bytes.", RUN_CWD_MAX - 1);
			return -1;
		}
		int w = find_workspace(cfg, norm);
		if (w < 0) {
			request_error_set(e, 404, "cwd_outside_workspace", "cwd '%.128s' is not inside a configured workspace.", norm);
			return -1;
		}
		r->workspace_id = (size_t)w;
	} else {
		snprintf(norm, sizeof(norm), "%s", cfg->workspaces[0]);
		r->workspace_id = 0;
	}
	r->cwd = strdup(norm);

	r->timeout_s = r->profile->timeout_default_s;
	if (timeout) {
		if (!cJSON_IsNumber(timeout) || !isfinite(timeout->valuedouble) || timeout->valuedouble <= 0) {
			request_error_set(e, 400, "bad_field", "Field 'timeout_s' must be a positive number of seconds.");
			return -1;
		}
		double t = ceil(timeout->valuedouble);
		if (t > r->profile->timeout_max_s) {
			r->timeout_s = r->profile->timeout_max_s;
			r->timeout_capped = true;
		} else {
			r->timeout_s = (unsigned)t;
		}
	}

	if (in) {
		if (!cJSON_IsString(in)) {
			request_error_set(e, 400, "bad_field", "Field 'stdin' must be a string, not %s.", type_name(in));
			return -1;
		}
		r->stdin_len = strlen(in->valuestring);
		if (r->stdin_len > RUN_STDIN_MAX) {
			request_error_set(e, 413, "stdin_too_large", "Field 'stdin' is larger than %u bytes.", RUN_STDIN_MAX);
			return -1;
		}
		r->has_stdin = true;
		r->stdin_data = strdup(in->valuestring);
	}
	if (env && parse_env(env, r, e) < 0)
		return -1;
	if (stream) {
		if (!cJSON_IsBool(stream)) {
			request_error_set(e, 400, "bad_field", "Field 'stream' must be true or false, not %s.", type_name(stream));
			return -1;
		}
		r->stream = cJSON_IsTrue(stream);
	}
	r->cmd = strdup(cmd->valuestring);
	if (!r->cmd || !r->cwd || (r->has_stdin && !r->stdin_data)) {
		request_error_set(e, 500, "internal", "The daemon is out of memory.");
		return -1;
	}
	return 0;
}

int request_parse_run(const char *body, size_t len, const struct config *cfg,
                      const struct profile_set *profiles, struct run_request *out,
                      struct request_error *e)
{
	memset(out, 0, sizeof(*out));
	/* cJSON silently cuts a string at an escaped NUL; refuse instead. */
	if (memmem(body, len, "\\u0000", 6)) {
		request_error_set(e, 400, "bad_json", "Strings must not contain NUL (\\u0000).");
		return -1;
	}
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (!root) {
		request_error_set(e, 400, "bad_json", "The body is not valid JSON (error near byte %zu).",
		                  end ? (size_t)(end - body) : (size_t)0);
		return -1;
	}
	/* One document and nothing after it: a second object would be silently
	 * ignored otherwise (cJSON stops at the end of the first). */
	while (end && end < body + len && strchr(" \t\r\n", *end) && *end)
		end++;
	if (end && end < body + len) {
		request_error_set(e, 400, "bad_json", "The body holds more than one JSON value (extra text at byte %zu).",
		                  (size_t)(end - body));
		cJSON_Delete(root);
		return -1;
	}
	int rc = -1;
	if (!cJSON_IsObject(root))
		request_error_set(e, 400, "bad_json", "The body must be a JSON object, not %s.", type_name(root));
	else
		rc = parse_fields(root, cfg, profiles, out, e);
	cJSON_Delete(root);
	if (rc < 0)
		request_free(out);
	return rc;
}

void request_free(struct run_request *r)
{
	if (!r)
		return;
	free(r->cmd);
	free(r->cwd);
	if (r->stdin_data)
		explicit_bzero(r->stdin_data, r->stdin_len);
	free(r->stdin_data);
	if (r->env)
		explicit_bzero(r->env, r->env_len);
	free(r->env);
	memset(r, 0, sizeof(*r));
}
