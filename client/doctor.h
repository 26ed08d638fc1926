/*
 * doctor.h - `sharness-client doctor` (SPEC §15.1): the client's side of
 * `sharnessd --doctor`.  Its configuration (URL, CA, certificate, key: files
 * readable, certificate valid, signed by the CA, not expiring, its role), a
 * real mutual-TLS request (GET /v0/policy, which every role may read),
 * whether a relay serves this identity (a note: relay.h) and the hooks each
 * agent's configuration names.  One line per check, "✔ what" or
 * "✘ what: the fix"; nothing is written.
 *
 * Trust: the agents' configuration files are the person's own files, read
 * with size limits and never executed.
 */
#ifndef SHARNESS_CLIENT_DOCTOR_H
#define SHARNESS_CLIENT_DOCTOR_H

#include "conf.h"

/* Prints the checks to stdout; returns the exit code: 1 on any ✘, else 0. */
int doctor_run(const struct conf *c);

#endif
