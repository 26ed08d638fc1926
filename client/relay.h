/*
 * relay.h - a process per user and identity that keeps mutual-TLS
 * connections to sharnessd ready, so that a client started fresh for every
 * command (an agent's hook) pays neither OpenSSL's start-up nor a handshake
 * (SPEC §15.5).  Like ssh's ControlMaster.
 *
 * Who starts it: the person, as a service (systemd/sharness-relay.service,
 * a user unit, or `sharness-client relay` by hand); or, only with
 * SHARNESS_RELAY=on, the first client whose own request worked (a double
 * fork and an exec of this same binary as `sharness-client relay`, by
 * absolute paths, from "/").  By default a client starts no process (SPEC
 * §10 says the messenger never forks or execs) but uses a relay that runs.
 * Clients of the relay's identity connect to its socket; it hands each
 * one a connection it made with the same code and the same checks
 * (tls.h), then copies bytes both ways until either end
 * closes.  It changes nothing that passes and executes nothing; of the
 * daemon's reply it reads only where it ends (replyend.h), so that a
 * connection that carried exactly one request (requestend), whose reply was
 * whole, kept open by the daemon, and followed by nothing serves the next
 * client too (the client then sends no "Connection: close"); anything else
 * ends the connection.
 *
 *   socket  NAME.relay in the ticket directory (ticket.h: ours, 0700),
 *           NAME two FNV-1a hashes of the identity line below: one relay
 *           per URL, CA, certificate and key, and a changed file is
 *           another relay; made 0600, bound by the holder of NAME.lock
 *           (a second relay ends at once, or, if it never idles, waits
 *           for the lock and serves once the holder ends)
 *   peers   each end checks that the other's uid (SO_PEERCRED) is its own
 *           effective uid: a sandboxed run, of a uid of its own, is
 *           refused even where it could reach the path.  A process of
 *           our own uid that may connect to the socket can use the
 *           identity, as one that may read the ticket can (ticket.h): a
 *           tool confined away from the key (Landlock does not restrict
 *           connect() to a named socket) must be kept out of the ticket
 *           directory by uid, or run with SHARNESS_RELAY=off.  (Passing
 *           the key's descriptor as proof would hand the key to whatever
 *           bound the socket.)
 *   ready   the relay writes "+" and the identity it serves (the URL, and
 *           device, inode, size and times of the three files) once the
 *           client's connection is up; the client compares it with its own
 *           and sends its request only then, and until then falls back
 *           to a connection of its own (nothing has reached the daemon, so
 *           nothing runs twice); after "+" a failure is the request's, as
 *           on a connection of its own.  Connecting gives up at once when
 *           the relay's backlog is full, waiting for "+" after 10 s.
 *   warm    while a client came in the last RELAY_WARM_S seconds, one
 *           connection is kept ready, its handshake done; it is replaced
 *           after 3 s unused (the daemon cuts a connection that sends no
 *           request for 5 s, daemon/front/http.c; sooner when its replies'
 *           Keep-Alive timeout N is under 5: then after N - 2 s, and none
 *           is kept at N <= 2) or when the daemon closes it; a
 *           connection given back after a reply counts its time from the
 *           reply's end.  The daemon checks the certificate on each
 *           connection as on a client's own (daemon/front/tls.h).  Each
 *           connection resumes with the newest ticket, offered once; two
 *           made at once mean one full handshake.
 *   threads a worker thread copies one client's bytes, then waits up to
 *           30 s for the next client: clients in a row start no thread.
 *   ends    RELAY_IDLE_S (SHARNESS_RELAY_IDLE, 0 for never) seconds
 *           after its last client; when a connection to the daemon fails or is refused
 *           (clients then connect themselves and say why), when one of its
 *           files changes (checked each second), when its socket is gone
 *           from the directory, on SIGTERM, SIGINT or SIGHUP.  It then
 *           removes its socket at once (the lock file stays: unlinking
 *           one another relay may be taking is a race) and finishes the
 *           clients it serves; a connection being made gives up after
 *           TLS_HANDSHAKE_TIMEOUT_S.
 *   modes   SHARNESS_RELAY unset or empty: a client uses a running relay
 *           and starts none; "on": it also starts one; anything else
 *           ("off"): it neither uses nor starts one, nor does `relay` run
 *   off     with SHARNESS_RELAY=off; and with tickets off
 *           (SHARNESS_TICKETS=off) or no usable ticket directory, and for
 *           `doctor`
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

/* Settings that can never work (SHARNESS_RELAY or SHARNESS_TICKETS off, no
 * usable ticket directory, a URL too long): the status of a usage error,
 * which the user unit does not restart (RestartPreventExitStatus=). */
#define RELAY_EXIT_SETTINGS 2

/* `sharness-client relay`: serves in the foreground until it ends (above).
 * 0 when it ended by idling, a signal or its socket removed, or found
 * another relay serving (one that never idles waits for it instead);
 * RELAY_EXIT_SETTINGS; 1 otherwise (a sentence on stderr each time). */
int relay_main(const struct conf *c);

#endif
