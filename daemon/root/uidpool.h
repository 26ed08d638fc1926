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

/* A bound on the bitmaps (and on uid_range.count): 1M concurrent runs is plenty. */
#define UIDPOOL_COUNT_MAX (1u << 20)

struct uidpool;

/* A pool handing out first .. first+count-1 (the caller keeps the front's
 * uid out of it). */
struct uidpool *uidpool_new(uid_t first, unsigned count, char *err, size_t errlen);
void uidpool_free(struct uidpool *p);

/* Take a free uid (uid == gid). -1 with errno EAGAIN when all are in use. */
int uidpool_take(struct uidpool *p, uid_t *out);
void uidpool_release(struct uidpool *p, uid_t uid);
/* Never hand out `uid` again in this process (a run whose cleanup failed). */
void uidpool_quarantine(struct uidpool *p, uid_t uid);

#endif
