/*
 * fuzz_request.c - libFuzzer target for the POST /v0/run parser and
 * validator (request_parse_run), with the shipped profiles from profiles/
 * and a config of two workspaces.
 *
 * Input: a request body, exactly as the network delivers it.  Properties
 * beyond "no crash, no leak, no UB":
 *   - a refusal has a status the API documents (400, 404, 413) and a
 *     machine code and one sentence;
 *   - an accepted request holds only what SPEC §3 allows: a non-empty cmd
 *     without NUL under 256 KiB, a known profile, a normalised absolute cwd
 *     inside a configured workspace, a timeout within the profile's
 *     maximum, env entries that are valid, not dangerous, and "NAME=VALUE";
 *   - an accepted body is one JSON object with nothing after it.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fuzz_common.h"
#include "privsep.h"
#include "profile.h"
#include "request.h"

#ifndef FUZZ_PROFILES_DIR
#define FUZZ_PROFILES_DIR "profiles"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct config cfg;
static struct profile_set profiles;
static char dir[] = "/tmp/sharness-fuzz-ws.XXXXXX", ws2[sizeof(dir) + 8];

/* The two workspaces go when the fuzzer exits (a run's end, not a crash). */
static void remove_workspaces(void)
{
	rmdir(ws2);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512], json[1024];
	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(ws2, sizeof(ws2), "%s/two", dir);
	mkdir(ws2, 0755);
	atexit(remove_workspaces);
	snprintf(json, sizeof(json), "{\"workspaces\": [\"%s\", \"%s\"], \"profiles_dir\": \"%s\"}", dir, ws2,
	         FUZZ_PROFILES_DIR);
	if (config_parse("fuzz-config.json", json, strlen(json), &cfg, err, sizeof(err)) < 0 ||
	    profile_set_load(FUZZ_PROFILES_DIR, &profiles, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_request: setup failed: %s\n", err);
		abort();
	}
	return 0;
}

static void check_accepted(const struct run_request *r)
{
	FUZZ_ASSERT(r->cmd && r->cmd_len > 0 && r->cmd_len <= RUN_CMD_MAX, "cmd length %zu", r->cmd_len);
	FUZZ_ASSERT(strlen(r->cmd) == r->cmd_len, "cmd holds a NUL");
	FUZZ_ASSERT(r->profile && r->profile_id < profiles.n && r->profile == &profiles.v[r->profile_id],
	            "profile pointer and id disagree");
	FUZZ_ASSERT(r->workspace_id < cfg.n_workspaces, "workspace id %zu", r->workspace_id);
	const char *w = cfg.workspaces[r->workspace_id];
	size_t wl = strlen(w);
	FUZZ_ASSERT(r->cwd && r->cwd[0] == '/' && strncmp(r->cwd, w, wl) == 0 &&
	                    (r->cwd[wl] == '\0' || r->cwd[wl] == '/'),
	            "cwd '%s' outside workspace '%s'", r->cwd, w);
	FUZZ_ASSERT(!strstr(r->cwd, "/../") && !strstr(r->cwd, "/./") && !strstr(r->cwd, "//"),
	            "cwd '%s' not normalised", r->cwd);
	FUZZ_ASSERT(r->timeout_s >= 1 && r->timeout_s <= r->profile->timeout_max_s, "timeout %u (max %u)",
	            r->timeout_s, r->profile->timeout_max_s);
	FUZZ_ASSERT(!r->has_stdin || (r->stdin_data && r->stdin_len <= RUN_STDIN_MAX), "stdin");
	FUZZ_ASSERT(r->env_count <= RUN_ENV_COUNT_MAX && r->env_len <= RUN_ENV_BYTES_MAX, "env size");
	const char *p = r->env, *end = r->env ? r->env + r->env_len : NULL;
	for (unsigned i = 0; i < r->env_count; i++) {
		FUZZ_ASSERT(p && p < end, "env entry %u past the end", i);
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		FUZZ_ASSERT(nul, "env entry %u not terminated", i);
		const char *eq = memchr(p, '=', (size_t)(nul - p));
		FUZZ_ASSERT(eq, "env entry '%s' without '='", p);
		char name[256];
		size_t nl = (size_t)(eq - p);
		FUZZ_ASSERT(nl < sizeof(name), "env name too long");
		memcpy(name, p, nl);
		name[nl] = '\0';
		FUZZ_ASSERT(profile_env_name_valid(name), "invalid env name '%s' accepted", name);
		FUZZ_ASSERT(!profile_env_name_dangerous(name), "dangerous env name '%s' accepted", name);
		p = nul + 1;
	}
	FUZZ_ASSERT(p == end || r->env_count == 0, "env bytes after the last entry");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_request r;
	struct request_error e;

	memset(&r, 0, sizeof(r));
	memset(&e, 0, sizeof(e));
	if (request_parse_run((const char *)data, size, &cfg, &profiles, &r, &e) < 0) {
		FUZZ_ASSERT(e.status == 400 || e.status == 404 || e.status == 413, "status %d (%s)", e.status,
		            e.code);
		FUZZ_ASSERT(e.code[0] && e.message[0], "error without code or message");
		FUZZ_ASSERT(strnlen(e.message, sizeof(e.message)) < sizeof(e.message), "message not terminated");
		request_free(&r); /* harmless after a failure */
		return 0;
	}
	check_accepted(&r);
	/* The whole body was one JSON object: nothing but whitespace after its
	 * closing brace (a second value must not be silently ignored). */
	size_t end = size;
	while (end > 0 && strchr(" \t\r\n", data[end - 1]) && data[end - 1])
		end--;
	FUZZ_ASSERT(fuzz_lax() || (end > 0 && data[end - 1] == '}'),
	            "accepted a body with bytes after the JSON object");
	request_free(&r);
	return 0;
}
