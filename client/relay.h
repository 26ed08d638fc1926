/*
 * relay.h - a process per user and identity that keeps mutual-TLS
 * connections to sharnessd ready, so that a client started fresh for every
 * command (an agent's hook) pays neither OpenSSL's start-up nor a handshake
 * (SPEC §15.5).  Like ssh's ControlMaster.
 *
 * The first client whose own request worked starts it (a double fork and
 * an exec of this same binary as `sharness-client relay`, by absolute
 * paths, from "/").  Later clients of the same identity connect to its
 * socket; it hands each one a connection it made with the same code and
 * the same checks (tls.h), then copies bytes both ways until either end
 * closes.  It never reads or changes what passes, and executes nothing.
 *
 *   socket  NAME.relay in the ticket directory (ticket.h: ours, 0700),
 *           NAME the first 32 hex digits of the ticket's name: one relay
 *           per URL, CA, certificate and key, and a changed file is
 *           another relay; made 0600, bound by the holder of NAME.lock
 *   peers   each end checks that the other's uid (SO_PEERCRED) is its own
 *           effective uid: a sandboxed run, of a uid of its own, is
 *           refused even where it could reach the path
 *   ready   the relay writes "+" once the client's connection is up; the
 *           client sends its request only then, and until then falls back
 *           to a connection of its own (nothing has reached the daemon, so
 *           nothing runs twice); after "+" a failure is the request's, as
 *           on a connection of its own
 *   warm    while a client came in the last RELAY_WARM_S seconds, one
 *           connection is kept ready, its handshake done; it is replaced
 *           after 3 s unused (the daemon cuts a connection that sends no
 *           request for 5 s, daemon/front/http.c) or when the daemon closes
 *           it.  The daemon still verifies the certificate at each
 *           handshake, as for a connection of the client's own.
 *   ends    RELAY_IDLE_S (SHARNESS_RELAY_IDLE) seconds after its last
 *           client; at once when a connection to the daemon fails or is
 *           refused (clients then connect themselves and say why), when
 *           its socket is gone from the directory, on SIGTERM
 *   off     SHARNESS_RELAY=off, tickets off (SHARNESS_TICKETS=off) or no
 *           usable ticket directory, and `doctor`
 */
#ifndef SHARNESS_CLIENT_RELAY_H
#define SHARNESS_CLIENT_RELAY_H

#include "conf.h"

#define RELAY_IDLE_S 600
#define RELAY_WARM_S 120
#define RELAY_MAX_CLIENTS 64

/* The relay's socket for `c`, connected, checked and ready, or -1; then
 * *start says whether none answered (the caller may start one once its own
 * request has worked), rather than one that is off, busy or not ours. */
int relay_connect(const struct conf *c, int *start);

/* Starts the relay for `c` in the background.  Best effort and silent: a
 * relay that cannot start costs only speed. */
void relay_start(const struct conf *c);

/* `sharness-client relay`: serves in the foreground until it ends (above).
 * 0 when it ended by idling or found another relay serving, 1 otherwise
 * (a sentence on stderr). */
int relay_main(const struct conf *c);

#endif
