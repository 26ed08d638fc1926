/*
 * policy.h - the daemon's own policy as served by GET /v0/policy, and the
 * profile list of GET /v0/profiles.  Both are built once at start (the
 * configuration is read-only afterwards) and hashed canonically.
 */
#ifndef SHARNESS_POLICY_H
#define SHARNESS_POLICY_H

#include "config.h"
#include "profile.h"

struct scrub_rules;

struct policy_facts {
	int landlock_abi;     /* the running kernel's ABI; 0 = not checked (--check-config) */
	int landlock_min_abi; /* the configuration's landlock_min_abi */
	const char *cgroup_version;
	int memory_controller;
};

/* The /v0/policy body (malloc'd); `hash` receives "sha256:<hex>". */
char *policy_build(const struct config *cfg, const struct profile_set *profiles,
                   size_t vault_keys, const struct policy_facts *facts, char hash[72]);
/* The /v0/profiles body (malloc'd). */
char *policy_profiles(const struct profile_set *profiles);

#endif
