/*
 * privsep.c - sending and receiving the fixed messages of privsep.h with
 * SCM_RIGHTS.  SOCK_SEQPACKET keeps message boundaries, so a short or long
 * message is detected (MSG_TRUNC) instead of being reassembled.
 */
#include "privsep.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PRIVSEP_FDS_MAX 4

void privsep_header_init(struct privsep_header *h, enum privsep_type type)
{
	h->magic = PRIVSEP_MAGIC;
	h->version = PRIVSEP_VERSION;
	h->type = (uint16_t)type;
}

int privsep_header_check(const struct privsep_header *h, enum privsep_type type)
{
	if (h->magic != PRIVSEP_MAGIC || h->version != PRIVSEP_VERSION || h->type != type) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static int send_flags(int sock, const void *msg, size_t len, const int *fds, size_t nfds, int flags);

int privsep_send(int sock, const void *msg, size_t len, const int *fds, size_t nfds)
{
	return send_flags(sock, msg, len, fds, nfds, 0);
}

int privsep_send_nowait(int sock, const void *msg, size_t len, const int *fds, size_t nfds)
{
	return send_flags(sock, msg, len, fds, nfds, MSG_DONTWAIT);
}

static int send_flags(int sock, const void *msg, size_t len, const int *fds, size_t nfds, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * PRIVSEP_FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	int sendfds[PRIVSEP_FDS_MAX];
	size_t n = 0;

	for (size_t i = 0; i < nfds && i < PRIVSEP_FDS_MAX; i++)
		if (fds[i] >= 0)
			sendfds[n++] = fds[i];
	if (n > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), sendfds, sizeof(int) * n);
	}
	ssize_t r;
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if ((size_t)r != len) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

ssize_t privsep_recv(int sock, void *msg, size_t len, int *fds, size_t maxfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * PRIVSEP_FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                    .msg_controllen = sizeof(u.buf)};
	size_t got = 0;

	for (size_t i = 0; i < maxfds; i++)
		fds[i] = -1;
	ssize_t r;
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	/* Collect fds first so that every one is either handed out or closed. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *p = (int *)(void *)CMSG_DATA(c);
		for (size_t i = 0; i < n; i++) {
			if (got < maxfds)
				fds[got++] = p[i];
			else
				close(p[i]);
		}
	}
	if (r == 0 && got == 0)
		return 0;
	/* An empty datagram may carry fds: not the end of the stream, which
	 * would leave them open in the caller, but a message of the wrong size. */
	if (r == 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (size_t i = 0; i < maxfds; i++)
			if (fds[i] >= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
		errno = EPROTO;
		return -1;
	}
	return r;
}

int privsep_send_error(int chan, enum privsep_error error, const char *fmt, ...)
{
	struct privsep_exit ex;
	va_list ap;

	memset(&ex, 0, sizeof(ex));
	privsep_header_init(&ex.h, PRIVSEP_EXIT);
	ex.error = error;
	ex.exit_code = -1;
	va_start(ap, fmt);
	vsnprintf(ex.message, sizeof(ex.message), fmt, ap);
	va_end(ap);
	/* The channel came from the front: a full one must not block us. */
	return privsep_send_nowait(chan, &ex, sizeof(ex), NULL, 0);
}
