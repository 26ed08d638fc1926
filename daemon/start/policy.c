/*
 * policy.c - see policy.h.  Keys are added in sorted order so that the
 * compact print is the canonical form that gets hashed.
 */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonstrict.h"
#include "landlock.h"
#include "privsep.h"
#include "scrub.h"
#include "sandbox_filter.h"
#include "seccomp.h"

static cJSON *roles(int run)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateString("app"));
	cJSON_AddItemToArray(a, cJSON_CreateString("orchestrator"));
	if (!run)
		cJSON_AddItemToArray(a, cJSON_CreateString("person"));
	return a;
}

/* Per right of landlock.c's table: the ABI that brought it, the lock that
 * enforces it on this kernel, and the lock that covers it where the kernel
 * lacks it (null for ABI 1 rights: ABI 1 is the least a daemon starts on). */
static cJSON *landlock_rights_json(const struct policy_facts *facts)
{
	cJSON *l = cJSON_CreateObject();
	size_t n;
	const struct landlock_right *r = landlock_rights(&n);

	cJSON_AddNumberToObject(l, "abi", facts->landlock_abi);
	cJSON_AddNumberToObject(l, "min_abi", facts->landlock_min_abi);
	cJSON *a = cJSON_AddArrayToObject(l, "rights");
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "enforced_by", landlock_enforced_by(&r[i], facts->landlock_abi));
		if (r[i].other_lock)
			cJSON_AddStringToObject(e, "other_lock", r[i].other_lock);
		else
			cJSON_AddNullToObject(e, "other_lock");
		cJSON_AddStringToObject(e, "right", r[i].name);
		cJSON_AddNumberToObject(e, "since_abi", r[i].since_abi);
		cJSON_AddItemToArray(a, e);
	}
	return l;
}

char *policy_build(const struct config *cfg, const struct profile_set *profiles,
                   size_t vault_keys, const struct policy_facts *facts, char hash[72])
{
	cJSON *o = cJSON_CreateObject();
	char listen[300];

	cJSON *ep = cJSON_AddObjectToObject(o, "endpoints");
	cJSON_AddItemToObject(ep, "GET /v0/approvals", roles(0));
	cJSON_AddItemToObject(ep, "GET /v0/policy", roles(0));
	cJSON_AddItemToObject(ep, "GET /v0/profiles", roles(0));
	cJSON *person = cJSON_CreateArray();
	cJSON_AddItemToArray(person, cJSON_CreateString("person"));
	cJSON_AddItemToObject(ep, "POST /v0/approvals/{id}", person);
	cJSON_AddItemToObject(ep, "POST /v0/run", roles(1));
	cJSON_AddItemToObject(ep, "POST /v0/jobs", roles(1));
	cJSON_AddItemToObject(ep, "GET /v0/jobs", roles(1));
	cJSON_AddItemToObject(ep, "GET /v0/jobs/{id}", roles(1));
	cJSON_AddItemToObject(ep, "GET /v0/jobs/{id}/output", roles(1));
	cJSON_AddItemToObject(ep, "DELETE /v0/jobs/{id}", roles(1));

	cJSON *f = cJSON_AddObjectToObject(o, "filter");
	cJSON *rules = cJSON_AddArrayToObject(f, "rules");
	/* The detectors are built in: the names need no rules object. */
	for (size_t i = 0; i < scrub_rules_count(NULL); i++)
		cJSON_AddItemToArray(rules, cJSON_CreateString(scrub_rule_name(NULL, i)));
	cJSON_AddNumberToObject(f, "vault_keys", (double)vault_keys);

	cJSON *k = cJSON_AddObjectToObject(o, "kernel");
	cJSON_AddStringToObject(k, "cgroup", facts->cgroup_version);
	cJSON_AddItemToObject(k, "landlock", landlock_rights_json(facts));
	/* kept for clients of 0.1: the same number as landlock.abi */
	cJSON_AddNumberToObject(k, "landlock_abi", facts->landlock_abi);
	cJSON_AddBoolToObject(k, "memory_controller", facts->memory_controller);
	/* 2 (no executable memfd) where the kernel has the knob (6.3+);
	 * otherwise memfd_create is denied by seccomp: "seccomp". */
	if (seccomp_kernel_has_memfd_noexec())
		cJSON_AddNumberToObject(k, "memfd_noexec", 2);
	else
		cJSON_AddStringToObject(k, "memfd_noexec", "seccomp: memfd_create denied (kernel before 6.3)");
	cJSON *ns = cJSON_AddArrayToObject(k, "namespaces");
	static const char *const names[] = {"cgroup", "ipc", "mnt", "net", "pid", "uts"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cJSON_AddItemToArray(ns, cJSON_CreateString(names[i]));
	cJSON_AddStringToObject(k, "seccomp", "filter");

	cJSON *lim = cJSON_AddObjectToObject(o, "limits");
	cJSON_AddNumberToObject(lim, "approval_timeout_s", cfg->approval_timeout_s);
	cJSON_AddNumberToObject(lim, "cmd_bytes", RUN_CMD_MAX);
	cJSON_AddNumberToObject(lim, "connections", cfg->connection_limit);
	cJSON_AddNumberToObject(lim, "env_vars", RUN_ENV_COUNT_MAX);
	cJSON_AddNumberToObject(lim, "idle_timeout_s", cfg->connection_timeout_s);
	cJSON_AddNumberToObject(lim, "max_body_bytes", (double)cfg->max_body);
	cJSON_AddNumberToObject(lim, "max_runs", cfg->max_runs);
	cJSON_AddNumberToObject(lim, "prewarm", cfg->prewarm);
	cJSON_AddNumberToObject(lim, "queue_max", cfg->queue_max);
	cJSON_AddNumberToObject(lim, "queue_timeout_s", cfg->queue_timeout_s);
	cJSON_AddNumberToObject(lim, "max_jobs", cfg->max_jobs);
	cJSON_AddNumberToObject(lim, "job_retain_s", cfg->job_retain_s);
	cJSON_AddNumberToObject(lim, "stdin_bytes", RUN_STDIN_MAX);

	snprintf(listen, sizeof(listen), "%s:%u", cfg->listen_host, cfg->listen_port);
	cJSON_AddStringToObject(o, "listen", listen);

	cJSON *ph = cJSON_AddObjectToObject(o, "profiles");
	for (size_t i = 0; i < profiles->n; i++)
		cJSON_AddStringToObject(ph, profiles->v[i].name, profiles->v[i].policy_hash);

	cJSON *sc = cJSON_AddArrayToObject(o, "seccomp_denied");
	for (const char *const *n = seccomp_denied_names(); n && *n; n++)
		cJSON_AddItemToArray(sc, cJSON_CreateString(*n));

	cJSON *t = cJSON_AddObjectToObject(o, "tls");
	cJSON_AddStringToObject(t, "backend", "GnuTLS (libmicrohttpd)");
	cJSON_AddStringToObject(t, "client_certificate", "required: CA chain, validity, clientAuth, one OU role");
	cJSON_AddStringToObject(t, "min_version", "TLS1.2");

	cJSON *u = cJSON_AddObjectToObject(o, "uid_range");
	cJSON_AddNumberToObject(u, "count", cfg->uid_count);
	cJSON_AddNumberToObject(u, "first", cfg->uid_first);

	char *canon = cJSON_PrintUnformatted(o);
	if (!canon || jsonstrict_hash(canon, hash) < 0)
		hash[0] = '\0';
	free(canon);
	cJSON_AddStringToObject(o, "policy_hash", hash);
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}

char *policy_profiles(const struct profile_set *profiles)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *a = cJSON_AddArrayToObject(o, "profiles");
	for (size_t i = 0; i < profiles->n; i++) {
		const struct profile *p = &profiles->v[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", p->name);
		cJSON_AddStringToObject(e, "description", p->description);
		cJSON_AddStringToObject(e, "policy_hash", p->policy_hash);
		cJSON *pol = cJSON_Parse(p->canonical_json);
		cJSON_AddItemToObject(e, "policy", pol ? pol : cJSON_CreateNull());
		cJSON_AddItemToArray(a, e);
	}
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}
