/*
 * uidpool.c - the ephemeral uids of the runs: range checks against every
 * allocator on the host, an in-process allocator over the uids the caller
 * gives it (main.c keeps uid_range.first for the front and gives the pool
 * first+1 ..), and the crash-recovery sweep that
 * kills processes left running under uids of the range.
 *
 * Trust: privileged (launcher only).  It reads root-owned files (/etc/passwd,
 * /etc/group, /etc/subuid, /etc/subgid) and /proc; the range comes from the
 * configuration.
 */
#include "errmsg.h"
#include "uidpool.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COUNT_MAX (1u << 20)   /* a bound on the bitmaps; 1M concurrent runs is plenty */
#define STRAY_ROUNDS 64        /* kill_strays gives up after this many sweeps */
#define STRAY_EXIT_WAIT_MS 200 /* per killed process, wait for it to be gone */

/* Our own reservation in /etc/subuid and /etc/subgid (research/ecosystem.md
 * §5.4: it makes useradd's allocator skip the block) is not a collision. */
#define OWN_SUBID_NAME "sharnessd"

#define HINT "; set uid_range.first so that the whole range is free, e.g. 1900000000 with count 4096"

struct uidpool {
	pthread_mutex_t lock;
	uid_t first;
	unsigned count;
	unsigned next;            /* round robin: a released uid is reused last */
	unsigned char *taken;     /* bitmap over slots 0..count-1 */
	unsigned char *quarantine;
};

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

	if (count < 2 || count > COUNT_MAX) {
		errmsg_set(err, errlen,
		       "uid_range.count %u is out of bounds: it must be 2 to %u (the front uses the first uid, "
		       "runs the others)",
		       count, COUNT_MAX);
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
	 * could take seconds against a directory server). */
	if (getpwuid(first) || getgrgid(first) || getpwuid(first + count - 1) || getgrgid(first + count - 1)) {
		errmsg_set(err, errlen,
		       "uid_range %u-%u overlaps a user or group known to NSS (getent passwd/group)" HINT,
		       (unsigned)first, (unsigned)(first + count - 1));
		errno = EEXIST;
		return -1;
	}
	return 0;
}

struct uidpool *uidpool_new(uid_t first, unsigned count, char *err, size_t errlen)
{
	struct uidpool *p;

	if (count < 1 || count > COUNT_MAX || (uint64_t)first + count - 1 > UINT32_MAX) {
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
	pthread_mutex_init(&p->lock, NULL);
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
	pthread_mutex_lock(&p->lock);
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
	pthread_mutex_unlock(&p->lock);
	if (rc)
		errno = EAGAIN;
	return rc;
}

/* Slot of a pool uid, or -1 when uid is not one of the pool. */
static long slot_of(const struct uidpool *p, uid_t uid)
{
	if (uid < p->first || (uint64_t)uid - p->first >= p->count)
		return -1;
	return (long)(uid - p->first);
}

void uidpool_release(struct uidpool *p, uid_t uid)
{
	long s;

	if (!p || (s = slot_of(p, uid)) < 0)
		return;
	pthread_mutex_lock(&p->lock);
	setbit(p->taken, (unsigned)s, false);
	pthread_mutex_unlock(&p->lock);
}

void uidpool_quarantine(struct uidpool *p, uid_t uid)
{
	long s;

	if (!p || (s = slot_of(p, uid)) < 0)
		return;
	pthread_mutex_lock(&p->lock);
	setbit(p->quarantine, (unsigned)s, true);
	pthread_mutex_unlock(&p->lock);
}

/* 1 when pid is alive (not a zombie) with a real, effective, saved or fs
 * uid in [lo, hi]; 0 otherwise or when it is gone. */
static int uid_in_range(pid_t pid, uint64_t lo, uint64_t hi)
{
	char path[64], line[256];
	FILE *f;
	int in = 0;
	bool zombie = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long u[4];

		if (strncmp(line, "State:", 6) == 0 && strchr(line, 'Z'))
			zombie = true;
		if (strncmp(line, "Uid:", 4) == 0 &&
		    sscanf(line + 4, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			for (int i = 0; i < 4; i++)
				if (u[i] >= lo && u[i] <= hi)
					in = 1;
			break; /* Uid: comes after State: */
		}
	}
	fclose(f);
	return zombie ? 0 : in;
}

int uidpool_kill_strays(uid_t first, unsigned count)
{
	uint64_t lo = first, hi = (uint64_t)first + (count ? count : 1) - 1;
	int killed = 0;

	if (count == 0)
		return 0;
	for (int round = 0; round < STRAY_ROUNDS; round++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		int this_round = 0;

		if (!d)
			return -1;
		while ((de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			int fd;

			if (*end || pid <= 0 || pid == getpid() || !uid_in_range((pid_t)pid, lo, hi))
				continue;
			/* pidfd first, then check again: the check now speaks about
			 * the process the pidfd pins, so a recycled pid is never
			 * signalled (pidfd_open(2)). */
			fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
			if (fd < 0)
				continue;
			if (uid_in_range((pid_t)pid, lo, hi) &&
			    syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0) {
				struct pollfd pf = { .fd = fd, .events = POLLIN };
				/* A pidfd polls readable once the process has exited. */
				poll(&pf, 1, STRAY_EXIT_WAIT_MS);
				this_round++;
			}
			close(fd);
		}
		closedir(d);
		killed += this_round;
		if (this_round == 0)
			return killed;
	}
	return killed;
}
