/*
 * approval.c - see approval.h.  One mutex guards the list; each waiting
 * request sleeps on its own condition variable in short slices so it can
 * notice its client hanging up.
 */
#include "approval.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "log.h"

#define SLICE_MS 200

enum state { PENDING, ALLOWED, DENIED };

struct pending {
	struct pending *next;
	char id[33];
	const struct approval_info *info;
	struct timespec since;
	enum state state;
	pthread_cond_t cv;
};

struct approvals {
	pthread_mutex_t mu;
	struct pending *head;
	unsigned n, max;
};

struct approvals *approvals_new(unsigned max_pending)
{
	struct approvals *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	pthread_mutex_init(&a->mu, NULL);
	a->max = max_pending;
	return a;
}

void approvals_free(struct approvals *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static void unlink_pending(struct approvals *a, struct pending *p)
{
	for (struct pending **pp = &a->head; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			a->n--;
			return;
		}
	}
}

static bool client_gone(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
	return fd >= 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

int approvals_wait(struct approvals *a, const struct approval_info *info, int client_fd,
                   unsigned timeout_s, char id[33], enum approval_outcome *outcome)
{
	struct pending p = {.info = info, .state = PENDING};
	unsigned char rnd[16];
	struct timespec deadline, now;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(p.id + 2 * i, 3, "%02x", rnd[i]);
	memcpy(id, p.id, sizeof(p.id));
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p.cv, &ca);
	pthread_condattr_destroy(&ca);
	clock_gettime(CLOCK_MONOTONIC, &p.since);
	deadline = p.since;
	deadline.tv_sec += timeout_s;

	pthread_mutex_lock(&a->mu);
	if (a->n >= a->max) {
		pthread_mutex_unlock(&a->mu);
		pthread_cond_destroy(&p.cv);
		errno = EAGAIN;
		return -1;
	}
	p.next = a->head;
	a->head = &p;
	a->n++;
	/* In sight at once (SPEC §15.3): the operator's log names the wait. */
	log_info("a run of '%s' (profile %s) waits up to %u s for a person's approval: %s (sharness-client approve %s)",
	         info->requester_cn, info->profile, timeout_s, p.id, p.id);
	*outcome = APPROVAL_EXPIRED;
	for (;;) {
		if (p.state != PENDING) {
			*outcome = p.state == ALLOWED ? APPROVAL_ALLOWED : APPROVAL_DENIED;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
			break;
		if (client_gone(client_fd)) {
			*outcome = APPROVAL_WITHDRAWN;
			break;
		}
		struct timespec slice = now;
		slice.tv_nsec += SLICE_MS * 1000000L;
		if (slice.tv_nsec >= 1000000000L) {
			slice.tv_sec++;
			slice.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p.cv, &a->mu, &slice);
	}
	/* Gone from the list under the lock: no later decision can find it. */
	unlink_pending(a, &p);
	pthread_mutex_unlock(&a->mu);
	pthread_cond_destroy(&p.cv);
	return 0;
}

int approvals_decide(struct approvals *a, const char *id, bool allow, const char *decider_cn)
{
	int rc = -1;
	(void)decider_cn;
	pthread_mutex_lock(&a->mu);
	for (struct pending *p = a->head; p; p = p->next) {
		if (p->state == PENDING && strcmp(p->id, id) == 0) {
			p->state = allow ? ALLOWED : DENIED;
			pthread_cond_signal(&p->cv);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&a->mu);
	if (rc < 0)
		errno = ENOENT;
	return rc;
}

char *approvals_list_json(struct approvals *a, bool raw)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(o, "approvals");
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&a->mu);
	for (struct pending *p = a->head; p; p = p->next) {
		if (p->state != PENDING)
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
	pthread_mutex_unlock(&a->mu);
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}
