/*
 * ticket.h - the TLS session ticket one client process leaves for the next
 * (SPEC §15.5: an agent's hook starts the client fresh for every command).
 *
 * With a ticket the next process resumes the session (TLS 1.3 PSK with
 * (EC)DHE, RFC 8446 §4.2.9): no certificates cross, nobody signs, and the
 * client need not parse its own certificate, key or CA at all (http.c
 * parses them only when the daemon asks for a full handshake).  The daemon
 * still verifies the certificate chain it keeps inside the ticket on every
 * connection (daemon/front/tls.h).
 *
 * A ticket is a bearer credential until it expires (10 minutes, the
 * daemon's TLS_TICKET_LIFETIME_S): whoever holds it is this certificate to
 * the daemon, and, since it carries the verified server certificate and the
 * resumption secret, it also decides whom this client trusts.  So it gets
 * the protection of the client's private key, and more:
 *
 *   where  $SHARNESS_TICKETS if set ("off": no tickets), else
 *          $XDG_RUNTIME_DIR/sharness (tmpfs, per user, gone at logout),
 *          else $HOME/.cache/sharness; created 0700 when missing
 *   dir    used only when it is a directory (not a symlink) owned by the
 *          effective uid with no group or other permission bits
 *   file   one per (URL, CA, certificate, key), named by the SHA-256 of
 *          the URL and the three files' bytes, so a ticket never resumes
 *          another identity or another server, nor outlives a change of
 *          any of the files; sealed with AES-256-GCM under a key derived
 *          from the private key file's bytes, its name the additional data
 *          (a run's file in a workspace is ours on disk, mode 0600: only
 *          the seal keeps it from reading or planting a ticket there); read
 *          only when it is a regular file (not a symlink) owned by the
 *          effective uid, mode 0600 or stricter, at most TICKET_MAX bytes
 *          whose seal holds and that open to a TLS 1.3 session; written
 *          0600 under a temporary name, then renamed over.
 *
 * Anything else (missing, foreign, too open, corrupt, unsealed, expired) is ignored
 * without a word: the client then does a full handshake, as without a
 * ticket, and leaves a fresh ticket behind.  Nothing here is needed for a
 * command to run; every failure is silent and costs only speed.
 */
#ifndef SHARNESS_CLIENT_TICKET_H
#define SHARNESS_CLIENT_TICKET_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "conf.h"

#define TICKET_MAX 16384

/* The directory above (the relay's socket lives there too), opened and
 * checked; -1 when tickets are off or there is no place we may trust.
 * `create`: make it (and ~/.cache) 0700 when missing.  `path` gets its
 * name.  errno ENOENT: it is only missing (`create` would make it). */
int ticket_dir(bool create, char *path, size_t pathlen);

/* The stored session for `c`, to pass to SSL_set_session(), or NULL.
 * The caller frees it (SSL_SESSION_free). */
SSL_SESSION *ticket_load(const struct conf *c);

/* Keeps `s` (a session with a ticket from the daemon) for the next
 * process.  Best effort. */
void ticket_save(const struct conf *c, SSL_SESSION *s);

#endif
