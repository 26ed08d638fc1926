/*
 * front.h - the unprivileged half of sharnessd: TLS + HTTP (libmicrohttpd),
 * client certificates, JSON, the secret filter, replies and the audit log.
 *
 * Trust: everything it reads from the network is hostile; it runs as its
 * own uid with no capabilities, no_new_privs, Landlock and an allowlist
 * seccomp filter (lockdown.h), in its own executable (front/main.c).
 */
#ifndef SHARNESS_FRONT_H
#define SHARNESS_FRONT_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "profile.h"

struct scrub_rules;
struct approvals;
struct runq;
struct tls_tickets;
struct tls_recent;

struct front {
	const struct config *cfg;
	const struct profile_set *profiles;
	const struct scrub_rules *scrub; /* built by the front itself */
	size_t vault_keys;      /* what the launcher counted for /v0/policy */
	char *policy_json;      /* GET /v0/policy body */
	char *profiles_json;    /* GET /v0/profiles body */
	char policy_hash[72];
	char *tls_ca, *tls_cert, *tls_key; /* PEM, read by root and handed over */
	int listen_fd;
	int ctl;                /* control socket to the launcher */
	int audit_fd;
	uid_t uid;              /* the front's own uid */
	pid_t launcher_pid;     /* our parent: the front dies with it */
	unsigned runs;          /* runs holding a slot (runq.h) */
	struct approvals *approvals; /* runs waiting for a person */
	struct runq *runq;           /* the max_runs slots and their FIFO queue */
	struct connguard *guard;     /* the deadline for unverified connections */
	int peer_diag;               /* sock_diag, for the uid of a connection's peer (peeruid.h) */
	struct tls_tickets *tickets; /* the session ticket key, memory only (tls.h) */
	struct tls_recent *recent;   /* the last connections' verified certificates (tls.h) */
	struct jobs *jobs;           /* runs started with POST /v0/jobs (jobs.c) */
	struct loop *loop;           /* the one event loop (loop.h) */
	struct runflow *flows;       /* run requests in progress (runflow.h) */
};

struct scrub_sources;

/* In the front process (sharnessd-front, started by root already as its
 * own uid): build the filter from `src`, lock down, serve until SIGTERM.
 * `ready_fd` gets one byte once the server listens.  Returns exit code. */
int front_main(struct front *f, struct scrub_sources *src, int ready_fd);

/* http.c: the libmicrohttpd server on f->listen_fd, in external epoll
 * mode (front.c runs it from f->loop). */
struct MHD_Daemon *http_start(struct front *f);

#endif
