/*
 * uidrange.h - is uid_range free on this host?  Checked at start, by
 * --doctor and --check-config.
 *
 * Trust: privileged; reads /etc.
 */
#ifndef SHARNESS_UIDRANGE_H
#define SHARNESS_UIDRANGE_H

#include <stddef.h>
#include <sys/types.h>

/* Refuse a range that overlaps root, any /etc/passwd user or /etc/group group,
 * /etc/subuid or /etc/subgid ranges, systemd's reserved ranges (system users,
 * dynamic users 61184-65519, container range 524288-1879048191, nobody) or
 * that wraps.  The error says which and what to configure instead. */
int uidpool_check_range(uid_t first, unsigned count, char *err, size_t errlen);
/* The same checks against the given files instead of /etc (tests); no NSS
 * lookups. */
int uidpool_check_range_files(uid_t first, unsigned count, const char *passwd, const char *group,
                              const char *subuid, const char *subgid, char *err, size_t errlen);

#endif
