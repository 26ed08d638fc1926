/*
 * job.c - the jobs commands of sharness-client (job.h).
 *
 * `output -f` reads from the last offset until the job has ended and every
 * byte is read, then exits with the job's exit code (as `run` would) and
 * prints its denials; it polls every 500 ms while nothing is new, since the
 * API is request/reply.
 */
#include "job.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "api.h"
#include "buf.h"
#include "run.h"

#define EXIT_USAGE 2
#define FOLLOW_POLL_MS 500

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("sharness-client: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static void print_json(json_t *r)
{
	char *s = json_dumps(r, JSON_ENSURE_ASCII | JSON_COMPACT);
	printf("%s\n", s ? s : "null");
	free(s);
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}


static void print_status(json_t *r)
{
	printf("%s %s %s", str(r, "job_id"), str(r, "state"), str(r, "profile"));
	json_t *ex = json_object_get(r, "exit");
	if (json_is_integer(ex))
		printf(" exit %lld", (long long)json_integer_value(ex));
	if (json_is_string(json_object_get(r, "signal")))
		printf(" signal %s", str(r, "signal"));
	if (json_is_true(json_object_get(r, "timed_out")))
		printf(" timed out");
	printf(" started %s", str(r, "started"));
	if (json_is_string(json_object_get(r, "ended")))
		printf(" ended %s", str(r, "ended"));
	printf(" stdout %lld B stderr %lld B\n", (long long)json_integer_value(json_object_get(r, "stdout_bytes")),
	       (long long)json_integer_value(json_object_get(r, "stderr_bytes")));
}

static int get(const struct conf *c, const char *path, const char *method, json_t **r)
{
	char err[1024];
	int status;
	if (api_call(c, method, path, NULL, r, &status, err, sizeof err) < 0) {
		fputs("sharness-client: ", stderr);
		fputs(err, stderr);
		fputc('\n', stderr);
		return -1;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static int output(const struct conf *c, const struct job_args *a)
{
	const char *st = a->stream ? a->stream : "stdout";
	if (strcmp(st, "stdout") != 0 && strcmp(st, "stderr") != 0)
		return usage_error("--stream must be stdout or stderr, not '%s'", st);
	long long since = a->since;
	char path[256];
	for (;;) {
		json_t *r;
		snprintf(path, sizeof path, "/v0/jobs/%s/output?stream=%s&since=%lld", a->id, st, since);
		if (get(c, path, "GET", &r) < 0)
			return RUN_EXIT_ERROR;
		if (a->json)
			print_json(r);
		else {
			json_t *d = json_object_get(r, "data");
			if (json_integer_value(json_object_get(r, "skipped")) > 0)
				fprintf(stderr, "sharness: %lld bytes of this job's %s were dropped (past its output cap)\n",
				        (long long)json_integer_value(json_object_get(r, "skipped")), st);
			fd_write_all(strcmp(st, "stderr") == 0 ? 2 : 1, json_string_value(d) ? json_string_value(d) : "",
			          json_string_length(d));
		}
		long long asked = since;
		since = json_integer_value(json_object_get(r, "next"));
		bool more = json_is_true(json_object_get(r, "more"));
		bool running = strcmp(str(r, "state"), "running") == 0;
		json_decref(r);
		if (!a->follow)
			return 0;
		if (!more && !running)
			break;
		/* A daemon that says "more" but did not move on (an older one
		 * held back a character cut at the cap's gap, forever) is
		 * polled, not spun on. */
		if (!more || since <= asked)
			sleep_ms(FOLLOW_POLL_MS);
	}
	/* Ended: its exit code, and what its locks refused. */
	json_t *s;
	snprintf(path, sizeof path, "/v0/jobs/%s", a->id);
	if (get(c, path, "GET", &s) < 0)
		return RUN_EXIT_ERROR;
	char err[256] = "", line[1024];
	int code = strcmp(str(s, "state"), "killed") == 0 ? 128 + 9 : run_exit_code(s, err, sizeof err);
	for (size_t i = 0; !a->json && run_denial_line(s, i, line, sizeof line) == 0; i++)
		fprintf(stderr, "%s\n", line);
	json_decref(s);
	return code;
}

int job_main(const struct conf *c, const struct job_args *a)
{
	char path[128];
	json_t *r;
	if (strcmp(a->sub, "list") == 0) {
		if (a->id)
			return usage_error("job list takes no id");
		if (get(c, "/v0/jobs", "GET", &r) < 0)
			return RUN_EXIT_ERROR;
		if (a->json)
			print_json(r);
		else {
			size_t i;
			json_t *j;
			json_array_foreach(json_object_get(r, "jobs"), i, j)
				print_status(j);
		}
		json_decref(r);
		return 0;
	}
	/* The id goes into the URL: 32 hex digits or nothing. */
	if (!a->id || strlen(a->id) != 32 || strspn(a->id, "0123456789abcdef") != 32)
		return usage_error("usage: sharness-client job %s JOB_ID (32 hex digits, from job start or job list)", a->sub);
	if (strcmp(a->sub, "output") == 0)
		return output(c, a);
	snprintf(path, sizeof path, "/v0/jobs/%s", a->id);
	bool kill = strcmp(a->sub, "kill") == 0;
	if (!kill && strcmp(a->sub, "status") != 0)
		return usage_error("unknown job command '%s': start, status, output, kill, list", a->sub);
	if (get(c, path, kill ? "DELETE" : "GET", &r) < 0)
		return RUN_EXIT_ERROR;
	if (a->json)
		print_json(r);
	else if (kill)
		printf("%s %s\n", str(r, "job_id"), str(r, "state"));
	else
		print_status(r);
	json_decref(r);
	return 0;
}
