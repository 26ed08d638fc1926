/*
 * notify.c - the supervisor's answers to a run's seccomp notifications.
 *
 * These calls of a run stop in the kernel and wait for us
 * (start/sandbox_filter.c): umask(), connect(), and every call that makes,
 * changes or removes a directory entry or opens for writing, which go to
 * the run's file actor (root/actor.c), but for writes to the sandbox's own
 * devices, answered here (answer_device).  The rule for all: we never answer "go on"
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE) after looking at the run's memory or
 * file table.  Another thread of the run can change either between our look
 * and the kernel's, so a check followed by "go on" proves nothing.  We copy
 * what the call names once, act on the copy ourselves, and answer with the
 * result.
 *
 * umask: see seccomp.c (no world-writable files).
 *
 * connect (SPEC §15.2, issue 12): no run may connect to a unix socket it
 * did not create in this run - not the person's (a dev server's or an
 * editor's socket in the workspace: the idmapped mount makes the run look
 * like its owner, so the mode protects nothing), not another run's.  The
 * kernel has no lock for path sockets (Landlock scopes only abstract ones),
 * so the test is on the listener: SO_PEERCRED names the uid of the process
 * that called listen().  Every run has a uid of its own, and every process
 * of that uid dies with the run (the launcher quarantines the uid otherwise),
 * so a listener of the run's uid was made by this run - whatever the path
 * looks like, however it was renamed or linked.  The person, root and every
 * other run have other uids.
 *
 *   AF_INET, AF_INET6, abstract and unnamed AF_UNIX: we connect our copy of
 *   the run's socket (pidfd_getfd) to the copied address.  A socket keeps
 *   the network namespace it was made in, the run's own, so this reaches
 *   exactly what the run could reach.  TCP goes only to the proxy port of a
 *   proxy profile: the rule Landlock makes on ABI 4 (landlock.c), now on
 *   every kernel, since our connect is not under the run's Landlock domain.
 *
 *   AF_UNIX path: the run's file actor (root/actor.c), which stands in
 *   the run's network namespace and root with the run's uid and gid, and
 *   enters the caller's working directory for the call, resolves the path
 *   as it would resolve for the run, with no more permission; it connects
 *   a new socket of the same type only if the socket at that path listens
 *   in the run's own namespace, and reads the listener's uid
 *   (connect_run.c).  Only the run's own uid passes, and then the new
 *   socket replaces the run's descriptor
 *   (SECCOMP_IOCTL_NOTIF_ADDFD, SETFD); any other peer is closed before the
 *   run could send a byte: EACCES.  What the new socket lacks: options set
 *   on the old one and a local address bound before connect (both rare for
 *   a client of a path socket).
 *
 * Datagram unix sockets cannot be made at all (seccomp.c): sendto() names
 * its peer in memory on every call, where no check of ours could hold.
 *
 * Trust: runs as the run's uid (the supervisor after its drop: root/
 * supervise.c, become_run), which may read the run's memory and take its
 * descriptors because the run's processes are its descendants and of its
 * uid.  Everything read from the run is bounded and copied before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "actor_msg.h"
#include "notify.h"
#include "privsep.h"
#include "procstatus.h"
#include "utf8.h"

/* Our own calls on the run's processes (process_vm_readv, pidfd_getfd)
 * need ptrace access as their uid: a process of the run that made itself
 * undumpable, or a Yama scope above 1 (start-up refuses that), stops them. */
#define NO_PTRACE_HINT "; a process that makes itself undumpable cannot connect or write"
#define ACTOR_CLOSED_WAIT_MS 5000 /* the actor's close and one byte: microseconds */
#define NR_FCHMODAT2 452 /* Linux 6.6, x86-64; newer than libseccomp 2.5.4 */

/* "Umask:\t0022" (Linux 4.7). */
static int read_umask(pid_t pid, unsigned *mask)
{
	char buf[PROCSTATUS_MAX];
	const char *p = procstatus_read(pid, buf, sizeof(buf)) == 0 ? procstatus_find(buf, "Umask") : NULL;
	if (!p)
		return -1;
	*mask = (unsigned)strtoul(p, NULL, 8);
	return 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd of any thread */
#endif

/* A copy of descriptor `fd` of the calling thread `tid` (a notification
 * names the thread, not its process).  pidfd_open takes a thread that
 * does not lead its group with PIDFD_THREAD (6.9) only; before that, the
 * group's leader, whose table its threads share (every threads library
 * makes them with CLONE_FILES).  -1 with errno. */
static int run_fd(pid_t tid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (pidfd < 0 && errno == EINVAL) {
		char buf[PROCSTATUS_MAX];
		const char *tgid = procstatus_read(tid, buf, sizeof(buf)) == 0 ? procstatus_find(buf, "Tgid") : NULL;
		pidfd = tgid ? (int)syscall(SYS_pidfd_open, (pid_t)strtol(tgid, NULL, 10), 0) : -1;
	}
	int got = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0) : -1;
	int e = errno;
	if (pidfd >= 0)
		close(pidfd);
	errno = e;
	return got;
}

/* Is the request still pending?  Only then is req->pid the caller: it may
 * have died and the pid been reused since it was sent. */
static int still_pending(int listener, const struct seccomp_notif *req)
{
	uint64_t id = req->id;
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* What the daemon lacks when root could not start the actor (root/actor.c):
 * the look at the run's root through /proc of its init, which is the run's
 * uid by then (EACCES), or the chroot (EPERM). */
static const char *actor_hint(int err)
{
	return err == EACCES ? "; give the daemon CAP_SYS_PTRACE" : err == EPERM ? "; give the daemon CAP_SYS_CHROOT" : "";
}

/* The longest a connect made for the run (abstract unix, TCP to the proxy)
 * may hold the supervisor's loop. */
#define CONNECT_WAIT_MS 500

/* A refusal: for the log (its kind) and the reply (the first distinct). */
__attribute__((format(printf, 3, 4)))
static void note(struct notify_run *run, uint32_t kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(run->denied, sizeof(run->denied), fmt, ap);
	va_end(ap);
	run->denied_kind = kind;
	run->n_denied++;
	for (unsigned i = 0; i < run->n_first; i++)
		if (run->first[i].kind == kind && strncmp(run->first[i].detail, run->denied, sizeof(run->first[i].detail) - 1) == 0)
			return;
	if (run->n_first < PRIVSEP_DENIALS_MAX) {
		run->first[run->n_first].kind = kind;
		char *d = run->first[run->n_first].detail;
		/* Cut to fit, between characters: the log line has all of it. */
		size_t n = utf8_cut(run->denied, strlen(run->denied), sizeof(run->first[0].detail) - 1);
		memcpy(d, run->denied, n);
		d[n] = '\0';
		run->n_first++;
	}
}

/* -EACCES for a call only the run's file actor makes, when root could not
 * start it: named, with what to grant the daemon. */
static int no_actor(struct notify_run *run, const char *what)
{
	note(run, PRIVSEP_DENIAL_DAEMON, "%s: the file actor did not start with the sandbox (%s)%s", what,
	     strerror(run->actor_err), actor_hint(run->actor_err));
	return -EACCES;
}

static int answer_umask(int listener, const struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	unsigned mask = 022;
	if (read_umask((pid_t)req->pid, &mask) < 0 || !still_pending(listener, req))
		return -EPERM;
	resp->val = (int64_t)(mask | S_IWOTH);
	return 0;
}

static int base_fd(pid_t pid, int dirfd);

/* Hands a request to the actor without waiting: 1 (answered later, by
 * notify_actor_answer).  An actor stuck in one request (a FIFO opened for
 * writing with no reader) lets requests pile up until its socket is full;
 * waiting then would hold the loop, and with it the run's timeout.  So the
 * call is answered EAGAIN, and said why. */
static int to_actor(struct notify_run *run, const struct actor_req *q, const int *fds, size_t nfds, const char *what)
{
	if (privsep_send_nowait(run->actor.sock, q, sizeof(*q), fds, nfds) == 0) {
		run->actor_busy++;
		return 1;
	}
	if (errno != EAGAIN)
		return -EACCES;
	note(run, PRIVSEP_DENIAL_DAEMON, "%s: the run's file actor has %u calls waiting behind one that blocks (a FIFO "
	     "opened with no reader?): answered EAGAIN so that the run's timeout still holds", what, run->actor_busy);
	return -EAGAIN;
}

/* O_CLOEXEC of the run's descriptor, from /proc/PID/fdinfo/FD ("flags:"). */
static unsigned target_cloexec(pid_t pid, int fd)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	int f = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
	if (f >= 0)
		close(f);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "flags:");
	return p && (strtoul(p + 6, NULL, 8) & O_CLOEXEC) ? O_CLOEXEC : 0;
}

static uint16_t port_of(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
}

/* The address and the socket of a connect or a bind: one copy of the
 * address, within the kernel's own limit (move_addr_to_kernel), and our
 * copy of the socket.  The socket, or -errno. */
static int call_socket(int listener, const struct seccomp_notif *req, struct notify_run *run,
                       struct sockaddr_storage *addr, int *ulen)
{
	pid_t pid = (pid_t)req->pid;
	uint64_t uaddr = req->data.args[1];
	*ulen = (int)req->data.args[2];
	if (*ulen < 0 || (size_t)*ulen > sizeof(*addr))
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	struct iovec local = {.iov_base = addr, .iov_len = (size_t)*ulen};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)uaddr, .iov_len = (size_t)*ulen};
	if (*ulen > 0 && process_vm_readv(pid, &local, 1, &remote, 1, 0) != *ulen) {
		if (errno == EPERM)
			goto no_ptrace;
		return -EFAULT;
	}
	int sock = run_fd(pid, (int)req->data.args[0]);
	int saved = errno;
	if (!still_pending(listener, req)) {
		if (sock >= 0)
			close(sock);
		return -EACCES;
	}
	if (sock < 0 && saved == EPERM)
		goto no_ptrace;
	if (sock < 0)
		return saved == EBADF ? -EBADF : -EACCES;
	return sock;

no_ptrace:
	/* Fail closed, and say why. */
	note(run, PRIVSEP_DENIAL_DAEMON, "a %s: the daemon cannot read the run's call (%s)%s",
	     req->data.nr == SYS_bind ? "bind" : "connect", strerror(EPERM), NO_PTRACE_HINT);
	return -EACCES;
}

/* Does a connect or bind of a `domain` socket to this address name a unix
 * path (not abstract, not unnamed)?  Then the run's actor makes the call. */
static bool unix_path(int domain, const struct sockaddr_storage *addr, int ulen)
{
	return domain == AF_UNIX && addr->ss_family == AF_UNIX &&
	       (size_t)ulen > offsetof(struct sockaddr_un, sun_path) &&
	       ((const struct sockaddr_un *)addr)->sun_path[0] != '\0';
}

static int answer_connect(int listener, const struct seccomp_notif *req, struct notify_run *run)
{
	pid_t pid = (pid_t)req->pid;
	int fdnum = (int)req->data.args[0], ulen;
	struct sockaddr_storage addr;
	int sock = call_socket(listener, req, run, &addr, &ulen);
	if (sock < 0)
		return sock;

	int rc = 0, domain = 0, type = 0, listening = 0;
	socklen_t ol = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &ol) < 0) {
		rc = -errno; /* ENOTSOCK: the kernel's answer too */
		goto out;
	}
	ol = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &ol) < 0 ||
	    getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &listening, &(socklen_t){sizeof(int)}) < 0) {
		rc = -EACCES;
		goto out;
	}
	size_t path_off = offsetof(struct sockaddr_un, sun_path);
	if (!unix_path(domain, &addr, ulen)) {
		if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM &&
		    (addr.ss_family == AF_INET || addr.ss_family == AF_INET6) &&
		    (run->tcp_port == 0 || port_of(&addr) != run->tcp_port)) {
			rc = -EACCES;
			if (run->tcp_port)
				note(run, PRIVSEP_DENIAL_TCP, "a TCP connect to port %u: only the proxy's port %u is open",
				     port_of(&addr), run->tcp_port);
			else
				note(run, PRIVSEP_DENIAL_TCP, "a TCP connect to port %u: this profile has no network",
				     port_of(&addr));
			goto out;
		}
		/* Our copy of the run's own socket, in the run's namespace.  Its
		 * connect may wait (a listener's full backlog, a handshake), and
		 * nothing may hold this loop (the timeout, the front's hang-up):
		 * at most CONNECT_WAIT_MS, then the run gets what a send timeout
		 * gives, EAGAIN or, for TCP, EINPROGRESS (socket(7)). */
		struct timeval old, bound = {.tv_usec = CONNECT_WAIT_MS * 1000};
		if (getsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &old, &(socklen_t){sizeof(old)}) < 0 ||
		    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof(bound)) < 0) {
			rc = -EACCES;
			goto out;
		}
		int fl = fcntl(sock, F_GETFL);
		rc = connect(sock, (const struct sockaddr *)&addr, (socklen_t)ulen) < 0 ? -errno : 0;
		(void)setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &old, sizeof(old));
		if ((rc == -EAGAIN || rc == -EINPROGRESS) && fl >= 0 && !(fl & O_NONBLOCK)) /* it waited */
			note(run, PRIVSEP_DENIAL_DAEMON, "a connect waited %d ms for its listener (a full backlog?) and was "
			     "answered %s so that the run's timeout still holds: retry it", CONNECT_WAIT_MS,
			     rc == -EAGAIN ? "EAGAIN" : "EINPROGRESS");
		goto out;
	}
	struct sockaddr_un sun;
	/* The kernel's answers: to an address longer than a sockaddr_un
	 * (unix_validate_addr, checked first), a listening or a connected socket. */
	if ((size_t)ulen > sizeof(sun) || listening) {
		rc = -EINVAL;
		goto out;
	}
	socklen_t pl = sizeof(sun);
	if (getpeername(sock, (struct sockaddr *)&sun, &pl) == 0) {
		rc = -EISCONN;
		goto out;
	}
	/* The actor makes it (connect_run.c), from the caller's cwd. */
	if (run->actor.pid <= 0) {
		rc = no_actor(run, "a connect to a unix socket");
		goto out;
	}
	static struct actor_req q;
	memset(&q, 0, sizeof(q));
	int fl = fcntl(sock, F_GETFL);
	q = (struct actor_req){.id = req->id, .op = ACTOR_CONNECT, .flags = type, .len = (uint64_t)ulen,
	                       .n_fds = 1, .cloexec = target_cloexec(pid, fdnum), .replace = fdnum,
	                       .blocking = fl >= 0 && !(fl & O_NONBLOCK)};
	memcpy(q.a, ((const struct sockaddr_un *)&addr)->sun_path, (size_t)ulen - path_off);
	int cwd = base_fd(pid, AT_FDCWD);
	if (cwd < 0) {
		rc = cwd;
		goto out;
	}
	rc = still_pending(listener, req) ? to_actor(run, &q, &cwd, 1, "a connect") : -EACCES;
	close(cwd);
out:
	close(sock);
	return rc;
}

/* bind(2), SPEC §15.2: a unix socket file is a new directory entry, which
 * the run's actor makes like every other (never named .git, never in a
 * git directory), on the run's own socket.  A TCP bind is refused, the
 * rule Landlock makes on ABI 4, now on every kernel (our bind is not under
 * the run's Landlock domain).  Any other address (UDP on the run's
 * loopback, abstract, autobind) is bound on our copy of the run's socket,
 * in the run's own namespace, as the run would bind it. */
static int answer_bind(int listener, const struct seccomp_notif *req, struct notify_run *run)
{
	struct sockaddr_storage addr;
	int ulen, rc, domain = 0, type = 0, sock = call_socket(listener, req, run, &addr, &ulen);
	if (sock < 0)
		return sock;
	size_t path_off = offsetof(struct sockaddr_un, sun_path);
	const char *path = ((const struct sockaddr_un *)&addr)->sun_path;
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &(socklen_t){sizeof(int)}) < 0 ||
	    getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &(socklen_t){sizeof(int)}) < 0) {
		rc = -errno; /* ENOTSOCK: the kernel's answer too */
		goto out;
	}
	if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM) {
		rc = -EACCES;
		note(run, PRIVSEP_DENIAL_TCP, "a TCP bind: a run may not listen on TCP; a server a test starts is "
		     "reached over a unix socket of the same run");
		goto out;
	}
	if (!unix_path(domain, &addr, ulen) || (size_t)ulen > sizeof(struct sockaddr_un)) {
		/* Ours, on our copy; also the kernel's EINVAL for an address longer
		 * than a sockaddr_un (unix_validate_addr). */
		rc = bind(sock, (const struct sockaddr *)&addr, (socklen_t)ulen) < 0 ? -errno : 0;
		goto out;
	}
	if (run->actor.pid <= 0) {
		rc = no_actor(run, "a bind of a unix socket");
		goto out;
	}
	static struct actor_req q;
	memset(&q, 0, sizeof(q));
	q = (struct actor_req){.id = req->id, .op = ACTOR_BIND, .n_fds = 2, .replace = -1};
	memcpy(q.a, path, strnlen(path, (size_t)ulen - path_off)); /* q.a stays terminated */
	unsigned mask = 022;
	(void)read_umask((pid_t)req->pid, &mask);
	q.umask = mask;
	int fds[2] = {base_fd((pid_t)req->pid, AT_FDCWD), sock};
	if (fds[0] < 0) {
		rc = fds[0];
		goto out;
	}
	rc = still_pending(listener, req) ? to_actor(run, &q, fds, 2, "a bind") : -EACCES;
	close(fds[0]);
out:
	close(sock);
	return rc;
}

/* ---- writes that could touch a .git: handed to the actor (actor.c) ---- */

/* A NUL-terminated string of the run, read page by page (it may end just
 * before an unmapped page).  0, -EFAULT, or -ENAMETOOLONG. */
static int read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;
	while (got < size) {
		size_t page = 4096 - ((addr + got) & 4095);
		size_t want = page < size - got ? page : size - got;
		struct iovec local = {.iov_base = buf + got, .iov_len = want};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)(addr + got), .iov_len = want};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n < 0 && errno == EPERM)
			return -EPERM; /* an undumpable process, or Yama */
		if (n <= 0)
			return -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* "NSpid:\t4321\t7" in /proc/PID/status: the last is the pid in the run's
 * own namespace; the same for NStgid. */
static long ns_id(pid_t pid, const char *key)
{
	char buf[PROCSTATUS_MAX];
	const char *p = procstatus_read(pid, buf, sizeof(buf)) == 0 ? procstatus_find(buf, key) : NULL;
	if (!p)
		return -1;
	long last = -1;
	while (*p && *p != '\n') {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		last = v;
		p = end;
	}
	return last;
}

/* /proc/self, /proc/thread-self and /dev/std{in,out,err}, /dev/fd: the
 * actor is not the caller, so they are spelled with the caller's pid in
 * the run's namespace. */
static int rewrite_self(pid_t pid, char *path, size_t size)
{
	static const struct {
		const char *from;
		const char *to; /* after /proc/TGID */
	} map[] = {{"/proc/self/", "/"}, {"/proc/self", ""}, {"/dev/stdin", "/fd/0"}, {"/dev/stdout", "/fd/1"},
	           {"/dev/stderr", "/fd/2"}, {"/dev/fd/", "/fd/"}};
	char out[PATH_MAX];
	if (strncmp(path, "/proc/thread-self", 17) == 0 && (path[17] == '/' || path[17] == '\0')) {
		long tgid = ns_id(pid, "NStgid"), tid = ns_id(pid, "NSpid");
		if (tgid < 0 || tid < 0)
			return -ENOENT;
		if (snprintf(out, sizeof(out), "/proc/%ld/task/%ld%s", tgid, tid, path + 17) >= (int)sizeof(out))
			return -ENAMETOOLONG;
		snprintf(path, size, "%s", out);
		return 0;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t n = strlen(map[i].from);
		bool whole = map[i].from[n - 1] != '/';
		if (strncmp(path, map[i].from, n) != 0 || (whole && path[n] != '\0'))
			continue;
		long tgid = ns_id(pid, "NStgid");
		if (tgid < 0)
			return -ENOENT;
		if (snprintf(out, sizeof(out), "/proc/%ld%s%s", tgid, map[i].to, path + n) >= (int)sizeof(out))
			return -ENAMETOOLONG;
		snprintf(path, size, "%s", out);
		return 0;
	}
	return 0;
}

/* The base a path of the run is resolved from: its cwd, or its dirfd. */
static int base_fd(pid_t pid, int dirfd)
{
	if (dirfd == AT_FDCWD) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
		int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -ENOENT : fd;
	}
	int fd = run_fd(pid, dirfd);
	return fd >= 0 ? fd : -(errno == EPERM ? EACCES : EBADF);
}

/*
 * Opens for writing of the sandbox's own devices, answered here without
 * the actor's round trip (about 0.3 ms, and bash makes one at every start
 * for /dev/tty; `2>/dev/null` is in many an agent's command).  root/mount.c
 * builds /dev from nothing but binds of the host's null, zero, full,
 * random, urandom and tty on a read-only tmpfs, and Landlock grants writes
 * there to every profile (sandbox_run.c), so the kernel's answer to these
 * paths is known:
 *   - /dev/tty is ENXIO, with any flags: the command starts a session of
 *     its own (setsid, sandbox_run.c) and the view has no pty to make a
 *     controlling terminal of, so no process of the run ever has one (the
 *     kernel would answer O_CREAT|O_EXCL, O_DIRECTORY and O_PATH before
 *     the device's ENXIO: EEXIST, ENOTDIR, a descriptor that opens
 *     nothing; ENXIO refuses as well).  Other names for it (a symlink,
 *     /proc/self/fd/N) reach the actor, which has no controlling terminal
 *     either (asrun/actor_main.c), so they are ENXIO too;
 *   - /dev/null, /dev/zero and /dev/full are the host's devices, which we
 *     open ourselves with the call's access mode and hand over.
 * This is safe against a thread that rewrites the path after we read it,
 * because nothing looks at the path again: the answer is our own open of
 * a fixed name, or a refusal.  Flags with other effects (O_EXCL,
 * O_DIRECTORY, O_PATH, O_TMPFILE, O_SYNC, O_NOATIME, ...) and every other
 * path go to the actor.  1 when answered (resp filled), 0 when not ours.
 */
#define KERNEL_O_LARGEFILE 0100000 /* x86-64's kernel value; glibc's O_LARGEFILE is 0 there */
static int answer_device(int listener, const struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full"};
	const int plain = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW |
	                  KERNEL_O_LARGEFILE;
	uint64_t addr = req->data.nr == SYS_openat ? req->data.args[1] : req->data.args[0];
	int flags = (int)(req->data.nr == SYS_openat ? req->data.args[2] : req->data.args[1]);
	char path[16];
	if ((req->data.nr != SYS_open && req->data.nr != SYS_openat) ||
	    read_string((pid_t)req->pid, addr, path, sizeof(path)) < 0)
		return 0;
	if (strcmp(path, "/dev/tty") == 0) { /* whatever the flags */
		resp->error = -ENXIO;
		return 1;
	}
	if ((flags & ~plain) || (flags & O_ACCMODE) == O_ACCMODE)
		return 0;
	size_t i = 0;
	while (i < sizeof(devices) / sizeof(devices[0]) && strcmp(path, devices[i]) != 0)
		i++;
	if (i == sizeof(devices) / sizeof(devices[0]))
		return 0;
	int fd = open(devices[i], (flags & (O_ACCMODE | O_APPEND | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the actor tries, and says why if it cannot */
	struct seccomp_notif_addfd add = {.id = req->id, .srcfd = (uint32_t)fd,
	                                  .newfd_flags = (uint32_t)(flags & O_CLOEXEC)};
	int newfd = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(fd);
	if (newfd < 0)
		resp->error = errno == EMFILE ? -EMFILE : -EACCES;
	else
		resp->val = newfd;
	return 1;
}

/* Build the actor's request from the call; 1 when it was sent (the answer
 * comes later), else -errno for the caller at once. */
static int hand_to_actor(int listener, const struct seccomp_notif *req, struct notify_run *run)
{
	static struct actor_req q; /* two paths: too big for the stack we like */
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	int nr = req->data.nr;
	int dirs[2] = {AT_FDCWD, AT_FDCWD}; /* the bases of q.a and q.b */
	uint64_t pa = 0, pb = 0;            /* the paths */
	unsigned npaths = 1;

	memset(&q, 0, sizeof(q));
	q.id = req->id;
	q.replace = -1;
	switch (nr) {
	case SYS_open: q.op = ACTOR_OPEN; pa = a[0]; q.flags = (int32_t)a[1]; q.mode = (uint32_t)a[2]; break;
	case SYS_creat: q.op = ACTOR_OPEN; pa = a[0]; q.flags = O_CREAT | O_WRONLY | O_TRUNC; q.mode = (uint32_t)a[1]; break;
	case SYS_openat: q.op = ACTOR_OPEN; dirs[0] = (int)a[0]; pa = a[1]; q.flags = (int32_t)a[2]; q.mode = (uint32_t)a[3]; break;
	case SYS_mkdir: q.op = ACTOR_MKDIR; pa = a[0]; q.mode = (uint32_t)a[1]; break;
	case SYS_mkdirat: q.op = ACTOR_MKDIR; dirs[0] = (int)a[0]; pa = a[1]; q.mode = (uint32_t)a[2]; break;
	case SYS_mknod: q.op = ACTOR_MKNOD; pa = a[0]; q.mode = (uint32_t)a[1]; q.len = a[2]; break;
	case SYS_mknodat: q.op = ACTOR_MKNOD; dirs[0] = (int)a[0]; pa = a[1]; q.mode = (uint32_t)a[2]; q.len = a[3]; break;
	case SYS_symlink: q.op = ACTOR_SYMLINK; pa = a[0]; pb = a[1]; npaths = 2; break;
	case SYS_symlinkat: q.op = ACTOR_SYMLINK; pa = a[0]; dirs[1] = (int)a[1]; pb = a[2]; npaths = 2; break;
	case SYS_link: q.op = ACTOR_LINK; pa = a[0]; pb = a[1]; npaths = 2; break;
	case SYS_linkat:
		if ((int)a[4] & AT_EMPTY_PATH)
			return -ENOENT; /* needs CAP_DAC_READ_SEARCH, which no run has */
		q.op = ACTOR_LINK; dirs[0] = (int)a[0]; pa = a[1]; dirs[1] = (int)a[2]; pb = a[3];
		q.flags = (int32_t)a[4] & AT_SYMLINK_FOLLOW; npaths = 2; break;
	case SYS_rename: q.op = ACTOR_RENAME; pa = a[0]; pb = a[1]; npaths = 2; break;
	case SYS_renameat: q.op = ACTOR_RENAME; dirs[0] = (int)a[0]; pa = a[1]; dirs[1] = (int)a[2]; pb = a[3]; npaths = 2; break;
	case SYS_renameat2:
		q.op = ACTOR_RENAME; dirs[0] = (int)a[0]; pa = a[1]; dirs[1] = (int)a[2]; pb = a[3];
		q.flags = (int32_t)a[4]; npaths = 2; break;
	case SYS_unlink: q.op = ACTOR_UNLINK; pa = a[0]; break;
	case SYS_unlinkat: q.op = ACTOR_UNLINK; dirs[0] = (int)a[0]; pa = a[1]; q.flags = (int32_t)a[2] & AT_REMOVEDIR; break;
	case SYS_rmdir: q.op = ACTOR_UNLINK; pa = a[0]; q.flags = AT_REMOVEDIR; break;
	case SYS_truncate: q.op = ACTOR_TRUNCATE; pa = a[0]; q.len = a[1]; break;
	case SYS_chmod: q.op = ACTOR_CHMOD; pa = a[0]; q.mode = (uint32_t)a[1]; break;
	case SYS_fchmodat: q.op = ACTOR_CHMOD; dirs[0] = (int)a[0]; pa = a[1]; q.mode = (uint32_t)a[2]; break;
	case NR_FCHMODAT2:
		q.op = ACTOR_CHMOD; dirs[0] = (int)a[0]; pa = a[1]; q.mode = (uint32_t)a[2];
		q.flags = (int32_t)a[3] & AT_SYMLINK_NOFOLLOW; break;
	case SYS_fchmod: q.op = ACTOR_FCHMOD; dirs[0] = (int)a[0]; npaths = 0; q.mode = (uint32_t)a[1]; break;
	default: return -EPERM;
	}
	q.cloexec = q.op == ACTOR_OPEN && (q.flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	int rc;
	if ((npaths >= 1 && (rc = read_string(pid, pa, q.a, sizeof(q.a))) < 0) ||
	    (npaths == 2 && (rc = read_string(pid, pb, q.b, sizeof(q.b))) < 0)) {
		if (rc != -EPERM)
			return rc;
		/* Fail closed, and say why. */
		note(run, PRIVSEP_DENIAL_DAEMON, "a write: the daemon cannot read the run's call (%s)%s", strerror(EPERM),
		     NO_PTRACE_HINT);
		return -EACCES;
	}
	if (q.op != ACTOR_SYMLINK && (rc = rewrite_self(pid, q.a, sizeof(q.a))) < 0)
		return rc;
	if (npaths == 2 && (rc = rewrite_self(pid, q.b, sizeof(q.b))) < 0)
		return rc;
	unsigned mask = 022;
	(void)read_umask(pid, &mask);
	q.umask = mask;

	/* The bases: only those a relative path (or fchmod) needs. */
	int fds[2] = {-1, -1};
	unsigned nfds = 0;
	bool need0 = q.op == ACTOR_FCHMOD || (q.op != ACTOR_SYMLINK && q.a[0] != '/');
	bool need1 = npaths == 2 && q.b[0] != '/';
	if (q.op == ACTOR_FCHMOD) {
		fds[0] = run_fd(pid, dirs[0]);
		if (fds[0] < 0)
			return -EBADF;
		nfds = 1;
	} else if (need0 || need1) {
		fds[0] = need0 ? base_fd(pid, dirs[0]) : base_fd(pid, AT_FDCWD);
		if (fds[0] < 0)
			return fds[0];
		nfds = 1;
		if (npaths == 2) {
			fds[1] = need1 ? base_fd(pid, dirs[1]) : base_fd(pid, AT_FDCWD);
			if (fds[1] < 0) {
				close(fds[0]);
				return fds[1];
			}
			nfds = 2;
		}
	}
	q.n_fds = nfds;
	rc = !still_pending(listener, req) ? -EACCES
	     : run->actor.pid <= 0          ? no_actor(run, "a write")
	                                    : to_actor(run, &q, fds, nfds, "a write");
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	return rc;
}

int notify_actor_answer(int listener, struct notify_run *run)
{
	struct actor_resp r;
	int fd = -1;
	ssize_t got = privsep_recv(run->actor.sock, &r, sizeof(r), &fd, 1);
	if (got <= 0)
		return -1;
	if (got != (ssize_t)sizeof(r)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* The actor has closed its copy only once ACTOR_CLOSED came. */
	if (fd >= 0) {
		char closed = 0;
		struct pollfd pc = {.fd = run->actor.sock, .events = POLLIN};
		if (poll(&pc, 1, ACTOR_CLOSED_WAIT_MS) != 1 || recv(run->actor.sock, &closed, 1, 0) != 1 ||
		    closed != ACTOR_CLOSED) {
			close(fd);
			return -1; /* as if the actor ended: the run is stopped (watch.c) */
		}
	}
	/* Answered in full: the actor closed what it opened and waits for the
	 * next request. */
	if (run->actor_busy > 0)
		run->actor_busy--;
	r.what[sizeof(r.what) - 1] = '\0';
	static const uint32_t kinds[] = {[ACTOR_DENIED_GIT] = PRIVSEP_DENIAL_GIT, [ACTOR_DENIED_MODE] = PRIVSEP_DENIAL_MODE,
	                                 [ACTOR_DENIED_UNIX] = PRIVSEP_DENIAL_UNIX,
	                                 [ACTOR_DENIED_DAEMON] = PRIVSEP_DENIAL_DAEMON,
	                                 [ACTOR_DENIED_GIT_RUNS] = PRIVSEP_DENIAL_GIT_RUNS,
	                                 [ACTOR_DENIED_AGENT] = PRIVSEP_DENIAL_AGENT};
	if (r.denied > 0 && (size_t)r.denied < sizeof(kinds) / sizeof(kinds[0]))
		note(run, kinds[r.denied], "%s", r.what);
	struct seccomp_notif_resp resp;
	memset(&resp, 0, sizeof(resp));
	resp.id = r.id;
	if (fd >= 0 && r.err == 0 && r.replace >= 0) {
		/* A connect: the new socket takes the place of the run's. */
		if (r.blocking)
			(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		struct seccomp_notif_addfd a = {.id = r.id, .flags = SECCOMP_ADDFD_FLAG_SETFD, .srcfd = (uint32_t)fd,
		                                .newfd = (uint32_t)r.replace, .newfd_flags = r.cloexec & O_CLOEXEC};
		resp.error = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 ? -EACCES : 0;
	} else if (fd >= 0 && r.err == 0) {
		struct seccomp_notif_addfd add = {.id = r.id, .flags = 0, .srcfd = (uint32_t)fd, .newfd = 0,
		                                  .newfd_flags = r.cloexec & O_CLOEXEC};
		int newfd = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		if (newfd < 0)
			resp.error = errno == EMFILE ? -EMFILE : -EACCES;
		else
			resp.val = newfd;
	} else {
		resp.error = r.err ? -r.err : 0;
	}
	if (fd >= 0)
		close(fd);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT && errno != EINTR)
		return 0; /* the caller died meanwhile: nothing to tell */
	return 0;
}

/* An actor that answered every request it was given (actor_busy 0) waits
 * in recv for the next one (asrun/actor_serve.c): what it opened for a
 * request it closed before the answer, or before ACTOR_CLOSED, which
 * notify_actor_answer waited for.  Requests come only from us, and we send
 * none after the run's end, so it is left there and killed after the reply
 * (notify_reap): its exit, the teardown of a copy of the supervisor's memory
 * (about 200 microseconds), then no longer runs beside the front's work on
 * the reply.  One still at work may be in the middle of a write of the
 * run's: it is killed and waited for, so that the write lands before the
 * exit record. */
void notify_stop(struct notify_run *run)
{
	if (run->actor.pid > 0 && run->actor_busy > 0)
		actor_stop(&run->actor);
}

void notify_reap(struct notify_run *run)
{
	actor_stop(&run->actor);
}

int notify_answer(int listener, struct notify_run *run)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	memset(&req, 0, sizeof(req));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -1;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	int rc;
	/* The filter sends nothing else; anything else is refused. */
	if (req.data.nr == SYS_umask)
		rc = answer_umask(listener, &req, &resp);
	else if (req.data.nr == SYS_connect)
		rc = answer_connect(listener, &req, run);
	else if (req.data.nr == SYS_bind)
		rc = answer_bind(listener, &req, run);
	else if (answer_device(listener, &req, &resp))
		rc = 0;
	else
		rc = hand_to_actor(listener, &req, run);
	if (rc == 1)
		return 0; /* answered when the actor is done */
	if (rc < 0)
		resp.error = rc;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT && errno != EINTR)
		return -1;
	return 0;
}
