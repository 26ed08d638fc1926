/*
 * fuzz_profile.c - libFuzzer target for the profile loader (profile_parse).
 *
 * Input: one profile document, as an operator's file would hold it.
 * Properties beyond "no crash, no leak, no UB":
 *   - a refusal comes with one sentence naming the origin;
 *   - an accepted profile's canonical form is itself an accepted profile
 *     with the same canonical form and the same policy hash (the hash is
 *     stable: two files that mean the same thing hash the same).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p, q;
	char err[512];

	if (profile_parse("fuzz.json", NULL, (const char *)data, size, &p, err, sizeof(err)) < 0) {
		fuzz_check_err(err, sizeof(err));
		FUZZ_ASSERT(strncmp(err, "fuzz.json", 9) == 0, "error does not name the file: %s", err);
		profile_free(&p); /* must be a harmless no-op after a failure */
		return 0;
	}
	FUZZ_ASSERT(p.canonical_json != NULL, "accepted profile without canonical form");
	FUZZ_ASSERT(strncmp(p.policy_hash, "sha256:", 7) == 0 && strlen(p.policy_hash) == PROFILE_HASH_LEN,
	            "bad policy hash %s", p.policy_hash);
	FUZZ_ASSERT(p.timeout_default_s <= p.timeout_max_s, "default timeout %u above max %u",
	            p.timeout_default_s, p.timeout_max_s);
	FUZZ_ASSERT(p.name[0] >= 'a' && p.name[0] <= 'z', "profile name '%s' accepted", p.name);
	for (size_t i = 0; i < p.n_env; i++)
		FUZZ_ASSERT(profile_env_name_valid(p.env[i].name) && !profile_env_name_dangerous(p.env[i].name),
		            "env grant '%s' accepted", p.env[i].name);

	int rc = profile_parse("canonical.json", NULL, p.canonical_json, strlen(p.canonical_json), &q, err,
	                       sizeof(err));
	FUZZ_ASSERT(rc == 0, "canonical form refused: %s\n%s", err, p.canonical_json);
	FUZZ_ASSERT(strcmp(p.canonical_json, q.canonical_json) == 0, "canonical form not stable:\n%s\n%s",
	            p.canonical_json, q.canonical_json);
	FUZZ_ASSERT(strcmp(p.policy_hash, q.policy_hash) == 0, "policy hash not stable");
	profile_free(&q);
	profile_free(&p);
	profile_free(&p); /* twice: _free leaves the struct safe to free again */
	return 0;
}
