/*
 * reply.h - the JSON a run ends with (SPEC §5, §15.3): the reply (or a
 * stream's exit event), its audit fields, and the error object of a run
 * that failed after its request was accepted.  Pure: no I/O.
 *
 * Trust: front; the result's text is already filtered output.
 */
#ifndef SHARNESS_REPLY_H
#define SHARNESS_REPLY_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "execute.h"
#include "request.h"

/* The reply of a run, compact (malloc'd; NULL when out of memory).  A
 * stream's last event (`stream_exit`) has every field but stdout and
 * stderr, which it sent as it went. */
char *reply_body(const struct run_result *res, const struct run_request *r, const char *run_id, bool stream_exit);
/* The run's outcome on its audit line (the denials by lock name only:
 * their details may hold paths). */
void reply_add_result_to_audit(cJSON *line, const struct run_result *res);
/* {"code","message","status"} of a failed run, or as a stream's last event
 * {"event":"error","error":{...}} (malloc'd). */
char *reply_error_json(const struct request_error *e, bool as_event);

#endif
