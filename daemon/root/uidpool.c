/*
 * uidpool.c - the ephemeral uids of the runs: an in-process allocator over
 * the uids the caller gives it (main.c keeps uid_range.first for the front
 * and gives the pool first+1 ..).  The start-up's check that the range is
 * free on this host is start/uidrange.c.
 *
 * Trust: privileged (launcher only); reads nothing.
 */
#include "errmsg.h"
#include "uidpool.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* No lock: only the launcher's one thread uses it (its supervisors are
 * processes of their own). */
struct uidpool {
	uid_t first;
	unsigned count;
	unsigned next;            /* round robin: a released uid is reused last */
	unsigned char *taken;     /* bitmap over slots 0..count-1 */
	unsigned char *quarantine;
};

struct uidpool *uidpool_new(uid_t first, unsigned count, char *err, size_t errlen)
{
	struct uidpool *p;

	if (count < 1 || count > UIDPOOL_COUNT_MAX || (uint64_t)first + count - 1 > UINT32_MAX) {
		errmsg_set(err, errlen, "uid_range first=%u count=%u is not a valid range", (unsigned)first, count);
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->taken = calloc((count + 7) / 8, 1)) || !(p->quarantine = calloc((count + 7) / 8, 1))) {
		errmsg_set(err, errlen, "uid pool: out of memory");
		uidpool_free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->first = first;
	p->count = count;
	return p;
}

void uidpool_free(struct uidpool *p)
{
	if (!p)
		return;
	free(p->taken);
	free(p->quarantine);
	free(p);
}

static bool bit(const unsigned char *m, unsigned i)
{
	return m[i / 8] & (1u << (i % 8));
}

static void setbit(unsigned char *m, unsigned i, bool on)
{
	if (on)
		m[i / 8] |= (unsigned char)(1u << (i % 8));
	else
		m[i / 8] &= (unsigned char)~(1u << (i % 8));
}

int uidpool_take(struct uidpool *p, uid_t *out)
{
	int rc = -1;

	if (!p || !out) {
		errno = EINVAL;
		return -1;
	}
	/* Round robin from the last handed-out slot, so a just released uid
	 * (whose last files or processes may still be settling) comes last. */
	for (unsigned n = 0; n < p->count; n++) {
		unsigned s = p->next;

		p->next = p->next + 1 >= p->count ? 0 : p->next + 1;
		if (!bit(p->taken, s) && !bit(p->quarantine, s)) {
			setbit(p->taken, s, true);
			*out = p->first + s;
			rc = 0;
			break;
		}
	}
	if (rc)
		errno = EAGAIN;
	return rc;
}

/* Sets uid's bit in `bits` (taken or quarantine) to `on`; a uid not of the
 * pool is left alone. */
static void mark(struct uidpool *p, unsigned char *bits, uid_t uid, bool on)
{
	if (!p || uid < p->first || (uint64_t)uid - p->first >= p->count)
		return;
	setbit(bits, (unsigned)(uid - p->first), on);
}

void uidpool_release(struct uidpool *p, uid_t uid)
{
	mark(p, p ? p->taken : NULL, uid, false);
}

void uidpool_quarantine(struct uidpool *p, uid_t uid)
{
	mark(p, p ? p->quarantine : NULL, uid, true);
}
