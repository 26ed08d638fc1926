/*
 * jobs.h - runs an agent starts and looks at later (SPEC §15.3, issue 14):
 * the front's table of jobs, each with its output kept as it arrives (a head
 * and a rolling tail within the profile's cap, at absolute offsets) and its
 * exit record once it ends.  A job belongs to the certificate that started
 * it (its SHA-256); to any other one it does not exist.
 *
 * Trust: front; bytes are filtered output, ids and offsets come from clients
 * and are checked here.
 */
#ifndef SHARNESS_JOBS_H
#define SHARNESS_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOBS_TOTAL_MAX 1024        /* live and retained, all certificates */
#define JOBS_KEPT_MAX (256u << 20) /* output bytes finished jobs keep, all certificates */
#define JOB_READ_MAX (1024 * 1024) /* bytes per output read */

struct jobs;
struct job;

/* `max_jobs` per certificate; with `max_runs` of 2 or more, at most one
 * fewer than it, so that one certificate's jobs, which hold their run slots
 * for their whole timeout with no client waiting, never hold every slot
 * (review s37 front 4).  `max_runs` 0: no such bound. */
struct jobs *jobs_new(unsigned max_jobs, unsigned max_runs, unsigned retain_s);
void jobs_free(struct jobs *j);

/* Whether the owner may start one more job: its running jobs and `pending`
 * ones (waiting for a person or a slot) stay under max_jobs; else false
 * with `why`.  Asked when a job is requested, so that the answer comes
 * before any wait. */
bool jobs_may_start(struct jobs *j, const char *owner_fp, unsigned pending, char *why, size_t whylen);
/* A new running job, or NULL with `why` (the owner's limit, the table's).
 * jobs_kill calls `kill(kill_arg)` to end its run. */
struct job *jobs_add(struct jobs *j, const char *id, const char *owner_fp, const char *owner_cn,
                     const char *profile, size_t out_cap, unsigned timeout_s, void (*kill)(void *arg),
                     void *kill_arg, char *why, size_t whylen);
/* A job that never started (its run could not be put on record): gone
 * from the table as if never added. */
void jobs_drop(struct jobs *j, struct job *job);
/* The run's output as it arrives (execute_env.output). */
void job_output(void *job, int which, const char *buf, size_t len);
/* The run ended: its exit record (a JSON object, copied), or NULL with
 * `error_json` when it failed; `killed` when DELETE ended it. */
void job_finish(struct job *job, const char *exit_json, const char *error_json);

/* The answers of the API, as JSON (malloc'd), or NULL: no such job for
 * this owner.  jobs_output: `which` 0 stdout, 1 stderr. */
char *jobs_status(struct jobs *j, const char *id, const char *owner_fp);
char *jobs_output(struct jobs *j, const char *id, const char *owner_fp, int which, uint64_t since);
char *jobs_list(struct jobs *j, const char *owner_fp);
/* Kill a running job (its run is killed, its output kept; the job stays
 * "running" until its end has come in, and its max_jobs place is free at
 * once).  0 with *state the answer ("killed", or "exited" or "failed" when
 * it had ended already), -1 no such job for this owner. */
int jobs_kill(struct jobs *j, const char *id, const char *owner_fp, const char **state);

#endif
