/*
 * check.h - root's checks of every message and payload the front sends
 * (check.c argues why they suffice).  Pure functions, no I/O, but for
 * check_chan and check_payload_fd, which ask the kernel about a
 * descriptor: the launcher and the supervisor call them, and
 * tests/fuzz/fuzz_check.c feeds the pure ones.
 *
 * Trust: the input is the front's, which is assumed compromised.
 */
#ifndef SHARNESS_CHECK_H
#define SHARNESS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "privsep.h"

struct profile_set;

/* A PRIVSEP_RUN against root's own profiles and workspace count: NULL when
 * it may go on, else the reason (for the log and the 400 reply). */
const char *check_run(const struct profile_set *profiles, size_t n_workspaces, const struct privsep_run *r);

/* The run channel passed with a PRIVSEP_RUN: NULL when it is a unix
 * socket whose peer is of the front's uid (a socketpair of its own), else
 * the reason. */
const char *check_chan(int chan, uid_t front_uid);

/* The payload's descriptor, before the supervisor copies `total` bytes
 * out of it: NULL when it is a memory file of that size, else the reason. */
const char *check_payload_fd(int fd, size_t total);

/* The payload, as the supervisor copied it: cmd, cwd and env of the
 * lengths in `q` (each followed by a NUL of the copy's own).  NULL or the
 * reason. */
const char *check_payload(const struct privsep_run *q, const char *cmd, const char *cwd, const char *env);

/* `cwd_req` normalised into `cwd` (len bytes) and lexically inside
 * `workspace` (the supervisor then resolves it beneath the workspace). */
bool check_cwd(const char *cwd_req, const char *workspace, char *cwd, size_t len);

#endif
