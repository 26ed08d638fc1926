/*
 * api.c - JSON requests and error mapping (see api.h).
 *
 * Trust: the reply comes from the authenticated daemon, but it is still
 * parsed with jansson and each field's type is checked by the caller.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

int api_call(const struct conf *c, const char *method, const char *path, json_t *body, json_t **out,
	     int *status, char *err, size_t errlen)
{
	struct api_extra x = {0};
	return api_call_ex(c, method, path, body, &x, out, status, err, errlen);
}

int api_call_ex(const struct conf *c, const char *method, const char *path, json_t *body, struct api_extra *x,
		json_t **out, int *status, char *err, size_t errlen)
{
	struct http_reply r = {.on_data = x->on_data, .on_data_arg = x->arg, .on_slow = x->on_slow,
			       .on_slow_arg = x->slow_arg, .slow_ms = x->slow_ms};
	void (*on_data)(void *, const char *, size_t) = x->on_data;
	char *text = NULL;
	int rc = -1;
	*out = NULL;
	*status = 0;
	x->retry_after = -1;
	if (body) {
		/* JSON_COMPACT keeps the body small; non-ASCII stays UTF-8. */
		text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!text) {
			snprintf(err, errlen, "cannot encode the request as JSON (is the text valid UTF-8?)");
			return -1;
		}
	}
	if (http_request(c, method, path, text, text ? strlen(text) : 0, x->headers, &r, err, errlen) < 0)
		goto out;
	*status = r.status;
	x->retry_after = r.retry_after;
	json_error_t je;
	/* JSON_ALLOW_NUL: command output may contain NUL bytes (\u0000). */
	if (on_data && r.status >= 200 && r.status < 300) {
		rc = 0; /* the body went to on_data */
		goto out_reply;
	}
	json_t *j = json_loadb(r.body, r.len, JSON_ALLOW_NUL, &je);
	if (r.status >= 200 && r.status < 300) {
		if (!j) {
			snprintf(err, errlen, "sharnessd at %s sent a reply that is not JSON (%s)", c->url, je.text);
			goto out_reply;
		}
		*out = j;
		rc = 0;
		goto out_reply;
	}
	const char *msg = NULL, *code = NULL;
	json_t *e = j ? json_object_get(j, "error") : NULL;
	if (json_is_object(e)) {
		msg = json_string_value(json_object_get(e, "message"));
		code = json_string_value(json_object_get(e, "code"));
	}
	if (msg) {
		/* The daemon's message is one sentence; show it as the line. */
		if (r.status == 503 && r.retry_after >= 0)
			snprintf(err, errlen, "%s (HTTP %d %s; retry after %ld s)", msg, r.status,
				 code ? code : "error", r.retry_after);
		else
			snprintf(err, errlen, "%s (HTTP %d %s)", msg, r.status, code ? code : "error");
	} else {
		/* Not our daemon's error shape: show the start of the body. */
		int n = (int)(r.len > 200 ? 200 : r.len);
		snprintf(err, errlen, "sharnessd at %s answered HTTP %d: %.*s", c->url, r.status, n,
			 r.body ? r.body : "");
		for (char *p = err; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	json_decref(j);
out_reply:
	http_reply_free(&r);
out:
	free(text);
	return rc;
}
