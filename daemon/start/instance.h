/*
 * instance.h - one daemon per uid range and per state_dir: a second daemon
 * whose uid_range or state_dir overlaps a live one refuses to start, naming
 * its pid; crash recovery is limited to what this state_dir records.
 *
 * Trust: start-up, root.
 */
#ifndef SHARNESS_INSTANCE_H
#define SHARNESS_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

/* Claim the uid range [first, first+count) and the state_dir (created 0700
 * if missing) for the life of this process.  -1 with the refusal sentence in
 * err when a live daemon holds either. */
int instance_claim(const char *state_dir, uint64_t uid_first, uint64_t uid_count, char *err, size_t errlen);

/* In a child that does not exec (the front): let go of the claims, so that
 * they die with the launcher alone (a flock and a socket are shared by
 * every process that holds the descriptor). */
void instance_close_inherited(void);

/* The run cgroup directory the previous daemon of this state_dir recorded:
 * 1 and the path in out, 0 when there is none (or it is not a cgroup path),
 * -1 on a read error. */
int instance_previous_cgroup(const char *state_dir, char *out, size_t outlen);
/* Record this daemon's run cgroup directory (atomically replaced). */
int instance_record_cgroup(const char *state_dir, const char *dir);

/* Read-only probe for `sharnessd --doctor`: who holds what instance_claim
 * would take, without creating, binding or keeping anything.  range_pid: a
 * live daemon whose registered range overlaps [first, first+count), with
 * that range (a claim root made); lookalike_uid: the uid that made a claim
 * of that form that is ignored (instance.c says why), -1 if none, with the
 * pid and range it names; dir_locked: <state_dir>/sharnessd.lock exists and is locked,
 * dir_pid the pid written in it (0 unreadable).  The lock is tested with a
 * shared, non-blocking flock released at once; a missing file is left
 * missing.  -1 with err when /proc/net/unix cannot be read. */
struct instance_holders {
	long range_pid;
	uint64_t range_first, range_count;
	long lookalike_uid, lookalike_pid;
	uint64_t lookalike_first, lookalike_count;
	int dir_locked;
	long dir_pid;
};
int instance_probe(const char *state_dir, uint64_t first, uint64_t count, struct instance_holders *h, char *err,
                   size_t errlen);

#endif
