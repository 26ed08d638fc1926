/*
 * approval.c - see approval.h.  Everything runs on the front's loop thread:
 * the list needs no lock, and each waiting request has a timer that is its
 * deadline and, once a person decided, the zero timer that delivers the
 * decision at the loop's next turn (never inside the deciding request).
 */
#include "approval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "log.h"

enum state { PENDING, ALLOWED, DENIED };

struct approval {
	struct approval *next;
	struct approvals *owner;
	char id[33];
	const struct approval_info *info;
	struct timespec since;
	enum state state;
	struct loop_timer timer;
	void (*decided)(void *arg, enum approval_outcome o);
	void *arg;
};

struct approvals {
	struct loop *loop;
	struct approval *head;
	unsigned n, max;
};

struct approvals *approvals_new(struct loop *l, unsigned max_pending)
{
	struct approvals *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->loop = l;
	a->max = max_pending;
	return a;
}

void approvals_free(struct approvals *a)
{
	free(a);
}

static void unlink_pending(struct approvals *a, struct approval *p)
{
	for (struct approval **pp = &a->head; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			a->n--;
			return;
		}
	}
}

/* The deadline, or a decision's delivery. */
static void on_timer(struct loop_timer *t)
{
	struct approval *p = t->arg;
	enum approval_outcome o = p->state == ALLOWED  ? APPROVAL_ALLOWED
	                          : p->state == DENIED ? APPROVAL_DENIED
	                                               : APPROVAL_EXPIRED;
	/* Gone from the list first: no later decision can find it. */
	unlink_pending(p->owner, p);
	void (*decided)(void *, enum approval_outcome) = p->decided;
	void *arg = p->arg;
	free(p);
	decided(arg, o);
}

struct approval *approvals_add(struct approvals *a, const struct approval_info *info, unsigned timeout_s,
                               char id[33], void (*decided)(void *arg, enum approval_outcome o), void *arg)
{
	unsigned char rnd[16];
	unsigned mine = 0;
	for (struct approval *q = a->head; q; q = q->next) {
		mine += strcmp(q->info->requester_fp, info->requester_fp) == 0;
		if (q->state == PENDING && info->request_id && q->info->request_id &&
		    strcmp(q->info->requester_fp, info->requester_fp) == 0 &&
		    strcmp(q->info->request_id, info->request_id) == 0) {
			errno = EEXIST;
			return NULL;
		}
	}
	if (a->n >= a->max || mine >= (a->max / 4 ? a->max / 4 : 1)) {
		errno = a->n >= a->max ? EAGAIN : EDQUOT;
		return NULL;
	}
	struct approval *p = calloc(1, sizeof(*p));
	if (!p || getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		free(p);
		errno = EAGAIN;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(p->id + 2 * i, 3, "%02x", rnd[i]);
	memcpy(id, p->id, sizeof(p->id));
	p->owner = a;
	p->info = info;
	p->state = PENDING;
	p->decided = decided;
	p->arg = arg;
	clock_gettime(CLOCK_MONOTONIC, &p->since);
	p->next = a->head;
	a->head = p;
	a->n++;
	loop_timer_set(a->loop, &p->timer, (int64_t)timeout_s * 1000, on_timer, p);
	/* In sight at once (SPEC §15.3): the operator's log names the wait. */
	log_info("a run of '%s' (profile %s) waits up to %u s for a person's approval: %s (sharness-client approve %s)",
	         info->requester_cn, info->profile, timeout_s, p->id, p->id);
	return p;
}

void approvals_withdraw(struct approvals *a, struct approval *p)
{
	loop_timer_cancel(a->loop, &p->timer);
	unlink_pending(a, p);
	free(p);
}

int approvals_decide(struct approvals *a, const char *id, bool allow, const char *decider_cn)
{
	(void)decider_cn;
	for (struct approval *p = a->head; p; p = p->next) {
		if (p->state == PENDING && strcmp(p->id, id) == 0) {
			p->state = allow ? ALLOWED : DENIED;
			loop_timer_set(a->loop, &p->timer, 0, on_timer, p);
			return 0;
		}
	}
	errno = ENOENT;
	return -1;
}

char *approvals_list_json(struct approvals *a, bool raw, const char *own_fp)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "approvals");
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct approval *p = a->head; p; p = p->next) {
		if (p->state != PENDING || (!raw && strcmp(p->info->requester_fp, own_fp) != 0))
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "id", p->id);
		cJSON_AddStringToObject(e, "requester", p->info->requester_cn);
		cJSON_AddStringToObject(e, "requester_role", p->info->requester_role);
		cJSON_AddStringToObject(e, "profile", p->info->profile);
		cJSON_AddStringToObject(e, "cmd", raw ? p->info->cmd_raw : p->info->cmd);
		cJSON_AddStringToObject(e, "cmd_shown", raw ? "raw" : "filtered");
		cJSON_AddStringToObject(e, "cmd_sha256", p->info->cmd_sha256);
		cJSON_AddNumberToObject(e, "cmd_filtered_parts", (double)p->info->cmd_filtered);
		if (raw && p->info->cmd_filtered)
			cJSON_AddStringToObject(e, "cmd_filtered", p->info->cmd);
		if (p->info->cmd_invalid_utf8)
			cJSON_AddBoolToObject(e, "cmd_invalid_utf8_replaced", true);
		cJSON_AddStringToObject(e, "cwd", p->info->cwd);
		cJSON_AddNumberToObject(e, "timeout_s", p->info->timeout_s);
		const cJSON *extra = raw ? p->info->extra_raw : p->info->extra;
		for (const cJSON *x = extra ? extra->child : NULL; x; x = x->next)
			cJSON_AddItemToObject(e, x->string, cJSON_Duplicate(x, true));
		cJSON_AddNumberToObject(e, "age_s", (double)(now.tv_sec - p->since.tv_sec));
		cJSON_AddItemToArray(arr, e);
	}
	/* The fields are checked or cleaned where they come in (request.c,
	 * runflow.c); one field missed must not make the listing unreadable
	 * and hide every pending run from the person. */
	audit_clean_strings(o);
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}
