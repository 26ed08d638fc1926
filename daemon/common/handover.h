/*
 * handover.h - what root hands the front when it starts it (fork, drop to
 * the front's uid, exec of sharnessd-front): the descriptors at fixed
 * numbers, and one sealed memfd with everything else the front needs, as
 * JSON.  The front never opens a file of root's: it gets the descriptors.
 *
 * Trust: root writes the document; the front reads it and checks what it
 * can (each profile's policy hash is computed again and must match).
 */
#ifndef SHARNESS_HANDOVER_H
#define SHARNESS_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "profile.h"

/* The front's descriptors after the exec. */
enum {
	HANDOVER_FD_CTL = 3,      /* the control socket to the launcher */
	HANDOVER_FD_READY = 4,    /* one byte once it listens */
	HANDOVER_FD_LISTEN = 5,   /* the listening TCP socket */
	HANDOVER_FD_AUDIT = 6,    /* the audit log, open for appending */
	HANDOVER_FD_DOC = 7,      /* this document (a sealed memfd) */
	HANDOVER_FD_TLS_KEY = 8,  /* the TLS private key: a memfd of the PEM root checked */
	HANDOVER_FD_SECRETS = 9,  /* the secrets file, or closed when none is configured */
	HANDOVER_FD_COUNT = 10,   /* everything from here up is closed */
};

#define HANDOVER_MAX (4u << 20) /* the document's bound (profiles, PEMs, policy) */

struct handover {
	uid_t uid;              /* the front's own uid (uid_range.first) */
	pid_t launcher_pid;     /* its parent, which it dies with */
	bool verbose;
	size_t vault_keys;      /* what root counted; the front's filter must agree */
	char *policy_json;      /* GET /v0/policy */
	char *profiles_json;    /* GET /v0/profiles */
	char *policy_hash;
	char *tls_ca, *tls_cert; /* PEM */
};

/* Root: the document as a sealed memfd (read-only for the front), or -1. */
int handover_write(const struct handover *h, const struct config *cfg, const struct profile_set *profiles);

/* A sealed memfd holding `len` bytes of `data` (the TLS key), or -1. */
int handover_memfd(const char *name, const char *data, size_t len);

/* The front: read the document from `fd` into h, cfg (only the fields the
 * front uses) and profiles.  0, or -1 with err set. */
int handover_read(int fd, struct handover *h, struct config *cfg, struct profile_set *profiles, char *err,
                  size_t errlen);

/* A regular file's (or memfd's) whole content from an open descriptor,
 * read from offset 0, NUL-terminated, at most `max` bytes; or NULL with
 * errno (EFBIG: not a regular file of at most `max` bytes).  What was read
 * is wiped on failure: the front reads its secrets this way. */
char *handover_slurp(int fd, size_t max, size_t *len);

#endif
