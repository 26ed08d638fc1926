/*
 * peeruid.c - see peeruid.h.
 */
#include "peeruid.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int peeruid_open(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

long peeruid_of(int diag, int fd)
{
	struct sockaddr_storage local = {0}, peer = {0};
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	if (diag < 0 || getsockname(fd, (struct sockaddr *)&local, &llen) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen) < 0 || local.ss_family != peer.ss_family)
		return -1;
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
	    .nlh = {.nlmsg_len = sizeof(req),
		    .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		    .nlmsg_flags = NLM_F_REQUEST},
	    .r = {.sdiag_family = (unsigned char)local.ss_family,
		  .sdiag_protocol = IPPROTO_TCP,
		  .idiag_states = ~0u},
	};
	/* The peer's socket: from its address to ours. */
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (local.ss_family == AF_INET) {
		const struct sockaddr_in *l = (const void *)&local, *p = (const void *)&peer;
		req.r.id.idiag_sport = p->sin_port;
		req.r.id.idiag_dport = l->sin_port;
		memcpy(req.r.id.idiag_src, &p->sin_addr, sizeof(p->sin_addr));
		memcpy(req.r.id.idiag_dst, &l->sin_addr, sizeof(l->sin_addr));
	} else if (local.ss_family == AF_INET6) {
		const struct sockaddr_in6 *l = (const void *)&local, *p = (const void *)&peer;
		req.r.id.idiag_sport = p->sin6_port;
		req.r.id.idiag_dport = l->sin6_port;
		memcpy(req.r.id.idiag_src, &p->sin6_addr, sizeof(p->sin6_addr));
		memcpy(req.r.id.idiag_dst, &l->sin6_addr, sizeof(l->sin6_addr));
	} else
		return -1;
	char stale[1024];
	while (recv(diag, stale, sizeof(stale), MSG_DONTWAIT) > 0) /* an answer never read */
		;
	if (send(diag, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return -1;
	/* The kernel answers within the send: one message, the socket or an
	 * error. */
	union {
		struct nlmsghdr h;
		char buf[1024];
	} resp;
	ssize_t n = recv(diag, &resp, sizeof(resp), MSG_DONTWAIT);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) ||
	    resp.h.nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return -1;
	/* The answer to this question, not a late one to an earlier. */
	const struct inet_diag_msg *m = NLMSG_DATA(&resp.h);
	if (m->id.idiag_sport != req.r.id.idiag_sport || m->id.idiag_dport != req.r.id.idiag_dport)
		return -1;
	return (long)m->idiag_uid;
}
