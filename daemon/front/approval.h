/*
 * approval.h - runs that wait for a person (SPEC §9).  A run under a profile
 * with approval "each" is parked here, its request held open, until a
 * person-role client allows or denies it, it expires, or its requester hangs
 * up.  An approval is single-use and bound to the one waiting request: the
 * id is random, the decision wakes exactly that request, and the entry is
 * gone afterwards.
 *
 * Trust: front side; ids and decisions come from the network.
 */
#ifndef SHARNESS_APPROVAL_H
#define SHARNESS_APPROVAL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "loop.h"

struct approvals;

enum approval_outcome {
	APPROVAL_ALLOWED,
	APPROVAL_DENIED,
	APPROVAL_EXPIRED,
};

struct approval_info {
	const char *requester_cn;
	const char *requester_fp; /* the certificate's SHA-256: whose approval it is */
	const char *requester_role;
	const char *request_id;   /* the client's nonce (Sharness-Request-Id), or NULL */
	const char *profile;
	const char *cmd;          /* filtered: what the audit log and non-person roles see */
	const char *cmd_raw;      /* exact (invalid UTF-8 as U+FFFD): the person's view */
	const char *cmd_sha256;   /* of the exact bytes, hex */
	unsigned long cmd_filtered; /* parts of cmd the filter replaced */
	bool cmd_invalid_utf8;    /* cmd_raw had bytes replaced */
	const char *cwd;
	unsigned timeout_s;
	/* What else the run gets, so the person decides on the whole request:
	 * {"stdin_bytes", "stdin_sha256", "stdin" (preview), "env" (NAME=VALUE
	 * list)}; merged into the listing.  `extra` is filtered (for app and
	 * orchestrator), `extra_raw` exact (for person).  Borrowed. */
	const cJSON *extra;
	const cJSON *extra_raw;
};

struct approvals *approvals_new(struct loop *l, unsigned max_pending);
void approvals_free(struct approvals *a);

struct approval;

/* Park a request until it is decided: `decided` comes once, at a later
 * turn of the loop, with ALLOWED, DENIED or EXPIRED (after `timeout_s`).
 * `info` is borrowed until then.  `id` receives the approval id (32 hex
 * characters).  NULL with errno EAGAIN when too many runs wait already,
 * EDQUOT when a quarter of the places (at least one) wait for this
 * requester's certificate already (one identity does not fill them all),
 * EEXIST when a waiting run of the same certificate carries the same
 * request_id (each client's nonce names one approval; review s37 front 1;
 * another's is no business of it, nor to be probed). */
struct approval *approvals_add(struct approvals *a, const struct approval_info *info, unsigned timeout_s,
                               char id[33], void (*decided)(void *arg, enum approval_outcome o), void *arg);
/* The requester went away (or the daemon stops): the entry is gone and
 * `decided` never comes. */
void approvals_withdraw(struct approvals *a, struct approval *p);

/* Decide a pending approval.  Returns 0, or -1 with errno ENOENT when no
 * run with that id is waiting (unknown, decided, expired or withdrawn). */
int approvals_decide(struct approvals *a, const char *id, bool allow, const char *decider_cn);

/* {"approvals":[{"id","requester","requester_role","profile","cmd","cmd_shown",
 * "cmd_sha256","cmd_filtered_parts",["cmd_filtered"],"cwd","timeout_s","stdin_bytes",
 * "stdin_sha256","stdin","env","age_s"}]}, malloc'd.  `raw` (the reader is a person):
 * cmd, stdin and env exactly as the run gets them, cmd_shown "raw", and cmd_filtered
 * the filtered text when the filter would change it -- no detector's redaction can
 * hide code from the one who approves it; this listing goes only over mTLS and is never
 * logged.  Otherwise the filtered text, cmd_shown "filtered", and only the
 * runs of the certificate `own_fp`: an agent sees its own pending runs (its
 * client prints its approval's id by its request_id), not another
 * identity's command, environment or stdin, nor its request_id (review s37
 * front 1: one identity posted its own run under another's request_id, and
 * that one's client printed the wrong approval for the person to allow). */
char *approvals_list_json(struct approvals *a, bool raw, const char *own_fp);

#endif
