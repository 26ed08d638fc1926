/*
 * uidrange.c - see uidrange.h: the start-up's check that uid_range is free
 * against every allocator on the host.
 *
 * Trust: privileged, at start (and --doctor, --check-config).  It reads
 * root-owned files (/etc/passwd, /etc/group, /etc/subuid, /etc/subgid); the
 * range comes from the configuration.
 */
#include "errmsg.h"
#include "uidpool.h"
#include "uidrange.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Our own reservation in /etc/subuid and /etc/subgid (research/ecosystem.md
 * §5.4: it makes useradd's allocator skip the block) is not a collision. */
#define OWN_SUBID_NAME "sharnessd"

#define HINT "; set uid_range.first so that the whole range is free, e.g. 1900000000 with count 4096"

struct reserved {
	uint64_t lo, hi;
	const char *what;
};

/* systemd's map of the uid space (systemd docs/UIDS-GIDS.md). */
static const struct reserved reserved[] = {
	{ 0, 0, "root (uid 0)" },
	{ 1, 999, "systemd's system users (1-999)" },
	{ 60001, 60513, "systemd-homed users (60001-60513)" },
	{ 60514, 60577, "systemd-nspawn's host user mapping (60514-60577)" },
	{ 61184, 65519, "systemd's dynamic users (61184-65519, DynamicUser=)" },
	{ 65534, 65534, "nobody (65534)" },
	{ 65535, 65535, "the 16-bit invalid uid (65535)" },
	{ 524288, 1879048191, "systemd's container range (524288-1879048191)" },
	{ 0x7FFE0000u, 0x7FFEFFFFu, "systemd's foreign uid range (2147352576-2147418111)" },
	/* devpts and some tools treat uids as signed 32-bit values. */
	{ 0x80000000u, 4294967293u, "uids at or above 2147483648 (unsafe: treated as signed)" },
	{ 4294967294u, 4294967295u, "the invalid uids 4294967294 and 4294967295" },
};

static bool overlaps(uint64_t a_lo, uint64_t a_hi, uint64_t b_lo, uint64_t b_hi)
{
	return a_lo <= b_hi && b_lo <= a_hi;
}

/* /etc/subuid and /etc/subgid: "owner:start:count" per line (subuid(5)). */
static int check_subids(const char *path, uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	char line[512];
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return errno == ENOENT ? 0 : (errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno)), -1);
	while (fgets(line, sizeof(line), f)) {
		char *owner = line, *c1 = strchr(line, ':'), *c2, *end;
		uint64_t start, n;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c1 = '\0';
		errno = 0;
		start = strtoull(c1 + 1, &end, 10);
		if (errno || end != c2)
			continue;
		n = strtoull(c2 + 1, &end, 10);
		if (errno || n == 0 || (*end != '\n' && *end != '\0'))
			continue;
		if (strcmp(owner, OWN_SUBID_NAME) == 0)
			continue;
		if (overlaps(lo, hi, start, start + n - 1)) {
			errmsg_set(err, errlen,
			       "uid_range %" PRIu64 "-%" PRIu64 " overlaps the subordinate ids of '%s' (%" PRIu64
			       "-%" PRIu64 ") in %s" HINT,
			       lo, hi, owner, start, start + n - 1, path);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

static int check_passwd(const char *path, uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct passwd *pw;
	int rc = 0;

	if (!f) {
		errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while ((pw = fgetpwent(f))) {
		if (pw->pw_uid >= lo && pw->pw_uid <= hi) {
			errmsg_set(err, errlen,
			       "uid_range %" PRIu64 "-%" PRIu64 " overlaps user '%s' (uid %u) in %s" HINT, lo, hi,
			       pw->pw_name, (unsigned)pw->pw_uid, path);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

static int check_group(const char *path, uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct group *gr;
	int rc = 0;

	if (!f) {
		errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while ((gr = fgetgrent(f))) {
		if (gr->gr_gid >= lo && gr->gr_gid <= hi) {
			errmsg_set(err, errlen,
			       "uid_range %" PRIu64 "-%" PRIu64 " overlaps group '%s' (gid %u) in %s" HINT, lo, hi,
			       gr->gr_name, (unsigned)gr->gr_gid, path);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

int uidpool_check_range_files(uid_t first, unsigned count, const char *passwd, const char *group,
                              const char *subuid, const char *subgid, char *err, size_t errlen)
{
	uint64_t lo = first, hi;
	size_t i;

	if (count < 2 || count > UIDPOOL_COUNT_MAX) {
		errmsg_set(err, errlen,
		       "uid_range.count %u is out of bounds: it must be 2 to %u (the front uses the first uid, "
		       "runs the others)",
		       count, UIDPOOL_COUNT_MAX);
		errno = EINVAL;
		return -1;
	}
	hi = lo + count - 1;
	if (hi > UINT32_MAX) {
		errmsg_set(err, errlen,
		       "uid_range first=%" PRIu64 " count=%u wraps past 4294967295" HINT, lo, count);
		errno = ERANGE;
		return -1;
	}
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		if (overlaps(lo, hi, reserved[i].lo, reserved[i].hi)) {
			errmsg_set(err, errlen, "uid_range %" PRIu64 "-%" PRIu64 " overlaps %s" HINT, lo, hi,
			       reserved[i].what);
			errno = EEXIST;
			return -1;
		}
	}
	if (check_passwd(passwd, lo, hi, err, errlen) < 0 || check_group(group, lo, hi, err, errlen) < 0 ||
	    check_subids(subuid, lo, hi, err, errlen) < 0 || check_subids(subgid, lo, hi, err, errlen) < 0) {
		errno = EEXIST;
		return -1;
	}
	return 0;
}

int uidpool_check_range(uid_t first, unsigned count, char *err, size_t errlen)
{
	if (uidpool_check_range_files(first, count, "/etc/passwd", "/etc/group", "/etc/subuid", "/etc/subgid",
	                              err, errlen) < 0)
		return -1;
	/* Users from other NSS sources (LDAP, sssd) are not in the files; ask
	 * NSS about the ends of the range, one lookup each (a lookup per uid
	 * could take seconds against a directory server).  In a child of its
	 * own: NSS loads its modules (libnss_systemd, libcap, libm) for good,
	 * and the launcher, which forks a supervisor per run, would copy their
	 * mappings into every run (docs/bench.md, Throughput).  Its exit code
	 * is the answer: 0 free, 1 taken; anything else fails closed. */
	int ws = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(getpwuid(first) || getgrgid(first) || getpwuid(first + count - 1) || getgrgid(first + count - 1));
	while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) > 1) {
		errmsg_set(err, errlen, "cannot ask NSS whether uid_range %u-%u is free: %s", (unsigned)first,
		           (unsigned)(first + count - 1), pid < 0 ? strerror(errno) : "the lookup failed");
		errno = EIO;
		return -1;
	}
	if (WEXITSTATUS(ws) == 1) {
		errmsg_set(err, errlen,
		       "uid_range %u-%u overlaps a user or group known to NSS (getent passwd/group)" HINT,
		       (unsigned)first, (unsigned)(first + count - 1));
		errno = EEXIST;
		return -1;
	}
	return 0;
}
