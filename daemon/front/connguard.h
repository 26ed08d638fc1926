/*
 * connguard.h - a deadline in all for connections that have not shown a
 * verified certificate yet.
 *
 * libmicrohttpd closes a connection only after it has been *silent* for its
 * timeout, so a stranger that trickles a byte every few seconds through the
 * TLS handshake or its headers would keep a slot of the connection limit
 * forever.  Every connection is registered when it starts; one that has not
 * been verified within the deadline has its socket shut down by the next
 * sweep, and libmicrohttpd's own thread then sees the end and cleans up.
 *
 * Threads: add/verified/remove run on libmicrohttpd's threads, the sweep on
 * the front's main loop; one mutex covers the list.  libmicrohttpd notifies
 * a connection's end (connguard_remove) before it closes the socket, so a
 * sweep never shuts down a descriptor that was reused.
 */
#ifndef SHARNESS_CONNGUARD_H
#define SHARNESS_CONNGUARD_H

#include <stdbool.h>

struct connguard;
struct connguard_entry;

struct connguard *connguard_new(unsigned deadline_s);
void connguard_free(struct connguard *g);

/* A new connection on socket `fd`; NULL when out of memory (the connection
 * then only has libmicrohttpd's idle timeout). */
struct connguard_entry *connguard_add(struct connguard *g, int fd);
/* Its first request showed a verified certificate: no deadline any more. */
void connguard_verified(struct connguard_entry *e);
/* The connection ended (before its socket is closed).  NULL is a no-op. */
void connguard_remove(struct connguard *g, struct connguard_entry *e);

/* Shut down every unverified connection past the deadline; returns how
 * many were cut. */
unsigned connguard_sweep(struct connguard *g);

#endif
