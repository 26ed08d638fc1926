/*
 * runflow.h - one POST /v0/run or POST /v0/jobs, from its body to its reply,
 * as a state object of the front's loop (issue 15.5):
 *
 *   approval  (profiles with approval "each") parked until a person decides
 *   queue     waiting in FIFO order for a run slot (runq.h)
 *   run       the audit line, then execute.c; a stream sends its events as
 *             they come (live.h), a job answers 202 at once (jobs.h)
 *   reply     the result, or the error; then the slot goes back once the
 *             supervisor tore the run down
 *
 * While it waits, the connection is suspended (libmicrohttpd leaves it
 * alone) and its socket is watched for a hang-up, which withdraws the
 * approval, leaves the queue or kills the run.  A job outlives its
 * connection; DELETE kills it (jobs_kill).
 *
 * Trust: front; the body is hostile until request.c accepted it.
 */
#ifndef SHARNESS_RUNFLOW_H
#define SHARNESS_RUNFLOW_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "front.h"
#include "tls.h"

struct runflow;

/* The access handler's last call of a run request (the body is complete):
 * parse, then approval, queue and run as the profile and the queue say.
 * *flow is set when the request goes on (the connection is then suspended,
 * or a response is queued); the access handler passes later calls to
 * runflow_resumed and the end to runflow_completed. */
enum MHD_Result runflow_request(struct front *f, struct MHD_Connection *c, const struct tls_peer *peer,
                                const char *method, const char *url, const char *body, size_t len, bool as_job,
                                struct runflow **flow);
/* The access handler's call after a resume: queue the reply that is ready. */
enum MHD_Result runflow_resumed(struct runflow *fl, struct MHD_Connection *c);
/* libmicrohttpd is done with the request (replied, or the client is gone):
 * a run still going for it is killed, unless it is a job. */
void runflow_completed(struct runflow *fl);

/* The daemon stops: every request still waiting for a person or a slot
 * gets a 503; with `runs_too`, so does every run still going (the launcher
 * stopped them; their replies did not come). */
void runflow_stop_all(struct front *f, bool runs_too);

#endif
