/*
 * proxy.h - the egress proxy of `proxy` profiles (SPEC §8), one per run.
 *
 * Runs in the front (unprivileged, seccomp: no fork/exec, no netlink).  The
 * supervisor accepts each TCP connection on 127.0.0.1:PORT inside the run's
 * network namespace and hands the accepted fd to the front, which calls
 * proxy_serve_fd() on it.  The proxy speaks HTTP/1.x proxy on that fd:
 *
 *   CONNECT host:port HTTP/1.1      -> dial, "200 Connection established", relay
 *   GET http://host[:port]/p HTTP/1.1 -> dial, forward as "GET /p" with
 *                                       Host and "Connection: close", relay
 *
 * Decision, in this order: parse (400), canonicalise the host and match it
 * against the profile's allowlist (403), resolve once with getaddrinfo(3)
 * (no AI_ADDRCONFIG: that needs netlink), refuse the request when any
 * resolved address is of a class the match does not permit or is the
 * daemon's own port (403), dial exactly those checked sockaddrs (502 when
 * none connects), relay until EOF, the idle timeout or the byte cap.  Every
 * decision is one audit line:
 *   {"event":"proxy","run_id","method","host","port","decision":"allow"|"deny"|"error",
 *    "status":200|400|403|408|502|503,"reason"[,"address"]}
 * and every relayed connection ends with
 *   {"event":"proxy_end","run_id","host","port","bytes_up","bytes_down","reason"}.
 * A run's first 1,024 lines are written, then 4 a second; the rest are
 * counted, and the proxy's end writes
 *   {"event":"proxy_suppressed","run_id","profile","lines","allowed","refused",
 *    "ended","bytes_up","bytes_down","hosts":[{"host","port","connections",
 *    "bytes_up","bytes_down"}...][,"hosts_more"]}.
 *
 * Trust: everything read from client_fd is hostile.  The allowlist is
 * operator policy (profile.c checked its grammar).
 *
 * Ownership: proxy_new() copies the profile's name and allowlist and the
 * run id; `audit_fd` is borrowed and must stay open as long as the front
 * (a thread may still write after proxy_free() returns).  proxy_serve_fd()
 * takes client_fd on every path.
 * Threads: one detached thread per connection, at most lim->max_conns at a
 * time; proxy_free() wakes them all and does not wait: the last one to end
 * frees the proxy.  proxy_serve_fd() and proxy_free()
 * must be called from one thread (the run's owner); the per-connection
 * threads touch their own slot and the audit fd, and under the proxy's
 * mutex the shared counts (running, the denials, the audit budget).
 */
#ifndef SHARNESS_PROXY_H
#define SHARNESS_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy_host.h"
#include "proxy_request.h"

struct profile;
struct proxy;

#define PROXY_DEFAULT_CONNS 32
#define PROXY_DEFAULT_BYTES (1024ull * 1024 * 1024) /* per connection, both ways together */
#define PROXY_DEFAULT_IDLE_MS 60000
#define PROXY_DEFAULT_HEAD_MS 10000
#define PROXY_DEFAULT_CONNECT_MS 10000
#define PROXY_HEAD_MAX 16384 /* request line + headers */

/* Zero in any field means its default. */
struct proxy_limits {
	unsigned max_conns;          /* concurrent connections of this run */
	uint64_t max_bytes;          /* relayed per connection, both directions */
	unsigned idle_timeout_ms;    /* no byte either way for this long: close */
	unsigned head_timeout_ms;    /* the request head must arrive within this */
	unsigned connect_timeout_ms; /* per dial, all addresses together */
	/* The daemon's own API listener (config listen_host/listen_port): never
	 * dialed on a loopback, private or that exact address. 0 = none. */
	unsigned daemon_port;
	const char *daemon_host;     /* numeric, e.g. "127.0.0.1"; NULL = none; copied */
};

/*
 * A proxy for one run of profile `p` (p->network must be PROFILE_NETWORK_PROXY).
 * `lim` may be NULL (all defaults).  `audit_fd` < 0 disables audit lines.
 * Returns NULL with `err` set (one sentence).
 */

struct proxy *proxy_new(const struct profile *p, const struct proxy_limits *lim, int audit_fd,
                        const char *run_id, char *err, size_t errlen);

/*
 * Serve one accepted client connection in a new thread.  Always takes
 * ownership of client_fd (it is closed on every path).  Returns 0 when a
 * thread serves it; -1 with errno EAGAIN when the run already has
 * max_conns connections (the client got a 503 line and was closed),
 * ESHUTDOWN after proxy_free() began, or pthread_create's error.
 */
int proxy_serve_fd(struct proxy *px, int client_fd);

/* The first distinct refusals of the policy (403s: hosts off the allowlist,
 * addresses it may not dial), at most `max`, for the reply's `denials`. */
#define PROXY_DENIALS_MAX 4
/* A refusal's whole sentence (the longest `reason` the proxy writes): the
 * reply's copy is filtered before it is cut, so a secret in a host name is
 * never cut in two (review s38 M1). */
#define PROXY_DENIAL_DETAIL 640
size_t proxy_denials(struct proxy *px, char (*out)[PROXY_DENIAL_DETAIL], size_t max);

/* Connections being served now (for tests and /v0 status). */
unsigned proxy_active(struct proxy *px);

/*
 * Stop: wake every connection thread (each closes its sockets and ends; the
 * last one frees the proxy, or this call when none runs).  Never waits: a
 * thread inside getaddrinfo(3) finishes its lookup first, then ends without
 * dialing.  NULL is a no-op.
 */
void proxy_free(struct proxy *px);

#endif
