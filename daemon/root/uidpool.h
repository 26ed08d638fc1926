/*
 * uidpool.h - ephemeral uids for runs: one per live run, never shared, never
 * reused while a process of it lives.
 *
 * Trust: privileged (launcher only).
 */
#ifndef SHARNESS_UIDPOOL_H
#define SHARNESS_UIDPOOL_H

#include <stddef.h>
#include <sys/types.h>

struct uidpool;

/* Refuse a range that overlaps root, any /etc/passwd user or /etc/group group,
 * /etc/subuid or /etc/subgid ranges, systemd's reserved ranges (system users,
 * dynamic users 61184-65519, container range 524288-1879048191, nobody) or
 * that wraps.  The error says which and what to configure instead. */
int uidpool_check_range(uid_t first, unsigned count, char *err, size_t errlen);
/* The same checks against the given files instead of /etc (tests); no NSS
 * lookups. */
int uidpool_check_range_files(uid_t first, unsigned count, const char *passwd, const char *group,
                              const char *subuid, const char *subgid, char *err, size_t errlen);

/* A pool handing out first .. first+count-1 (the caller keeps the front's
 * uid out of it). */
struct uidpool *uidpool_new(uid_t first, unsigned count, char *err, size_t errlen);
void uidpool_free(struct uidpool *p);

/* Take a free uid (uid == gid). -1 with errno EAGAIN when all are in use. */
int uidpool_take(struct uidpool *p, uid_t *out);
void uidpool_release(struct uidpool *p, uid_t uid);
/* Never hand out `uid` again in this process (a run whose cleanup failed). */
void uidpool_quarantine(struct uidpool *p, uid_t uid);

/* SIGKILL every process whose real, effective or saved uid is in the range
 * (left by a crashed predecessor). Returns how many were killed. */
int uidpool_kill_strays(uid_t first, unsigned count);

#endif
