/*
 * connect_run.c - a run's connect(2) to a unix socket, made as the run:
 * asrun/notify.c says why a connect is made for the run at all, and hands
 * it to the run's file actor (actor_serve.c), which root/actor.c has put
 * into the run's network namespace and root and dropped to the run's uid;
 * the actor enters the caller's working directory before this runs.
 *
 * Two tests, so that a refusal is silent: the socket the path names must
 * be listening in the run's own network namespace (where only the run's
 * processes make sockets), or no connect is made at all - the person's
 * server or another run never sees one.  The path could be swapped between
 * that look and the connect (this run's renames are made one at a time by
 * its actor, but another run in the same workspace has its own), so the
 * connected peer's uid is checked too, and a stranger's socket is closed
 * before anything was sent: at most it sees a connection that ends at once,
 * with no byte.
 *
 * Trust: runs as the run; the address was copied out of the run's memory.
 */
#include "connect_run.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "privsep.h"

/* Is a socket bound at (dev, ino) listening in our network namespace?
 * sock_diag(7) lists the namespace's unix sockets with the inode of the
 * path each is bound to (UNIX_DIAG_VFS, kernel dev_t encoding).  1 yes,
 * 0 no, -1 the list could not be read. */
static int listening_here(dev_t dev, ino_t ino)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} q = {.nlh = {.nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	       .req = {.sdiag_family = AF_UNIX, .udiag_states = 1U << TCP_LISTEN, .udiag_show = UDIAG_SHOW_VFS}};
	int found = -1;
	if (send(nl, &q, sizeof(q), 0) != (ssize_t)sizeof(q))
		goto out;
	static char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		if (n <= 0)
			goto out;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				found = found == 1 ? 1 : 0;
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				goto out;
			struct unix_diag_msg *m = NLMSG_DATA(h);
			size_t alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				struct unix_diag_vfs v;
				if (a->rta_type != UNIX_DIAG_VFS || RTA_PAYLOAD(a) < sizeof(v))
					continue;
				memcpy(&v, RTA_DATA(a), sizeof(v));
				if (v.udiag_vfs_ino == ino && major(dev) == v.udiag_vfs_dev >> 20 &&
				    minor(dev) == (v.udiag_vfs_dev & 0xfffff))
					found = 1;
			}
		}
	}
out:
	close(nl);
	return found;
}

int connect_run(uid_t uid, int type, const struct sockaddr_un *addr, socklen_t len, struct connect_reply *rep)
{
	int err = 0;
	*rep = (struct connect_reply){0};
	char path[sizeof(addr->sun_path) + 1];
	size_t pathlen = (size_t)len - offsetof(struct sockaddr_un, sun_path);
	memcpy(path, addr->sun_path, pathlen);
	path[pathlen] = '\0'; /* the kernel's reading of an unterminated sun_path */
	struct stat st;
	int s = -1, here = 0;
	if (stat(path, &st) < 0)
		err = errno;
	else if (!S_ISSOCK(st.st_mode))
		err = ECONNREFUSED;
	else if ((here = listening_here(st.st_dev, st.st_ino)) < 0) {
		rep->internal = errno ? errno : EIO;
		rep->step = "list the run's sockets (sock_diag: AF_NETLINK)";
	} else if (here == 0)
		err = EACCES; /* not the run's: nothing was sent its way */
	else if ((s = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		err = errno;
	else if (connect(s, (const struct sockaddr *)addr, len) < 0)
		err = errno == EINPROGRESS ? EAGAIN : errno;
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	if (!err && (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &plen) < 0 || plen != sizeof(peer) ||
	             peer.uid != uid))
		err = EACCES; /* someone else's socket: never handed over */

	rep->err = rep->internal ? EACCES : err;
	if (rep->err && s >= 0) {
		close(s);
		s = -1;
	}
	return s;
}
