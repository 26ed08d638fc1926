/*
 * lockdown.h - the front's own locks, applied once it has read its
 * handover and built the secret filter, before it serves anything:
 * Landlock (read-only /etc and the NSS libraries, no TCP bind, scoped
 * signals and abstract sockets) and an allowlist seccomp filter.
 *
 * Trust: the front runs as its own uid with no capability and
 * no_new_privs (set by root before the exec); this narrows what a bug in
 * TLS, HTTP or JSON handling could reach.
 */
#ifndef SHARNESS_LOCKDOWN_H
#define SHARNESS_LOCKDOWN_H

#include <stddef.h>

/* Apply both to the calling process (every thread).  0, or -1 with err set. */
int lockdown_front(char *err, size_t errlen);

#endif
