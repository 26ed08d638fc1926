/*
 * instance.c - one daemon per uid range and state_dir (see instance.h).
 *
 * Two kinds of claim, both released by the kernel when the daemon dies, so a
 * crash never leaves a claim that blocks the next start:
 *   state_dir  an exclusive flock(2) on <state_dir>/sharnessd.lock, which
 *              holds the owner's pid for the refusal sentence;
 *   uid range  an abstract unix socket named "sharnessd:range:<first>:<count>:<pid>"
 *              in the host's network namespace.  Every live daemon's range is
 *              then listed in /proc/net/unix; abstract names need no writable
 *              directory (the unit's ProtectSystem=strict leaves none shared
 *              by the unit and a `make run`), and vanish with their socket.
 * The socket is bound before the others are read, so of two daemons starting
 * at once at least one sees the other (both may refuse: fail closed).
 *
 * Abstract names are open to every local user, so a claim counts only when
 * root made its socket (sock_diag(7), UDIAG_SHOW_UID: the uid of the
 * socket's inode, which no other uid can set and which stays with the
 * socket when its descriptor is passed on).  Every sharnessd runs as root
 * (main.c refuses otherwise), so a claim of any other uid is a lookalike,
 * never a daemon: it is ignored, with a warning naming the uid.  Refusing
 * instead (even with a true hint) would let any local user keep sharnessd
 * from ever starting (`sharnessd:range:0:4294967295:1`); ignoring it costs
 * nothing, since the claim keeps daemons apart, not users.  Where the uid
 * cannot be read, the claim counts (fail closed).  A lookalike bound at our
 * very name (the pid is easy to guess) makes us bind that name with a
 * random tag after the pid, ":<16 hex digits>", which this parser reads.
 *
 * Crash recovery reads <state_dir>/cgroup: the run cgroup base of the daemon
 * that used this state_dir before.  Only what lies below it is killed, never
 * "every process of a uid" (that would hit another daemon's runs).
 *
 * Trust: start-up, root; the names read from /proc/net/unix come from other
 * local processes and are parsed strictly.
 */
#include "instance.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "errmsg.h"
#include "log.h"

#define RANGE_PREFIX "sharnessd:range:"

static int lock_fd = -1, range_fd = -1;

/* The pid written in an existing lock file, 0 if none could be read. */
static long lock_owner(int fd)
{
	char buf[32] = {0};
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	return n > 0 ? strtol(buf, NULL, 10) : 0;
}

static int claim_state_dir(const char *state_dir, char *err, size_t errlen)
{
	char path[4096], pid[32];

	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) {
		errmsg_set(err, errlen, "cannot create state_dir %s: %s", state_dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/sharnessd.lock", state_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		errmsg_set(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		long owner = lock_owner(fd);
		close(fd);
		errmsg_set(err, errlen,
		           "another sharnessd (pid %ld) uses state_dir %s; stop it first, or give this daemon its own "
		           "state_dir and uid_range",
		           owner, state_dir);
		return -1;
	}
	/* The pid is only for the refusal sentence of a second daemon: on a
	 * full state_dir the lock alone still holds. */
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, (size_t)n, 0);
	lock_fd = fd;
	return 0;
}

/* One line of /proc/net/unix ("Num RefCount Protocol Flags Type St Inode
 * Path") ends in the path, "@name" for an abstract one.  Returns 1 and fills
 * the range of another daemon and its socket's inode, 0 for anything else. */
static int parse_range(const char *line, uint64_t *first, uint64_t *count, long *pid, unsigned long *ino)
{
	const char *at = strstr(line, " @" RANGE_PREFIX);
	if (!at || sscanf(line, "%*s %*s %*s %*s %*s %*s %lu", ino) != 1)
		return 0;
	at += 2 + strlen(RANGE_PREFIX);
	char tail;
	if (sscanf(at, "%" SCNu64 ":%" SCNu64 ":%ld%c", first, count, pid, &tail) != 4 ||
	    (tail != '\n' && tail != ':'))
		return 0;
	return *count > 0 && *pid > 0;
}

/* The uid that made the unix socket with inode `ino`, from sock_diag(7):
 * >= 0; -1 when it is gone (no claim any more); -2 when the kernel cannot
 * say (the caller counts the claim: fail closed). */
static long socket_uid(unsigned long ino)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} q = {
	    .nlh = {.nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST},
	    .req = {.sdiag_family = AF_UNIX,
		    .udiag_ino = (uint32_t)ino,
		    .udiag_show = UDIAG_SHOW_UID,
		    .udiag_cookie = {~0U, ~0U}}};
	union {
		struct nlmsghdr h;
		char buf[1024];
	} r;
	long uid = -2;
	ssize_t n =
	    nl >= 0 && send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q) ? recv(nl, &r, sizeof(r), 0) : -1;
	if (n > 0 && NLMSG_OK(&r.h, (size_t)n) && r.h.nlmsg_type == NLMSG_ERROR &&
	    r.h.nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		if (((struct nlmsgerr *)NLMSG_DATA(&r.h))->error == -ENOENT)
			uid = -1;
	} else if (n > 0 && NLMSG_OK(&r.h, (size_t)n) && r.h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		   r.h.nlmsg_len >= NLMSG_LENGTH(sizeof(struct unix_diag_msg))) {
		size_t alen = r.h.nlmsg_len - NLMSG_LENGTH(sizeof(struct unix_diag_msg));
		for (struct rtattr *a = (struct rtattr *)((struct unix_diag_msg *)NLMSG_DATA(&r.h) + 1);
		     RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
			uint32_t u;
			if (a->rta_type == UNIX_DIAG_UID && RTA_PAYLOAD(a) >= sizeof(u)) {
				memcpy(&u, RTA_DATA(a), sizeof(u));
				uid = u;
			}
		}
	}
	if (nl >= 0)
		close(nl);
	return uid;
}

/* The first claim but ours in /proc/net/unix whose range overlaps [first,
 * first+count) and that root made: 1 with it in h, 0 none, -1 with err when
 * the list cannot be read.  Lookalikes (see the top) are skipped; the last
 * one's uid, pid and range go to h->lookalike_uid (else -1) and beside it. */
static int find_claim(uint64_t first, uint64_t count, struct instance_holders *h, char *err, size_t errlen)
{
	char line[512];
	int found = 0;
	memset(h, 0, sizeof(*h));
	h->lookalike_uid = -1;
	FILE *f = fopen("/proc/net/unix", "re");
	if (!f) {
		errmsg_set(err, errlen, "cannot read /proc/net/unix to find other daemons: %s",
			   strerror(errno));
		return -1;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t f2, c2;
		long pid, uid;
		unsigned long ino;
		if (!parse_range(line, &f2, &c2, &pid, &ino) || pid == getpid() || first >= f2 + c2 ||
		    f2 >= first + count || (uid = socket_uid(ino)) == -1)
			continue;
		if (uid > 0) {
			h->lookalike_uid = uid;
			h->lookalike_pid = pid;
			h->lookalike_first = f2;
			h->lookalike_count = c2;
			continue;
		}
		h->range_pid = pid;
		h->range_first = f2;
		h->range_count = c2;
		found = 1;
	}
	fclose(f);
	return found;
}

/* Bind our claim's name, with a random tag after the pid if `tagged`. */
static int bind_claim(int fd, uint64_t first, uint64_t count, int tagged)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint64_t tag = 0;
	if (tagged && getrandom(&tag, sizeof(tag), 0) != (ssize_t)sizeof(tag))
		return -1;
	int len = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
			   RANGE_PREFIX "%" PRIu64 ":%" PRIu64 ":%d", first, count, (int)getpid());
	if (tagged)
		len += snprintf(sa.sun_path + 1 + len, sizeof(sa.sun_path) - 1 - (size_t)len, ":%016" PRIx64,
				tag);
	return bind(fd, (struct sockaddr *)&sa,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
}

static int claim_range(uint64_t first, uint64_t count, char *err, size_t errlen)
{
	struct instance_holders h;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int rc = fd < 0 ? -1 : bind_claim(fd, first, count, 0);
	if (rc < 0 && errno == EADDRINUSE) /* our own name, taken: whose is told below */
		rc = bind_claim(fd, first, count, 1);
	if (rc < 0) {
		errmsg_set(err, errlen, "cannot register the uid range (abstract unix socket): %s",
			   strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rc = find_claim(first, count, &h, err, errlen);
	if (h.lookalike_uid > 0)
		log_warn("ignored a claim of uid_range %" PRIu64 "-%" PRIu64
			 " naming pid %ld: uid %ld made it, not root, "
			 "so no sharnessd did (`ss -axp | grep sharnessd:range` shows its process)",
			 h.lookalike_first, h.lookalike_first + h.lookalike_count - 1, h.lookalike_pid,
			 h.lookalike_uid);
	if (rc == 1)
		errmsg_set(err, errlen,
			   "another sharnessd (pid %ld) uses uid_range %" PRIu64 "-%" PRIu64
			   ", which overlaps this one (%" PRIu64 "-%" PRIu64
			   "); give this daemon a uid_range of its own (uid_range.first)",
			   h.range_pid, h.range_first, h.range_first + h.range_count - 1, first,
			   first + count - 1);
	if (rc != 0) {
		close(fd);
		return -1;
	}
	range_fd = fd;
	return 0;
}

int instance_claim(const char *state_dir, uint64_t uid_first, uint64_t uid_count, char *err, size_t errlen)
{
	if (claim_range(uid_first, uid_count, err, errlen) < 0)
		return -1;
	return claim_state_dir(state_dir, err, errlen);
}

void instance_close_inherited(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
	if (range_fd >= 0)
		close(range_fd);
	lock_fd = range_fd = -1;
}

int instance_previous_cgroup(const char *state_dir, char *out, size_t outlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/cgroup", state_dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	ssize_t n = read(fd, out, outlen - 1);
	close(fd);
	if (n <= 0)
		return 0;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	/* Only a cgroup path is taken from the file: anything else is ignored. */
	if (strncmp(out, "/sys/fs/cgroup/", 15) != 0 || strstr(out, "/../") || strstr(out, "/./"))
		return 0;
	return 1;
}

int instance_record_cgroup(const char *state_dir, const char *dir)
{
	char path[4096], tmp[4096];
	snprintf(path, sizeof(path), "%s/cgroup", state_dir);
	snprintf(tmp, sizeof(tmp), "%s/cgroup.new", state_dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	size_t n = strlen(dir);
	int ok = write(fd, dir, n) == (ssize_t)n && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
	close(fd);
	return ok && rename(tmp, path) == 0 ? 0 : -1;
}

/* ---- read-only probe (sharnessd --doctor) ----------------------------- */

int instance_probe(const char *state_dir, uint64_t first, uint64_t count, struct instance_holders *h, char *err,
                   size_t errlen)
{
	char path[4096];

	if (find_claim(first, count, h, err, errlen) < 0)
		return -1;
	/* No O_CREAT: a state_dir that has no lock file keeps having none. */
	snprintf(path, sizeof(path), "%s/sharnessd.lock", state_dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd >= 0) {
		if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
			h->dir_locked = errno == EWOULDBLOCK;
			h->dir_pid = lock_owner(fd);
		} else {
			flock(fd, LOCK_UN);
		}
		close(fd);
	}
	return 0;
}
