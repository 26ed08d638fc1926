/*
 * fuzz_config.c - libFuzzer target for the config loader (config_parse).
 *
 * Input: one configuration document.  Properties beyond "no crash, no leak,
 * no UB": a refusal comes with one sentence; an accepted config holds only
 * values the daemon can use (absolute workspaces, a non-empty uid range that
 * does not wrap, non-zero limits).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char err[512];

	memset(&c, 0, sizeof(c));
	if (config_parse("fuzz.json", (const char *)data, size, &c, err, sizeof(err)) < 0) {
		fuzz_check_err(err, sizeof(err));
		return 0;
	}
	FUZZ_ASSERT(c.listen_host && c.listen_host[0], "no listen host");
	FUZZ_ASSERT(c.listen_port > 0 && c.listen_port < 65536, "port %u", c.listen_port);
	FUZZ_ASSERT(c.n_workspaces >= 1 && c.n_workspaces <= CONFIG_WORKSPACES_MAX, "%zu workspaces",
	            c.n_workspaces);
	for (size_t i = 0; i < c.n_workspaces; i++)
		FUZZ_ASSERT(c.workspaces[i] && c.workspaces[i][0] == '/', "workspace not absolute");
	FUZZ_ASSERT(c.uid_first > 0, "uid range starts at root");
	FUZZ_ASSERT(c.uid_count > 0, "empty uid range");
	FUZZ_ASSERT((unsigned long long)c.uid_first + c.uid_count <= 0xffffffffULL, "uid range wraps");
	FUZZ_ASSERT(c.max_runs > 0 && c.max_body > 0 && c.connection_limit > 0, "zero limit accepted");
	FUZZ_ASSERT(c.profiles_dir && c.tls_ca && c.tls_cert && c.tls_key && c.state_dir && c.audit_log,
	            "missing path");
	config_free(&c);
	return 0;
}
