/*
 * connguard.h - a deadline in all for connections that have not shown a
 * verified certificate yet.
 *
 * libmicrohttpd closes a connection only after it has been *silent* for its
 * timeout, so a stranger that trickles a byte every few seconds through the
 * TLS handshake or its headers would keep a slot of the connection limit
 * forever.  Every connection is registered when it starts; one that has not
 * been verified within the deadline has its socket shut down, and
 * libmicrohttpd then sees the end and cleans up.  The deadline is one timer
 * of the front's loop, for the oldest unverified connection (all have the
 * same span, so the list is in deadline order): nothing wakes while no
 * deadline is due.
 *
 * Nor may strangers fill the connection limit: at the limit libmicrohttpd
 * stops accepting, and the kernel's accept queue fills with more of theirs,
 * so a process with no certificate that keeps a few hundred idle
 * connections open kept every client out (review s37 front 2).  At most
 * `max_unverified` connections (below the limit) wait for a verified
 * certificate; one more cuts the oldest of the account that holds the most
 * of them (the peer's uid, peeruid.h; a range of subordinate uids counts as
 * one account), so a flood cuts its own connections, not another account's
 * client, which holds one or a few for the milliseconds of its handshake.
 * Within the newcomer's own account (all of them, when no uid is known)
 * connections younger than two seconds are spared and the newcomer is cut
 * instead (review s37 fixes M3).
 *
 * Everything runs on the loop's thread.  libmicrohttpd notifies a
 * connection's end (connguard_remove) before it closes the socket, so a cut
 * never shuts down a descriptor that was reused.
 */
#ifndef SHARNESS_CONNGUARD_H
#define SHARNESS_CONNGUARD_H

#include <stdbool.h>

#include "loop.h"

struct connguard;
struct connguard_entry;

/* `on_cut` (may be NULL) hears how many connections were cut, and whether
 * for the cap (`crowded`) or the deadline. */
struct connguard *connguard_new(struct loop *l, unsigned deadline_s, unsigned max_unverified,
                                void (*on_cut)(unsigned n, bool crowded));
void connguard_free(struct connguard *g);

/* A new connection on socket `fd` from a process of `uid` (-1: not known;
 * it may be cut at once, for the cap);
 * NULL when out of memory (the connection then only has libmicrohttpd's
 * idle timeout). */
struct connguard_entry *connguard_add(struct connguard *g, int fd, long uid);
/* Its first request showed a verified certificate: no deadline any more. */
void connguard_verified(struct connguard *g, struct connguard_entry *e);
/* The connection ended (before its socket is closed).  NULL is a no-op. */
void connguard_remove(struct connguard *g, struct connguard_entry *e);

#endif
