/*
 * fuzz_check.c - libFuzzer target for root's checks of the front's
 * messages (daemon/root/check.c), with the shipped profiles and two
 * workspaces, as a compromised front would send them.
 *
 * Input: a struct privsep_run (its bytes exactly, zero-padded when short),
 * then the payload: cmd | cwd | env of the lengths the message claims
 * (zero-padded when short, as the supervisor's copy would refuse a size
 * mismatch first).  Properties beyond "no crash, no UB":
 *   - an accepted message has indices inside root's tables, a hex run id
 *     and lengths within the shared limits;
 *   - an accepted payload has no NUL in cmd or cwd, and exactly env_count
 *     "NAME=VALUE" entries of valid, undangerous names;
 *   - an accepted cwd is normalised and inside the chosen workspace.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz_common.h"
#include "privsep.h"
#include "profile.h"

#ifndef FUZZ_PROFILES_DIR
#define FUZZ_PROFILES_DIR "profiles"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct profile_set profiles;
static const char *const workspaces[] = {"/srv/ws", "/home/dev/src"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];
	(void)argc;
	(void)argv;
	if (profile_set_load(FUZZ_PROFILES_DIR, &profiles, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_check: setup failed: %s\n", err);
		abort();
	}
	return 0;
}

static void check_env(const struct privsep_run *q, const char *env)
{
	const char *p = env, *end = env + q->env_len;
	for (unsigned i = 0; i < q->env_count; i++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		FUZZ_ASSERT(nul, "env entry %u not terminated", i);
		const char *eq = memchr(p, '=', (size_t)(nul - p));
		FUZZ_ASSERT(eq && eq > p, "env entry without a name");
		char name[256];
		size_t nl = (size_t)(eq - p);
		FUZZ_ASSERT(nl < sizeof(name), "env name too long");
		memcpy(name, p, nl);
		name[nl] = '\0';
		FUZZ_ASSERT(profile_env_name_valid(name) && !profile_env_name_dangerous(name), "env name '%s'", name);
		p = nul + 1;
	}
	FUZZ_ASSERT(p == end, "env bytes after the last entry");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct privsep_run q;
	memset(&q, 0, sizeof(q));
	memcpy(&q, data, size < sizeof(q) ? size : sizeof(q));
	/* Half the time a valid header, so the fields behind it are reached. */
	if (size > 0 && (data[0] & 1))
		privsep_header_init(&q.h, PRIVSEP_RUN);
	if (check_run(&profiles, 2, &q) != NULL)
		return 0;
	FUZZ_ASSERT(q.profile_id < profiles.n && q.workspace_id < 2, "an index outside root's tables");
	for (size_t i = 0; i < RUN_ID_LEN; i++)
		FUZZ_ASSERT(strchr("0123456789abcdef", q.run_id[i]) && q.run_id[i], "run id byte %zu", i);
	FUZZ_ASSERT(q.timeout_s >= 1 && q.timeout_s <= profiles.v[q.profile_id].timeout_max_s, "timeout");
	FUZZ_ASSERT(q.cmd_len <= RUN_CMD_MAX && q.cwd_len <= RUN_CWD_MAX && q.env_len <= RUN_ENV_BYTES_MAX,
	            "a length");

	/* The supervisor's copy: each part followed by a NUL of its own. */
	size_t total = (size_t)q.cmd_len + q.cwd_len + q.env_len;
	char *copy = calloc(1, total + 3);
	if (!copy)
		return 0;
	size_t have = size > sizeof(q) ? size - sizeof(q) : 0;
	const uint8_t *pl = data + sizeof(q);
	char *cmd = copy, *cwd = copy + q.cmd_len + 1, *env = cwd + q.cwd_len + 1;
	size_t off = 0;
	for (size_t i = 0; i < q.cmd_len; i++, off++)
		cmd[i] = off < have ? (char)pl[off] : 0;
	for (size_t i = 0; i < q.cwd_len; i++, off++)
		cwd[i] = off < have ? (char)pl[off] : 0;
	for (size_t i = 0; i < q.env_len; i++, off++)
		env[i] = off < have ? (char)pl[off] : 0;
	if (check_payload(&q, cmd, cwd, env) == NULL) {
		FUZZ_ASSERT(!memchr(cmd, '\0', q.cmd_len) && !memchr(cwd, '\0', q.cwd_len) && cwd[0] == '/',
		            "a NUL in cmd or cwd");
		check_env(&q, env);
		char norm[PATH_MAX];
		const char *w = workspaces[q.workspace_id];
		if (check_cwd(cwd, w, norm, sizeof(norm))) {
			size_t wl = strlen(w);
			FUZZ_ASSERT(strncmp(norm, w, wl) == 0 && (norm[wl] == '\0' || norm[wl] == '/'),
			            "cwd '%s' outside '%s'", norm, w);
			FUZZ_ASSERT(!strstr(norm, "/../") && !strstr(norm, "/./") && !strstr(norm, "//"),
			            "cwd '%s' not normalised", norm);
		}
	}
	free(copy);
	return 0;
}
