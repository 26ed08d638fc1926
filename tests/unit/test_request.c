/*
 * test_request.c - POST /v0/run validation: every field, every error code.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "profile.h"
#include "request.h"
#include "path.h"

static struct config cfg;
static struct profile_set profiles;

static int parse(const char *body, struct run_request *r, struct request_error *e)
{
	return request_parse_run(body, strlen(body), &cfg, &profiles, r, e);
}

static void expect_error(const char *body, int status, const char *code)
{
	struct run_request r;
	struct request_error e = {0};
	CHECK_EQ_INT(parse(body, &r, &e), -1);
	CHECK_EQ_INT(e.status, status);
	CHECK_STR(e.code, code);
	CHECK(e.message[0] != '\0');
}

TEST(minimal_request_gets_defaults)
{
	struct run_request r;
	struct request_error e;
	CHECK_EQ_INT(parse("{\"cmd\":\"echo hi\"}", &r, &e), 0);
	CHECK_STR(r.cmd, "echo hi");
	CHECK_STR(r.profile->name, "analyse");
	CHECK_STR(r.cwd, cfg.workspaces[0]);
	CHECK_EQ_INT(r.timeout_s, r.profile->timeout_default_s);
	CHECK(!r.has_stdin && !r.timeout_capped && r.env_count == 0);
	request_free(&r);
	CHECK_EQ_INT(parse(" {\"cmd\":\"x\"}\r\n\t ", &r, &e), 0); /* whitespace around is fine */
	request_free(&r);
}

TEST(every_field)
{
	struct run_request r;
	struct request_error e;
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"cmd\":\"x\",\"profile\":\"build\",\"cwd\":\"%s/./a/../b\",\"timeout_s\":2.5,"
	         "\"stdin\":\"in\",\"env\":{\"A\":\"1\",\"B_2\":\"two\"}}",
	         cfg.workspaces[0]);
	CHECK_EQ_INT(parse(body, &r, &e), 0);
	CHECK_STR(r.profile->name, "build");
	char want[512];
	snprintf(want, sizeof(want), "%s/b", cfg.workspaces[0]);
	CHECK_STR(r.cwd, want);
	CHECK_EQ_INT(r.timeout_s, 3);
	CHECK(r.has_stdin && r.stdin_len == 2);
	CHECK_EQ_INT(r.env_count, 2);
	CHECK_EQ_INT(r.env_len, strlen("A=1") + 1 + strlen("B_2=two") + 1);
	CHECK(memcmp(r.env, "A=1\0B_2=two\0", r.env_len) == 0);
	request_free(&r);
}

TEST(timeout_is_capped)
{
	struct run_request r;
	struct request_error e;
	CHECK_EQ_INT(parse("{\"cmd\":\"x\",\"timeout_s\":1e9}", &r, &e), 0);
	CHECK_EQ_INT(r.timeout_s, r.profile->timeout_max_s);
	CHECK(r.timeout_capped);
	request_free(&r);
}

TEST(bad_json_and_types)
{
	expect_error("", 400, "bad_json");
	expect_error("{\"cmd\":", 400, "bad_json");
	expect_error("[\"cmd\"]", 400, "bad_json");
	expect_error("\"cmd\"", 400, "bad_json");
	expect_error("{\"cmd\":\"a\\u0000b\"}", 400, "bad_json");
	expect_error("{\"cmd\":\"one\"} {\"cmd\":\"two\"}", 400, "bad_json");
	expect_error("{\"cmd\":\"one\"}x", 400, "bad_json");
	expect_error("{}", 400, "missing_field");
	expect_error("{\"cmd\":1}", 400, "bad_field");
	expect_error("{\"cmd\":\"\"}", 400, "bad_field");
	expect_error("{\"cmd\":null}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"profile\":7}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"cwd\":[]}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"timeout_s\":\"5\"}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"timeout_s\":0}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"timeout_s\":-3}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"stdin\":5}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"env\":[]}", 400, "bad_field");
	expect_error("{\"cmd\":\"x\",\"env\":{\"A\":1}}", 400, "bad_env");
}

TEST(unknown_and_duplicate_fields)
{
	struct run_request r;
	struct request_error e;
	CHECK_EQ_INT(parse("{\"cmd\":\"x\",\"colour\":1}", &r, &e), -1);
	CHECK_STR(e.code, "unknown_field");
	CHECK_CONTAINS(e.message, "'colour'");
	expect_error("{\"cmd\":\"x\",\"cmd\":\"y\"}", 400, "duplicate_field");
}

TEST(env_names)
{
	static const char *const dangerous[] = {"PATH", "HOME", "SHELL", "IFS", "LD_PRELOAD", "LD_LIBRARY_PATH",
	                                        "BASH_ENV", "ENV", "PYTHONSTARTUP", "NODE_OPTIONS",
	                                        "PERL5OPT", "RUBYOPT", "GCONV_PATH"};
	char body[256];
	for (size_t i = 0; i < sizeof(dangerous) / sizeof(dangerous[0]); i++) {
		snprintf(body, sizeof(body), "{\"cmd\":\"x\",\"env\":{\"%s\":\"v\"}}", dangerous[i]);
		expect_error(body, 400, "dangerous_env");
	}
	expect_error("{\"cmd\":\"x\",\"env\":{\"1A\":\"v\"}}", 400, "bad_env");
	expect_error("{\"cmd\":\"x\",\"env\":{\"A-B\":\"v\"}}", 400, "bad_env");
	expect_error("{\"cmd\":\"x\",\"env\":{\"\":\"v\"}}", 400, "bad_env");
	expect_error("{\"cmd\":\"x\",\"env\":{\"A\":\"1\",\"A\":\"2\"}}", 400, "duplicate_env");
}

TEST(sizes_are_bounded)
{
	size_t n = 256 * 1024 + 1;
	char *body = malloc(n + 32);
	strcpy(body, "{\"cmd\":\"");
	memset(body + 8, 'a', n);
	strcpy(body + 8 + n, "\"}");
	expect_error(body, 400, "cmd_too_large");
	body[8 + n - 1] = '"';
	body[8 + n] = '}';
	body[8 + n + 1] = '\0';
	struct run_request r;
	struct request_error e;
	CHECK_EQ_INT(parse(body, &r, &e), 0); /* exactly 256 KiB */
	request_free(&r);
	free(body);

	size_t s = 1024 * 1024 + 1;
	body = malloc(s + 64);
	strcpy(body, "{\"cmd\":\"x\",\"stdin\":\"");
	memset(body + 20, 'b', s);
	strcpy(body + 20 + s, "\"}");
	expect_error(body, 413, "stdin_too_large");
	free(body);

	char env[8192] = "{\"cmd\":\"x\",\"env\":{";
	for (int i = 0; i < 65; i++)
		snprintf(env + strlen(env), sizeof(env) - strlen(env), "%s\"V%d\":\"x\"", i ? "," : "", i);
	strcat(env, "}}");
	expect_error(env, 400, "too_many_env");
}

TEST(profiles_and_cwd)
{
	struct run_request r;
	struct request_error e;
	CHECK_EQ_INT(parse("{\"cmd\":\"x\",\"profile\":\"anlyse\"}", &r, &e), -1);
	CHECK_EQ_INT(e.status, 404);
	CHECK_STR(e.code, "unknown_profile");
	CHECK_STR(e.message, "There is no profile named 'anlyse'; GET /v0/profiles lists them.");
	expect_error("{\"cmd\":\"x\",\"cwd\":\"relative\"}", 400, "bad_cwd");
	expect_error("{\"cmd\":\"x\",\"cwd\":\"/etc\"}", 404, "cwd_outside_workspace");
	char body[512];
	/* Lexically outside: ".." climbs out of the workspace. */
	snprintf(body, sizeof(body), "{\"cmd\":\"x\",\"cwd\":\"%s/../..\"}", cfg.workspaces[0]);
	expect_error(body, 404, "cwd_outside_workspace");
	/* A prefix that is not a path component is not inside. */
	snprintf(body, sizeof(body), "{\"cmd\":\"x\",\"cwd\":\"%sx\"}", cfg.workspaces[0]);
	expect_error(body, 404, "cwd_outside_workspace");
	/* Inside, but not text: the approver's listing would be no JSON. */
	/* A stray byte, a cut character, a surrogate, an overlong '/'. */
	const char *bad[] = {"/\xff", "/a\xc3", "/\xed\xa0\x80", "/\xc0\xaf"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body), "{\"cmd\":\"x\",\"cwd\":\"%s%s\"}", cfg.workspaces[0], bad[i]);
		CHECK_EQ_INT(parse(body, &r, &e), -1);
		CHECK_EQ_INT(e.status, 400);
		CHECK_STR(e.code, "bad_cwd");
		CHECK_STR(e.message, "Field 'cwd' must be valid UTF-8.");
	}
	snprintf(body, sizeof(body), "{\"cmd\":\"x\",\"cwd\":\"%s/caf\xc3\xa9\"}", cfg.workspaces[0]);
	CHECK_EQ_INT(parse(body, &r, &e), 0);
	request_free(&r);
}

TEST(normalise_path)
{
	char out[64];
	CHECK_EQ_INT(path_normalise("/a/./b/../c//d/", out, sizeof(out)), 0);
	CHECK_STR(out, "/a/c/d");
	CHECK_EQ_INT(path_normalise("/../..", out, sizeof(out)), 0);
	CHECK_STR(out, "/");
	CHECK_EQ_INT(path_normalise("rel", out, sizeof(out)), -1);
	CHECK_EQ_INT(path_normalise("/aaaaaaaaaa/bbbbbbbbbb", out, 8), -1);
}

int main(void)
{
	char err[256], dir[] = "/tmp/sharness-test-request.XXXXXX";
	if (!mkdtemp(dir) || config_defaults(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "setup: %s\n", err);
		return 1;
	}
	free(cfg.workspaces[0]);
	cfg.workspaces[0] = strdup(dir);
	if (profile_set_load("profiles", &profiles, err, sizeof(err)) < 0) {
		fprintf(stderr, "setup: %s\n", err);
		return 1;
	}
	RUN(minimal_request_gets_defaults);
	RUN(every_field);
	RUN(timeout_is_capped);
	RUN(bad_json_and_types);
	RUN(unknown_and_duplicate_fields);
	RUN(env_names);
	RUN(sizes_are_bounded);
	RUN(profiles_and_cwd);
	RUN(normalise_path);
	profile_set_free(&profiles);
	config_free(&cfg);
	rmdir(dir);
	return harness_done();
}
