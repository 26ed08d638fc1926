/*
 * reply.c - see reply.h.
 */
#include "reply.h"

#include <string.h>

/* "denials" (SPEC §15.3): every lock that refused something, with a hint;
 * an empty list when nothing was. */
static void add_denials(cJSON *o, const struct run_denials *d)
{
	cJSON *a = cJSON_AddArrayToObject(o, "denials");
	for (size_t i = 0; a && i < d->n; i++) {
		cJSON *x = cJSON_CreateObject();
		if (!x)
			break;
		cJSON_AddStringToObject(x, "lock", d->v[i].lock);
		cJSON_AddStringToObject(x, "detail", d->v[i].detail);
		cJSON_AddStringToObject(x, "hint", d->v[i].hint);
		if (d->v[i].inferred)
			cJSON_AddBoolToObject(x, "inferred", true);
		cJSON_AddItemToArray(a, x);
	}
}

/* The audit line names the locks only (details may hold paths). */
static void add_denied_locks(cJSON *o, const struct run_denials *d)
{
	if (d->n == 0)
		return;
	cJSON *a = cJSON_AddArrayToObject(o, "denials");
	for (size_t i = 0; a && i < d->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(d->v[i].lock));
}

/* "usage" (SPEC §15.3): what the kernel could not give is null. */
static void add_usage(cJSON *o, const struct privsep_usage *u)
{
	cJSON *j = cJSON_AddObjectToObject(o, "usage");
	if (u->have & PRIVSEP_USAGE_CPU)
		cJSON_AddNumberToObject(j, "cpu_ms", (double)(uint64_t)(u->cpu_us / 1000)); /* whole ms */
	else
		cJSON_AddNullToObject(j, "cpu_ms");
	if (u->have & PRIVSEP_USAGE_PEAK_MEMORY)
		cJSON_AddNumberToObject(j, "peak_memory_bytes", (double)u->peak_memory_bytes);
	else
		cJSON_AddNullToObject(j, "peak_memory_bytes");
	if (u->have & PRIVSEP_USAGE_PEAK_PIDS)
		cJSON_AddNumberToObject(j, "peak_pids", (double)u->peak_pids);
	else
		cJSON_AddNullToObject(j, "peak_pids");
	if (u->have & PRIVSEP_USAGE_OOM)
		cJSON_AddBoolToObject(j, "oom_killed", u->oom_killed != 0);
	else
		cJSON_AddNullToObject(j, "oom_killed");
	if (u->have & PRIVSEP_USAGE_PIDS_LIMITED)
		cJSON_AddBoolToObject(j, "pids_limited", u->pids_limited != 0);
	else
		cJSON_AddNullToObject(j, "pids_limited");
}

/* How the command ended: "exit" (null when a signal ended it), "signal"
 * (its abbreviation, or null), "timed_out". */
static void add_exit(cJSON *o, const struct run_result *res)
{
	if (res->signal) {
		const char *sig = sigabbrev_np(res->signal);
		cJSON_AddNullToObject(o, "exit");
		cJSON_AddStringToObject(o, "signal", sig ? sig : "UNKNOWN");
	} else {
		cJSON_AddNumberToObject(o, "exit", res->exit_code);
		cJSON_AddNullToObject(o, "signal");
	}
	cJSON_AddBoolToObject(o, "timed_out", res->timed_out);
}

/* The reply of a run (SPEC §5, §15.3).  A stream's last event has every
 * field but stdout and stderr, which it sent as it went. */
char *reply_body(const struct run_result *res, const struct run_request *r, const char *run_id, bool stream_exit)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (stream_exit)
		cJSON_AddStringToObject(o, "event", "exit");
	add_exit(o, res);
	if (res->disk_limited) {
		cJSON_AddBoolToObject(o, "disk_limited", true);
		cJSON_AddStringToObject(o, "message", res->message);
	}
	if (!stream_exit) {
		cJSON_AddStringToObject(o, "stdout", res->out);
		cJSON_AddStringToObject(o, "stderr", res->err);
	}
	cJSON_AddNumberToObject(o, "filtered", (double)res->filtered);
	cJSON_AddBoolToObject(o, "truncated", res->truncated);
	if (res->utf8_replaced)
		cJSON_AddBoolToObject(o, "invalid_utf8_replaced", true);
	cJSON_AddNumberToObject(o, "ms", (double)res->ms);
	add_usage(o, &res->usage);
	add_denials(o, &res->denials);
	cJSON_AddStringToObject(o, "profile", r->profile->name);
	cJSON_AddStringToObject(o, "policy_hash", r->profile->policy_hash);
	cJSON_AddStringToObject(o, "run_id", run_id);
	cJSON_AddNumberToObject(o, "timeout_s", r->timeout_s);
	if (r->timeout_capped)
		cJSON_AddBoolToObject(o, "timeout_capped", true);
	char *body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return body;
}

/* The run's outcome on its audit line. */
void reply_add_result_to_audit(cJSON *line, const struct run_result *res)
{
	cJSON_AddNumberToObject(line, "uid", res->uid);
	add_exit(line, res);
	if (res->disk_limited)
		cJSON_AddBoolToObject(line, "disk_limited", true);
	cJSON_AddNumberToObject(line, "ms", (double)res->ms);
	add_usage(line, &res->usage);
	add_denied_locks(line, &res->denials);
	cJSON_AddNumberToObject(line, "filtered", (double)res->filtered);
	cJSON_AddBoolToObject(line, "truncated", res->truncated);
	if (res->cleanup_failed)
		cJSON_AddBoolToObject(line, "cleanup_failed", true);
}

/* {"code","message","status"} of a failed run, compact (malloc'd). */
char *reply_error_json(const struct request_error *e, bool as_event)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *err = o;
	if (as_event) {
		cJSON_AddStringToObject(o, "event", "error");
		err = cJSON_AddObjectToObject(o, "error");
	}
	cJSON_AddStringToObject(err, "code", e->code);
	cJSON_AddStringToObject(err, "message", e->message);
	cJSON_AddNumberToObject(err, "status", e->status);
	char *j = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return j;
}

