/*
 * mcp.c - MCP stdio server exposing run_command (see mcp.h).
 *
 * Trust: requests come from the agent (and so, indirectly, from a model);
 * they are parsed with jansson and each argument's type is checked.  The
 * command is forwarded to sharnessd unchanged; nothing runs here.
 */
#include "mcp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api.h"
#include "buf.h"
#include "run.h"
#include "version.h"

#define MCP_MAX_LINE (4u << 20)
#define MCP_VERSION_LATEST "2025-11-25"

static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

/* Writes one message as one line.  jansson escapes control characters, so
 * the JSON text holds no raw newline (stdio transport rule). */
static void send_msg(json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		free(s);
	}
	json_decref(m);
}

static void send_result(json_t *id, json_t *result)
{
	send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static void send_error(json_t *id, int code, const char *msg)
{
	send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
			   "code", code, "message", msg));
}

static json_t *tool_error(const char *msg)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", msg, "isError", 1);
}

static json_t *initialize(json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *ver = MCP_VERSION_LATEST;
	for (size_t i = 0; want && i < sizeof versions / sizeof versions[0]; i++)
		if (strcmp(want, versions[i]) == 0)
			ver = versions[i];
	return json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", ver, "capabilities",
			 "tools", "listChanged", 0, "serverInfo", "name", "sharness-client", "title",
			 "sharness", "version", SHARNESS_VERSION, "instructions",
			 "run_command runs one shell command in a fresh sandbox of sharnessd under a named profile "
			 "and returns its output and exit code. No state (cd, exports, background jobs) survives "
			 "between calls.");
}

static json_t *tools_list_run(void);

static json_t *job_tool(const char *name, const char *title, const char *desc, bool output)
{
	json_t *props = json_pack("{s:{s:s, s:s}}", "job_id", "type", "string", "description",
				  "the job's id (32 hex digits), from job_start or job_list");
	if (output) {
		json_object_set_new(props, "stream", json_pack("{s:s, s:[s,s], s:s}", "type", "string", "enum", "stdout",
								"stderr", "description", "which output; default stdout"));
		json_object_set_new(props, "since", json_pack("{s:s, s:i, s:s}", "type", "integer", "minimum", 0,
							       "description",
							       "byte offset to read from: 0, then the 'next' of the last read"));
	}
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:o, s:[s], s:b}, s:{s:b, s:b}}", "name", name, "title", title,
			 "description", desc, "inputSchema", "type", "object", "properties", props, "required", "job_id",
			 "additionalProperties", 0, "annotations", "readOnlyHint", strcmp(name, "job_kill") != 0,
			 "openWorldHint", 0);
}

static json_t *tools_list(void)
{
	json_t *l = tools_list_run();
	json_t *tools = json_object_get(l, "tools");
	json_t *start = json_deep_copy(json_array_get(tools, 0));
	json_object_set_new(start, "name", json_string("job_start"));
	json_object_set_new(start, "title", json_string("Start a shell command as a job"));
	json_object_set_new(start, "description",
			    json_string("Start a shell command (bash -c) as a job in a fresh sharnessd sandbox and return "
					"its job_id at once: for dev servers, long builds and test runs. Read its output "
					"with job_output, its state and exit with job_status; it ends at its timeout."));
	json_array_append_new(tools, start);
	json_array_append_new(tools, job_tool("job_status", "A job's state and exit",
					      "The job's state (running, exited, killed, failed), exit code, usage "
					      "and denials.", false));
	json_array_append_new(tools, job_tool("job_output", "A job's output from an offset",
					      "The job's filtered output from byte 'since' on (at most 1 MiB), with "
					      "the offset to ask for next.", true));
	json_array_append_new(tools, job_tool("job_kill", "Kill a job", "Kill a running job; its output stays "
					      "readable.", false));
	json_t *list = json_pack("{s:s, s:s, s:s, s:{s:s, s:{}, s:b}, s:{s:b, s:b}}", "name", "job_list", "title",
				 "List my jobs", "description", "The jobs this certificate started and the daemon still "
				 "holds.", "inputSchema", "type", "object", "properties", "additionalProperties", 0,
				 "annotations", "readOnlyHint", 1, "openWorldHint", 0);
	json_array_append_new(tools, list);
	return l;
}

static json_t *tools_list_run(void)
{
	return json_pack(
		"{s:[{s:s, s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:i, s:s}},"
		" s:[s], s:b}, s:{s:b, s:b}}]}",
		"tools", "name", "run_command", "title", "Run a shell command via sharnessd", "description",
		"Run a shell command (bash -c) in a fresh sharnessd sandbox and return its stdout, stderr and "
		"exit code. The workspace is read-only under the default profile and there is no network.",
		"inputSchema", "type", "object", "properties", "command", "type", "string", "description",
		"the shell command line, run as bash -c COMMAND", "profile", "type", "string", "description",
		"sharnessd profile (analyse, build, admin, ...); default: the daemon's default", "cwd", "type",
		"string", "description", "absolute working directory inside a workspace; default: the server's",
		"timeout_s", "type", "integer", "minimum", 1, "description",
		"seconds before the run is killed; default and cap: the profile's", "required", "command",
		"additionalProperties", 0, "annotations", "readOnlyHint", 0, "openWorldHint", 0);
}

static json_t *format_result(json_t *reply)
{
	char err[256] = "", tail[512];
	int code = run_exit_code(reply, err, sizeof err);
	size_t olen, elen;
	const char *o = run_stream(reply, "stdout", &olen);
	const char *e = run_stream(reply, "stderr", &elen);
	struct buf t = {0};
	/* One text block a model reads easily: stdout, then stderr, then status. */
	buf_append(&t, o, olen);
	if (olen && o[olen - 1] != '\n')
		buf_puts(&t, "\n");
	if (elen) {
		buf_puts(&t, "[stderr]\n");
		buf_append(&t, e, elen);
		if (e[elen - 1] != '\n')
			buf_puts(&t, "\n");
	}
	json_t *sig = json_object_get(reply, "signal");
	if (json_is_true(json_object_get(reply, "timed_out")))
		snprintf(tail, sizeof tail, "[timed out: the run was killed; exit code %d]", code);
	else if (json_is_string(sig))
		snprintf(tail, sizeof tail, "[killed by signal %s; exit code %d]", json_string_value(sig), code);
	else if (*err)
		snprintf(tail, sizeof tail, "[%s]", err);
	else
		snprintf(tail, sizeof tail, "[exit code %d]", code);
	buf_puts(&t, tail);
	if (json_integer_value(json_object_get(reply, "filtered")) > 0)
		buf_printf(&t, "\n[%lld secret(s) filtered]", (long long)json_integer_value(json_object_get(reply, "filtered")));
	if (json_is_true(json_object_get(reply, "truncated")))
		buf_puts(&t, "\n[output truncated: head and tail kept]");
	char dl[1024];
	for (size_t i = 0; run_denial_line(reply, i, dl, sizeof dl) == 0; i++)
		buf_printf(&t, "\n[%s]", dl);
	/* The text is built from the reply's valid-UTF-8 strings, but a denial
	 * line cut at its byte limit may end inside a character: made whole,
	 * or json_stringn would give nothing of it all (review s36). */
	if (t.data)
		buf_utf8_clean(t.data, t.len);
	json_t *txt = t.data ? json_stringn(t.data, t.len) : json_string("");
	buf_free(&t);
	json_t *sc = json_deep_copy(reply);
	json_object_set_new(sc, "exit_code", json_integer(code));
	return json_pack("{s:[{s:s, s:o}], s:o, s:b}", "content", "type", "text", "text", txt ? txt : json_string(""),
			 "structuredContent", sc, "isError", code != 0);
}

/* MCP progress (notifications/progress): a streamed run's output as it
 * comes, when the call asked for it with _meta.progressToken. */
struct progress {
	json_t *token;
	json_int_t bytes;
	struct buf out[2]; /* stdout, stderr: for the result, which a stream's exit event lacks */
	bool cut;
};

static void send_progress(void *arg, int fd, const char *buf, size_t len)
{
	struct progress *p = arg;
	p->bytes += (json_int_t)len;
	if (buf_append(&p->out[fd == 2], buf, len) < 0)
		p->cut = true;
	/* The message is the output itself, cut to 4 KiB (the result holds it all). */
	json_t *m = json_pack("{s:s, s:s, s:{s:O, s:I, s:s%}}", "jsonrpc", "2.0", "method", "notifications/progress",
			      "params", "progressToken", p->token, "progress", p->bytes, "message", buf,
			      len > 4096 ? (size_t)4096 : len);
	if (!m) /* the cut fell inside a UTF-8 character, or not valid text: say how much */
		m = json_pack("{s:s, s:s, s:{s:O, s:I, s:s}}", "jsonrpc", "2.0", "method", "notifications/progress",
			      "params", "progressToken", p->token, "progress", p->bytes, "message",
			      fd == 2 ? "(stderr output)" : "(output)");
	if (m)
		send_msg(m);
}

/* job_status, job_output, job_kill, job_list: one API call each; the text
 * is the JSON (output: the data, then where to read on). */
static json_t *job_call(const struct conf *c, const char *name, json_t *args, json_t *id, int *proto_err)
{
	char path[256], err[600], msg[700];
	const char *key;
	json_t *v;
	*proto_err = 0;
	bool list = strcmp(name, "job_list") == 0, output = strcmp(name, "job_output") == 0;
	bool kill = strcmp(name, "job_kill") == 0;
	if (!list && !output && !kill && strcmp(name, "job_status") != 0) {
		send_error(id, -32602, "unknown tool: the tools are run_command, job_start, job_status, job_output, job_kill, job_list");
		*proto_err = 1;
		return NULL;
	}
	if (args && !json_is_object(args))
		return tool_error("arguments must be an object");
	json_object_foreach(args, key, v) {
		if (!(strcmp(key, "job_id") == 0 && !list) &&
		    !(output && (strcmp(key, "stream") == 0 || strcmp(key, "since") == 0))) {
			snprintf(msg, sizeof msg, "unknown argument '%.100s' for %s", key, name);
			return tool_error(msg);
		}
	}
	const char *jid = json_string_value(json_object_get(args, "job_id"));
	if (!list && (!jid || strlen(jid) != 32 || strspn(jid, "0123456789abcdef") != 32))
		return tool_error("argument 'job_id' must be a job id: 32 hex digits, from job_start or job_list");
	const char *st = json_string_value(json_object_get(args, "stream"));
	json_t *since = json_object_get(args, "since");
	if (output && ((json_object_get(args, "stream") && (!st || (strcmp(st, "stdout") && strcmp(st, "stderr")))) ||
		       (since && (!json_is_integer(since) || json_integer_value(since) < 0))))
		return tool_error("'stream' is stdout or stderr and 'since' a byte offset, 0 or more");
	if (list)
		snprintf(path, sizeof path, "/v0/jobs");
	else if (output)
		snprintf(path, sizeof path, "/v0/jobs/%s/output?stream=%s&since=%lld", jid, st ? st : "stdout",
			 since ? (long long)json_integer_value(since) : 0LL);
	else
		snprintf(path, sizeof path, "/v0/jobs/%s", jid);
	json_t *r = NULL;
	int status;
	if (api_call(c, kill ? "DELETE" : "GET", path, NULL, &r, &status, err, sizeof err) < 0) {
		snprintf(msg, sizeof msg, "sharnessd: %s", err);
		return tool_error(msg);
	}
	struct buf t = {0};
	if (output) {
		json_t *d = json_object_get(r, "data");
		buf_append(&t, json_string_value(d) ? json_string_value(d) : "", json_string_length(d));
		buf_printf(&t, "%s[next offset %lld; %s; job %s]", t.len && t.data[t.len - 1] != '\n' ? "\n" : "",
			   (long long)json_integer_value(json_object_get(r, "next")),
			   json_is_true(json_object_get(r, "more")) ? "more to read" : "all read so far",
			   json_string_value(json_object_get(r, "state")) ? json_string_value(json_object_get(r, "state")) : "?");
	} else {
		char *s = json_dumps(r, JSON_COMPACT);
		buf_puts(&t, s ? s : "{}");
		free(s);
	}
	json_t *txt = t.data ? json_stringn(t.data, t.len) : json_string("");
	buf_free(&t);
	return json_pack("{s:[{s:s, s:o}], s:o, s:b}", "content", "type", "text", "text", txt ? txt : json_string(""),
			 "structuredContent", r, "isError", 0);
}

static json_t *tools_call(const struct conf *c, const char *dprofile, json_t *params, json_t *id, int *proto_err)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	char err[600], msg[700];
	*proto_err = 0;
	bool job_start = name && strcmp(name, "job_start") == 0;
	if (name && strncmp(name, "job_", 4) == 0 && !job_start)
		return job_call(c, name, json_object_get(params, "arguments"), id, proto_err);
	if (!name || (strcmp(name, "run_command") != 0 && !job_start)) {
		send_error(id, -32602, "unknown tool: the tools are run_command, job_start, job_status, job_output, job_kill, job_list");
		*proto_err = 1;
		return NULL;
	}
	/* Argument problems are tool errors (SEP-1303) so the model can fix them. */
	if (args && !json_is_object(args))
		return tool_error("arguments must be an object");
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v) {
		if (strcmp(key, "command") && strcmp(key, "profile") && strcmp(key, "cwd") && strcmp(key, "timeout_s")) {
			snprintf(msg, sizeof msg, "unknown argument '%.100s': %s takes command, profile, cwd, timeout_s", key, name);
			return tool_error(msg);
		}
	}
	json_t *jc = json_object_get(args, "command");
	if (!json_is_string(jc) || json_string_length(jc) == 0)
		return tool_error("argument 'command' is required and must be a non-empty string");
	struct run_opts o = {.profile = dprofile};
	json_t *jp = json_object_get(args, "profile"), *jw = json_object_get(args, "cwd"),
	       *jt = json_object_get(args, "timeout_s");
	if (jp && !json_is_string(jp))
		return tool_error("argument 'profile' must be a string");
	if (jw && !json_is_string(jw))
		return tool_error("argument 'cwd' must be a string");
	/* The range first: a cast of a real out of long's range is undefined. */
	if (jt && json_is_number(jt) && (json_number_value(jt) < 1 || json_number_value(jt) > 1e9))
		return tool_error("argument 'timeout_s' must be from 1 to 1000000000 seconds");
	if (jt && !(json_is_integer(jt) || (json_is_real(jt) && json_real_value(jt) == (double)(long)json_real_value(jt))))
		return tool_error("argument 'timeout_s' must be a whole number of seconds");
	if (jp)
		o.profile = json_string_value(jp);
	if (jw)
		o.cwd = json_string_value(jw);
	if (jt) {
		double t = json_number_value(jt);
		if (t < 1 || t > 1e9)
			return tool_error("argument 'timeout_s' must be from 1 to 1000000000 seconds");
		o.timeout_s = (long)t;
	}
	json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
	struct progress pr = {.token = tok, .out = {{.max = 4u << 20}, {.max = 4u << 20}}};
	if (job_start)
		o.path = "/v0/jobs";
	else if (tok && (json_is_string(tok) || json_is_integer(tok))) {
		o.on_output = send_progress;
		o.on_output_arg = &pr;
	}
	json_t *reply = NULL;
	if (run_call(c, json_string_value(jc), json_string_length(jc), &o, &reply, err, sizeof err) < 0) {
		buf_free(&pr.out[0]);
		buf_free(&pr.out[1]);
		snprintf(msg, sizeof msg, "sharnessd did not run the command: %s", err);
		return tool_error(msg);
	}
	if (job_start) {
		const char *jid = json_string_value(json_object_get(reply, "job_id"));
		snprintf(msg, sizeof msg, "job %s started; read its output with job_output, its exit with job_status",
			 jid ? jid : "?");
		json_t *res = json_pack("{s:[{s:s, s:s}], s:O, s:b}", "content", "type", "text", "text", msg,
					"structuredContent", reply, "isError", jid == NULL);
		json_decref(reply);
		return res;
	}
	if (o.on_output) {
		for (int i = 0; i < 2; i++) {
			json_t *str = json_stringn(pr.out[i].data ? pr.out[i].data : "", pr.out[i].len);
			json_object_set_new(reply, i ? "stderr" : "stdout", str ? str : json_string(""));
			buf_free(&pr.out[i]);
		}
		if (pr.cut)
			json_object_set_new(reply, "truncated", json_true());
	}
	json_t *res = format_result(reply);
	json_decref(reply);
	return res;
}

static void handle(const struct conf *c, const char *profile, json_t *m)
{
	json_t *id = json_object_get(m, "id");
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *params = json_object_get(m, "params");
	int is_request = id && (json_is_string(id) || json_is_integer(id));
	if (!method) {
		/* A response to us (we send no requests) or garbage. */
		if (!json_object_get(m, "result") && !json_object_get(m, "error"))
			send_error(is_request ? id : NULL, -32600, "invalid request: no method");
		return;
	}
	if (!is_request) {
		if (id && !json_is_null(id))
			send_error(NULL, -32600, "invalid request: id must be a string or an integer");
		return; /* notifications (initialized, cancelled, ...) need no reply */
	}
	if (params && !json_is_object(params)) {
		send_error(id, -32602, "params must be an object");
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		send_result(id, initialize(params));
	} else if (strcmp(method, "ping") == 0) {
		send_result(id, json_object());
	} else if (strcmp(method, "tools/list") == 0) {
		send_result(id, tools_list());
	} else if (strcmp(method, "tools/call") == 0) {
		int perr;
		json_t *r = tools_call(c, profile, params, id, &perr);
		if (!perr)
			send_result(id, r ? r : tool_error("out of memory"));
	} else {
		char msg[200];
		snprintf(msg, sizeof msg, "method not found: %.120s", method);
		send_error(id, -32601, msg);
	}
}

/* Reads one line into b (without the newline).  Returns 1 line read, 0 EOF,
 * -1 line longer than b->max (the rest of it is skipped).  getline() would
 * grow without bound on a line with no newline. */
static int read_line(struct buf *b)
{
	int ch, over = 0;
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
	while ((ch = getchar_unlocked()) != EOF && ch != '\n') {
		char c = (char)ch;
		if (!over && buf_append(b, &c, 1) < 0)
			over = 1;
	}
	if (over)
		return -1;
	return ch == EOF && b->len == 0 ? 0 : 1;
}

int mcp_main(const struct conf *c, const char *profile)
{
	struct buf line = {.max = MCP_MAX_LINE};
	int r;
	while ((r = read_line(&line)) != 0) {
		if (r < 0) {
			send_error(NULL, -32600, "message too large");
			continue;
		}
		size_t n = line.len;
		while (n > 0 && line.data[n - 1] == '\r')
			n--;
		if (n == 0)
			continue;
		json_error_t je;
		json_t *m = json_loadb(line.data, n, 0, &je);
		if (!m) {
			char msg[300];
			snprintf(msg, sizeof msg, "parse error: %s", je.text);
			send_error(NULL, -32700, msg);
			continue;
		}
		if (json_is_array(m)) {
			/* Batches existed only in 2025-03-26 and no client sends them. */
			send_error(NULL, -32600, "JSON-RPC batches are not supported");
		} else if (!json_is_object(m) || strcmp(json_string_value(json_object_get(m, "jsonrpc")) ?: "", "2.0")) {
			send_error(NULL, -32600, "invalid request: not a JSON-RPC 2.0 object");
		} else {
			handle(c, profile, m);
		}
		json_decref(m);
	}
	buf_free(&line);
	return ferror(stdin) ? 1 : 0;
}
