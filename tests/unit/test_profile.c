/*
 * test_profile.c - profile.c: every key, defaults, every refusal sentence,
 * the canonical form and its hash, the env-name helpers, directory loading
 * and the three shipped profiles.
 */
#include "profile.h"
#include "harness.h"

#include <limits.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[1024];
static char tmpdir[128];
static char shipped[PATH_MAX]; /* the repository's profiles/ */

#define MIN_PROFILE                                                                      \
	"{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","       \
	" \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}"

/* The minimal profile with every default written out, as canonical() must produce it. */
#define MIN_CANONICAL                                                                    \
	"{\"approval\":\"never\",\"description\":\"d\",\"env\":{},\"exec_paths\":[],"   \
	"\"memory_max_mb\":1024,\"name\":\"t\",\"network\":{\"mode\":\"none\"},"         \
	"\"output_max_bytes\":1048576,\"pids_max\":64,\"read_paths\":[],"                \
	"\"timeout_s\":{\"default\":60,\"max\":600},\"workspace\":\"read-only\","        \
	"\"workspace_exec\":[],\"write_paths\":[]}"

static int parse(const char *json, struct profile *p)
{
	err[0] = '\0';
	return profile_parse("t.json", "t", json, strlen(json), p, err, sizeof(err));
}

/*
 * MIN_PROFILE with its closing brace replaced by `extra` (which starts with
 * ", " and ends with "}"); keys in `extra` that repeat a key of the minimal
 * profile would be duplicates, so those tests spell the whole document.
 */
static const char *with(const char *extra)
{
	static char buf[8192];

	snprintf(buf, sizeof(buf), "%.*s%s", (int)strlen(MIN_PROFILE) - 1, MIN_PROFILE, extra);
	return buf;
}

/* The document must be refused with exactly `want`, leaving the profile empty. */
static int refused(const char *json, const char *want)
{
	struct profile p;
	int ok;

	memset(&p, 0x5a, sizeof(p));
	ok = parse(json, &p) == -1 && !strcmp(err, want) && p.canonical_json == NULL &&
	     p.n_env == 0 && p.name[0] == '\0';
	if (!ok)
		fprintf(stderr, "# for %s\n#   got  \"%s\"\n#   want \"%s\"\n", json, err, want);
	profile_free(&p);
	return ok;
}

static void hash_of(const char *s, char out[PROFILE_HASH_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256((const unsigned char *)s, strlen(s), md);
	strcpy(out, "sha256:");
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		sprintf(out + 7 + 2 * i, "%02x", md[i]);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* A fresh directory under tmpdir. */
static const char *newdir(const char *name)
{
	static char path[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", tmpdir, name);
	if (mkdir(path[i], 0755) < 0) {
		perror(path[i]);
		exit(2);
	}
	return path[i];
}

/* A valid profile document named `name`. */
static const char *doc(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
	         "{\"name\": \"%s\", \"description\": \"d\", \"workspace\": \"read-only\","
	         " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	         name);
	return buf;
}

TEST(minimal_profile_defaults)
{
	struct profile p;
	char want[PROFILE_HASH_LEN + 1];

	CHECK_EQ_INT(parse(MIN_PROFILE, &p), 0);
	CHECK_STR(err, "");
	CHECK_STR(p.name, "t");
	CHECK_STR(p.description, "d");
	CHECK(!p.workspace_write);
	CHECK_EQ_INT(p.n_workspace_exec + p.n_read_paths + p.n_write_paths + p.n_exec_paths, 0);
	CHECK_EQ_INT(p.network, PROFILE_NETWORK_NONE);
	CHECK_EQ_INT(p.n_proxy_allow, 0);
	CHECK_EQ_INT(p.pids_max, 64);
	CHECK_EQ_INT(p.memory_max, 1024ull << 20);
	CHECK_EQ_INT(p.timeout_default_s, 60);
	CHECK_EQ_INT(p.timeout_max_s, 600);
	CHECK_EQ_INT(p.output_max, 1 << 20);
	CHECK_EQ_INT(p.n_env, 0);
	CHECK_EQ_INT(p.approval, PROFILE_APPROVAL_NEVER);
	CHECK_STR(p.canonical_json, MIN_CANONICAL);
	hash_of(MIN_CANONICAL, want);
	CHECK_STR(p.policy_hash, want);
	CHECK_EQ_INT(strlen(p.policy_hash), PROFILE_HASH_LEN);
	profile_free(&p);
	CHECK(p.canonical_json == NULL);
}

TEST(every_key)
{
	struct profile p;
	const char *json =
		"{\"name\": \"t\", \"description\": \"Every key — set\", \"workspace\": \"read-write\","
		" \"workspace_exec\": [\"target/\", \"node_modules/.bin\"],"
		" \"read_paths\": [\"/opt/sdk\", \"/usr/share/dict/\"],"
		" \"write_paths\": [\"/var/cache/t\"], \"exec_paths\": [\"/opt/tools/bin\"],"
		" \"network\": {\"mode\": \"proxy\", \"allow\": [\"pypi.org\", \"*.npmjs.org\","
		" \"github.com:443\"]},"
		" \"pids_max\": 4096, \"memory_max_mb\": 0, \"timeout_s\": {\"default\": 1, \"max\": 86400},"
		" \"output_max_bytes\": 1024, \"env\": {\"CI\": \"1\", \"CARGO_TERM_COLOR\": \"never\"},"
		" \"approval\": \"each\"}";

	CHECK_EQ_INT(parse(json, &p), 0);
	CHECK_STR(err, "");
	CHECK_STR(p.description, "Every key — set");
	CHECK(p.workspace_write);
	/* Lists are sets: stored sorted, paths without a trailing slash. */
	CHECK_EQ_INT(p.n_workspace_exec, 2);
	CHECK_STR(p.workspace_exec[0], "node_modules/.bin");
	CHECK_STR(p.workspace_exec[1], "target");
	CHECK_EQ_INT(p.n_read_paths, 2);
	CHECK_STR(p.read_paths[0], "/opt/sdk");
	CHECK_STR(p.read_paths[1], "/usr/share/dict");
	CHECK_EQ_INT(p.n_write_paths, 1);
	CHECK_STR(p.write_paths[0], "/var/cache/t");
	CHECK_EQ_INT(p.n_exec_paths, 1);
	CHECK_STR(p.exec_paths[0], "/opt/tools/bin");
	CHECK_EQ_INT(p.network, PROFILE_NETWORK_PROXY);
	CHECK_EQ_INT(p.n_proxy_allow, 3);
	CHECK_STR(p.proxy_allow[0], "*.npmjs.org");
	CHECK_STR(p.proxy_allow[1], "github.com:443");
	CHECK_STR(p.proxy_allow[2], "pypi.org");
	CHECK_EQ_INT(p.pids_max, 4096);
	CHECK_EQ_INT(p.memory_max, 0);
	CHECK_EQ_INT(p.timeout_default_s, 1);
	CHECK_EQ_INT(p.timeout_max_s, 86400);
	CHECK_EQ_INT(p.output_max, 1024);
	CHECK_EQ_INT(p.n_env, 2);
	CHECK_STR(p.env[0].name, "CARGO_TERM_COLOR");
	CHECK_STR(p.env[0].value, "never");
	CHECK_STR(p.env[1].name, "CI");
	CHECK_STR(p.env[1].value, "1");
	CHECK_EQ_INT(p.approval, PROFILE_APPROVAL_EACH);
	CHECK_STR(p.canonical_json,
	          "{\"approval\":\"each\",\"description\":\"Every key — set\","
	          "\"env\":{\"CARGO_TERM_COLOR\":\"never\",\"CI\":\"1\"},"
	          "\"exec_paths\":[\"/opt/tools/bin\"],\"memory_max_mb\":0,\"name\":\"t\","
	          "\"network\":{\"allow\":[\"*.npmjs.org\",\"github.com:443\",\"pypi.org\"],"
	          "\"mode\":\"proxy\"},\"output_max_bytes\":1024,\"pids_max\":4096,"
	          "\"read_paths\":[\"/opt/sdk\",\"/usr/share/dict\"],"
	          "\"timeout_s\":{\"default\":1,\"max\":86400},\"workspace\":\"read-write\","
	          "\"workspace_exec\":[\"node_modules/.bin\",\"target\"],"
	          "\"write_paths\":[\"/var/cache/t\"]}");
	profile_free(&p);
}

TEST(hash_is_stable_across_form)
{
	struct profile a, b, c;
	/* Same meaning as MIN_PROFILE: reordered, reformatted, defaults written out. */
	const char *same =
		"{\n\t\"approval\" : \"never\",\"env\":{ },\n  \"timeout_s\": {\"max\": 600, \"default\": 60},"
		"\"network\":{\"mode\":\"none\"},\"pids_max\":64.0,\"memory_max_mb\":1024,"
		"\"output_max_bytes\":1048576,\"read_paths\":[],\"write_paths\":[],\"exec_paths\":[],"
		"\"workspace_exec\":[],\"workspace\":\"read-only\",\"description\":\"d\",\"name\":\"t\"}\n\n";
	const char *lists1 =
		"{\"name\":\"t\",\"description\":\"d\",\"workspace\":\"read-only\",\"approval\":\"never\","
		"\"read_paths\":[\"/b\",\"/a/\"],\"env\":{\"B\":\"2\",\"A\":\"1\"},"
		"\"network\":{\"allow\":[\"y.org\",\"x.org\"],\"mode\":\"proxy\"}}";
	const char *lists2 =
		"{\"network\":{\"mode\":\"proxy\",\"allow\":[\"x.org\",\"y.org\"]},"
		"\"env\":{\"A\":\"1\",\"B\":\"2\"},\"read_paths\":[\"/a\",\"/b\"],"
		"\"name\":\"t\",\"description\":\"d\",\"workspace\":\"read-only\",\"approval\":\"never\"}";

	CHECK_EQ_INT(parse(MIN_PROFILE, &a), 0);
	CHECK_EQ_INT(parse(same, &b), 0);
	CHECK_STR(a.canonical_json, b.canonical_json);
	CHECK_STR(a.policy_hash, b.policy_hash);
	profile_free(&b);
	CHECK_EQ_INT(parse(lists1, &b), 0);
	CHECK_EQ_INT(parse(lists2, &c), 0);
	CHECK_STR(b.policy_hash, c.policy_hash);
	CHECK(strcmp(a.policy_hash, b.policy_hash) != 0);
	profile_free(&a);
	profile_free(&b);
	profile_free(&c);
}

TEST(hash_changes_with_meaning)
{
	static const char *const variants[] = {
		", \"pids_max\": 65}",
		", \"memory_max_mb\": 1023}",
		", \"timeout_s\": {\"default\": 61, \"max\": 600}}",
		", \"timeout_s\": {\"default\": 60, \"max\": 601}}",
		", \"output_max_bytes\": 1048577}",
		", \"env\": {\"A\": \"1\"}}",
		", \"env\": {\"A\": \"\"}}",
		", \"read_paths\": [\"/opt\"]}",
		", \"write_paths\": [\"/opt\"]}",
		", \"exec_paths\": [\"/opt\"]}",
		", \"workspace_exec\": [\"opt\"]}",
	};
	struct profile base, p;

	CHECK_EQ_INT(parse(MIN_PROFILE, &base), 0);
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		CHECK_EQ_INT(parse(with(variants[i]), &p), 0);
		if (p.canonical_json && strcmp(p.policy_hash, base.policy_hash) == 0)
			fprintf(stderr, "# same hash for %s\n", variants[i]);
		CHECK(p.canonical_json && strcmp(p.policy_hash, base.policy_hash) != 0);
		profile_free(&p);
	}
	/* The required keys' values too. */
	CHECK_EQ_INT(parse("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-write\","
	                   " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}", &p), 0);
	CHECK(strcmp(p.policy_hash, base.policy_hash) != 0);
	profile_free(&p);
	CHECK_EQ_INT(parse("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	                   " \"network\": {\"mode\": \"none\"}, \"approval\": \"each\"}", &p), 0);
	CHECK(strcmp(p.policy_hash, base.policy_hash) != 0);
	profile_free(&p);
	CHECK_EQ_INT(parse("{\"name\": \"t\", \"description\": \"e\", \"workspace\": \"read-only\","
	                   " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}", &p), 0);
	CHECK(strcmp(p.policy_hash, base.policy_hash) != 0);
	profile_free(&p);
	profile_free(&base);
}

TEST(required_keys)
{
	CHECK(refused("{\"description\": \"d\", \"workspace\": \"read-only\", \"network\": {\"mode\": \"none\"},"
	              " \"approval\": \"never\"}", "t.json: key 'name' is required"));
	CHECK(refused("{\"name\": \"t\", \"workspace\": \"read-only\", \"network\": {\"mode\": \"none\"},"
	              " \"approval\": \"never\"}", "t.json: key 'description' is required"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"network\": {\"mode\": \"none\"},"
	              " \"approval\": \"never\"}", "t.json: key 'workspace' is required"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"approval\": \"never\"}", "t.json: key 'network' is required"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}}", "t.json: key 'approval' is required"));
}

TEST(unknown_and_duplicate_keys)
{
	CHECK(refused(with(", \"netwrk\": {}}"), "t.json: key 'netwrk' is unknown"));
	CHECK(refused(with(", \"Approval\": \"each\"}"), "t.json: key 'Approval' is unknown"));
	CHECK(refused(with(", \"approval\": \"each\"}"), "t.json: key 'approval' appears more than once"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\", \"hosts\": []}, \"approval\": \"never\"}",
	              "t.json: key 'network.hosts' is unknown"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\", \"mode\": \"proxy\"}, \"approval\": \"never\"}",
	              "t.json: key 'network.mode' appears more than once"));
	CHECK(refused(with(", \"timeout_s\": {\"default\": 1, \"max\": 2, \"min\": 1}}"),
	              "t.json: key 'timeout_s.min' is unknown"));
	CHECK(refused(with(", \"env\": {\"A\": \"1\", \"A\": \"2\"}}"),
	              "t.json: key 'env.A' appears more than once"));
}

TEST(not_json)
{
	CHECK(refused("", "t.json: not valid JSON near line 1"));
	CHECK(refused("{\"name\": \"t\",\n\n\"x\" 1}", "t.json: not valid JSON near line 3"));
	CHECK(refused(MIN_PROFILE " {}", "t.json: not valid JSON near line 1"));
	CHECK(refused("[]", "t.json: the profile must be a JSON object"));
	CHECK(refused("\"analyse\"", "t.json: the profile must be a JSON object"));
	CHECK(refused("{\"name\": \"t\\u0000x\"}", "t.json: a string holds \\u0000, which is not allowed"));
	CHECK(refused("{\"description\": \"\xff\"}", "t.json: not valid UTF-8 text"));
	CHECK(refused("{\"description\": \"\xc0\xaf\"}", "t.json: not valid UTF-8 text")); /* overlong */
	CHECK(refused("{\"description\": \"\xed\xa0\x80\"}", "t.json: not valid UTF-8 text")); /* surrogate */
	CHECK(refused("{\"description\": \"\xe2\x82\"}", "t.json: not valid UTF-8 text")); /* truncated */
	{
		struct profile p;
		const char nul[] = "{} \0";

		CHECK_EQ_INT(profile_parse("t.json", NULL, nul, sizeof(nul) - 1, &p, err, sizeof(err)), -1);
		CHECK_STR(err, "t.json: not valid UTF-8 text");
	}
}

TEST(name)
{
	struct profile p;

	CHECK(refused("{\"name\": 1, \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'name' must be a string"));
	CHECK(refused("{\"name\": \"T\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'name' must match [a-z][a-z0-9_-]* and be at most 31 bytes"));
	CHECK(refused("{\"name\": \"x\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'name' is 'x' but the file is named 't.json'; they must match"));
	/* Without an expected name (a document, not a file), any valid name does. */
	CHECK_EQ_INT(profile_parse("doc", NULL, doc("a-b_1"), strlen(doc("a-b_1")), &p, err, sizeof(err)), 0);
	CHECK_STR(p.name, "a-b_1");
	profile_free(&p);
	CHECK_EQ_INT(profile_parse("doc", NULL, doc("abcdefghijklmnopqrstuvwxyz01234"),
	                           strlen(doc("abcdefghijklmnopqrstuvwxyz01234")), &p, err, sizeof(err)), 0);
	profile_free(&p);
	CHECK_EQ_INT(profile_parse("doc", NULL, doc("abcdefghijklmnopqrstuvwxyz012345"),
	                           strlen(doc("abcdefghijklmnopqrstuvwxyz012345")), &p, err, sizeof(err)), -1);
	CHECK_STR(err, "doc: key 'name' must match [a-z][a-z0-9_-]* and be at most 31 bytes");
	CHECK_EQ_INT(profile_parse("doc", NULL, doc("1abc"), strlen(doc("1abc")), &p, err, sizeof(err)), -1);
	CHECK_EQ_INT(profile_parse("doc", NULL, doc(""), strlen(doc("")), &p, err, sizeof(err)), -1);
	CHECK_EQ_INT(profile_parse("doc", NULL, doc("a.b"), strlen(doc("a.b")), &p, err, sizeof(err)), -1);
}

TEST(description)
{
	char json[1024], longd[300];

	CHECK(refused("{\"name\": \"t\", \"description\": [], \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'description' must be a string"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'description' must not be empty"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"a\\nb\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'description' must be one line without control characters"));
	memset(longd, 'x', 256);
	longd[256] = '\0';
	snprintf(json, sizeof(json), "{\"name\": \"t\", \"description\": \"%s\", \"workspace\": \"read-only\","
	         " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}", longd);
	CHECK(refused(json, "t.json: key 'description' must be at most 255 bytes"));
}

TEST(workspace_and_approval_values)
{
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"rw\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'workspace' must be \"read-only\" or \"read-write\""));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": true,"
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'workspace' must be \"read-only\" or \"read-write\""));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": \"always\"}",
	              "t.json: key 'approval' must be \"never\" or \"each\""));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\"}, \"approval\": false}",
	              "t.json: key 'approval' must be \"never\" or \"each\""));
}

TEST(path_lists)
{
	char json[4096];
	size_t off;

	CHECK(refused(with(", \"read_paths\": \"/opt\"}"), "t.json: key 'read_paths' must be a list of strings"));
	CHECK(refused(with(", \"write_paths\": [1]}"), "t.json: key 'write_paths' must be a list of strings"));
	CHECK(refused(with(", \"read_paths\": [\"opt\"]}"),
	              "t.json: key 'read_paths' entry 'opt' must be an absolute path without '..', '.' "
	              "or empty components"));
	CHECK(refused(with(", \"exec_paths\": [\"/opt/../etc\"]}"),
	              "t.json: key 'exec_paths' entry '/opt/../etc' must be an absolute path without "
	              "'..', '.' or empty components"));
	CHECK(refused(with(", \"write_paths\": [\"/var//tmp\"]}"),
	              "t.json: key 'write_paths' entry '/var//tmp' must be an absolute path without "
	              "'..', '.' or empty components"));
	CHECK(refused(with(", \"read_paths\": [\"/opt/./x\"]}"),
	              "t.json: key 'read_paths' entry '/opt/./x' must be an absolute path without "
	              "'..', '.' or empty components"));
	CHECK(refused(with(", \"read_paths\": [\"\"]}"),
	              "t.json: key 'read_paths' entry '' must be an absolute path without "
	              "'..', '.' or empty components"));
	CHECK(refused(with(", \"write_paths\": [\"/\"]}"),
	              "t.json: key 'write_paths' entry '/' names the root directory; name the "
	              "directories instead"));
	CHECK(refused(with(", \"read_paths\": [\"//\"]}"),
	              "t.json: key 'read_paths' entry '/' names the root directory; name the "
	              "directories instead"));
	CHECK(refused(with(", \"read_paths\": [\"/opt\", \"/opt/\"]}"),
	              "t.json: key 'read_paths' names '/opt' more than once"));
	CHECK(refused(with(", \"workspace_exec\": [\"/target\"]}"),
	              "t.json: key 'workspace_exec' entry '/target' must be a relative path inside the "
	              "workspace, without '..', '.' or empty components"));
	CHECK(refused(with(", \"workspace_exec\": [\"../x\"]}"),
	              "t.json: key 'workspace_exec' entry '../x' must be a relative path inside the "
	              "workspace, without '..', '.' or empty components"));
	CHECK(refused(with(", \"workspace_exec\": [\"a/..\"]}"),
	              "t.json: key 'workspace_exec' entry 'a/..' must be a relative path inside the "
	              "workspace, without '..', '.' or empty components"));
	CHECK(refused(with(", \"workspace_exec\": [\".\"]}"),
	              "t.json: key 'workspace_exec' entry '.' must be a relative path inside the "
	              "workspace, without '..', '.' or empty components"));
	CHECK(refused(with(", \"exec_paths\": [\"/opt/t\"], \"write_paths\": [\"/opt\"]}"),
	              "t.json: key 'exec_paths' entry '/opt/t' overlaps 'write_paths' entry '/opt'; a "
	              "path may be writable or executable, not both"));
	CHECK(refused(with(", \"exec_paths\": [\"/opt\"], \"write_paths\": [\"/opt/cache\"]}"),
	              "t.json: key 'exec_paths' entry '/opt' overlaps 'write_paths' entry '/opt/cache'; a "
	              "path may be writable or executable, not both"));
	/* A shared prefix is not an overlap. */
	{
		struct profile p;

		CHECK_EQ_INT(parse(with(", \"exec_paths\": [\"/opt/a\"], \"write_paths\": [\"/opt/ab\"]}"), &p), 0);
		profile_free(&p);
	}
	/* At most PROFILE_LIST_MAX entries. */
	off = (size_t)snprintf(json, sizeof(json), ", \"read_paths\": [");
	for (int i = 0; i <= PROFILE_LIST_MAX; i++)
		off += (size_t)snprintf(json + off, sizeof(json) - off, "%s\"/p%d\"", i ? "," : "", i);
	snprintf(json + off, sizeof(json) - off, "]}");
	CHECK(refused(with(json), "t.json: key 'read_paths' holds more than 32 entries"));
}

TEST(network)
{
	struct profile p;
	static const char *const bad_hosts[] = {
		"PyPI.org", "pypi.org.", ".pypi.org", "pypi..org", "-x.org", "x-.org", "*", "*.",
		"a*.org", "*.*.org", "pypi.org:", "pypi.org:0", "pypi.org:65536", "pypi.org:080",
		"pypi.org:http", "https://pypi.org", "pypi.org/simple", "py pi.org", "",
		"[::1]:443", "pypi_org.org",
	};
	char extra[512], want[512];

	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": \"none\", \"approval\": \"never\"}",
	              "t.json: key 'network' must be an object such as {\"mode\": \"none\"} or "
	              "{\"mode\": \"proxy\", \"allow\": [...]}"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {}, \"approval\": \"never\"}",
	              "t.json: key 'network.mode' is required"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"host\"}, \"approval\": \"never\"}",
	              "t.json: key 'network.mode' must be \"none\" or \"proxy\""));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"none\", \"allow\": []}, \"approval\": \"never\"}",
	              "t.json: key 'network.allow' is only allowed when 'network.mode' is \"proxy\""));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"proxy\"}, \"approval\": \"never\"}",
	              "t.json: key 'network.allow' is required when 'network.mode' is \"proxy\""));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"proxy\", \"allow\": []}, \"approval\": \"never\"}",
	              "t.json: key 'network.allow' must name at least one host"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"proxy\", \"allow\": [\"a.org\", \"a.org\"]},"
	              " \"approval\": \"never\"}",
	              "t.json: key 'network.allow' names 'a.org' more than once"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	              " \"network\": {\"mode\": \"proxy\", \"allow\": [\"*.org\"]}, \"approval\": \"never\"}",
	              "t.json: key 'network.allow' entry '*.org' is a wildcard over a top-level domain; "
	              "name at least two labels after '*.'"));
	for (size_t i = 0; i < sizeof(bad_hosts) / sizeof(bad_hosts[0]); i++) {
		snprintf(extra, sizeof(extra),
		         "{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
		         " \"network\": {\"mode\": \"proxy\", \"allow\": [\"%s\"]}, \"approval\": \"never\"}",
		         bad_hosts[i]);
		snprintf(want, sizeof(want),
		         "t.json: key 'network.allow' entry '%s' must be a lower-case host name or "
		         "'*.domain', optionally with ':PORT'",
		         bad_hosts[i]);
		CHECK(refused(extra, want));
	}
	CHECK_EQ_INT(parse("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-only\","
	                   " \"network\": {\"mode\": \"proxy\", \"allow\": [\"localhost\", \"10.0.0.5:8080\","
	                   " \"*.githubusercontent.com\", \"x.org:65535\", \"a-b.c0.org:1\"]},"
	                   " \"approval\": \"never\"}", &p), 0);
	CHECK_EQ_INT(p.n_proxy_allow, 5);
	profile_free(&p);
}

TEST(numbers)
{
	struct profile p;

	CHECK(refused(with(", \"pids_max\": 0}"), "t.json: key 'pids_max' must be a whole number from 1 to 4096"));
	CHECK(refused(with(", \"pids_max\": 4097}"), "t.json: key 'pids_max' must be a whole number from 1 to 4096"));
	CHECK(refused(with(", \"pids_max\": 2.5}"), "t.json: key 'pids_max' must be a whole number from 1 to 4096"));
	CHECK(refused(with(", \"pids_max\": \"64\"}"), "t.json: key 'pids_max' must be a number"));
	CHECK(refused(with(", \"memory_max_mb\": -1}"),
	              "t.json: key 'memory_max_mb' must be a whole number from 0 to 65536"));
	CHECK(refused(with(", \"memory_max_mb\": 65537}"),
	              "t.json: key 'memory_max_mb' must be a whole number from 0 to 65536"));
	CHECK(refused(with(", \"output_max_bytes\": 1023}"),
	              "t.json: key 'output_max_bytes' must be a whole number from 1024 to 67108864"));
	CHECK(refused(with(", \"output_max_bytes\": 67108865}"),
	              "t.json: key 'output_max_bytes' must be a whole number from 1024 to 67108864"));
	CHECK_EQ_INT(parse(with(", \"memory_max_mb\": 65536, \"output_max_bytes\": 67108864}"), &p), 0);
	CHECK_EQ_INT(p.memory_max, 65536ull << 20);
	CHECK_EQ_INT(p.output_max, 64 << 20);
	profile_free(&p);
}

TEST(timeouts)
{
	CHECK(refused(with(", \"timeout_s\": 60}"),
	              "t.json: key 'timeout_s' must be an object {\"default\": N, \"max\": N}"));
	CHECK(refused(with(", \"timeout_s\": {\"default\": 60}}"), "t.json: key 'timeout_s.max' is required"));
	CHECK(refused(with(", \"timeout_s\": {\"max\": 60}}"), "t.json: key 'timeout_s.default' is required"));
	CHECK(refused(with(", \"timeout_s\": {\"default\": 0, \"max\": 60}}"),
	              "t.json: key 'timeout_s.default' must be a whole number from 1 to 86400"));
	CHECK(refused(with(", \"timeout_s\": {\"default\": 1, \"max\": 86401}}"),
	              "t.json: key 'timeout_s.max' must be a whole number from 1 to 86400"));
	CHECK(refused(with(", \"timeout_s\": {\"default\": 61, \"max\": 60}}"),
	              "t.json: key 'timeout_s.default' (61) is larger than 'timeout_s.max' (60)"));
}

/* The test profile's keys: exec in /tmp, and exec subpaths made at prep. */
TEST(tmp_and_exec_create)
{
	struct profile p;

	CHECK(refused(with(", \"tmp\": \"yes\"}"), "t.json: key 'tmp' must be \"noexec\" or \"exec\""));
	CHECK(refused(with(", \"workspace_exec_create\": 1}"),
	              "t.json: key 'workspace_exec_create' must be true or false"));
	CHECK(refused(with(", \"workspace_exec\": [\"target\"], \"workspace_exec_create\": true}"),
	              "t.json: key 'workspace_exec_create' needs a read-write workspace and workspace_exec "
	              "entries of one component ('target' is not)"));
	CHECK(refused("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-write\", "
	              "\"workspace_exec\": [\"target/debug\"], \"workspace_exec_create\": true, "
	              "\"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}",
	              "t.json: key 'workspace_exec_create' needs a read-write workspace and workspace_exec "
	              "entries of one component ('target/debug' is not)"));
	/* The defaults stay out of the canonical form: old hashes hold. */
	CHECK_EQ_INT(parse(with(", \"tmp\": \"noexec\", \"workspace_exec_create\": false}"), &p), 0);
	CHECK_STR(p.canonical_json, MIN_CANONICAL);
	CHECK(!p.tmp_exec && !p.workspace_exec_create);
	profile_free(&p);
	CHECK_EQ_INT(parse("{\"name\": \"t\", \"description\": \"d\", \"workspace\": \"read-write\", "
	                   "\"workspace_exec\": [\"target\"], \"workspace_exec_create\": true, \"tmp\": \"exec\", "
	                   "\"network\": {\"mode\": \"none\"}, \"approval\": \"never\"}", &p), 0);
	CHECK(p.tmp_exec && p.workspace_exec_create);
	CHECK(p.canonical_json && strstr(p.canonical_json, "\"tmp\":\"exec\"") &&
	      strstr(p.canonical_json, "\"workspace_exec_create\":true"));
	profile_free(&p);
}

TEST(env_grants)
{
	char json[8192], longv[4200];
	size_t off;

	CHECK(refused(with(", \"env\": []}"), "t.json: key 'env' must be an object of strings"));
	CHECK(refused(with(", \"env\": {\"A\": 1}}"), "t.json: key 'env.A' must be a string"));
	CHECK(refused(with(", \"env\": {\"1A\": \"x\"}}"),
	              "t.json: key 'env.1A' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*, at most "
	              "127 bytes)"));
	CHECK(refused(with(", \"env\": {\"A-B\": \"x\"}}"),
	              "t.json: key 'env.A-B' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*, at most "
	              "127 bytes)"));
	CHECK(refused(with(", \"env\": {\"\": \"x\"}}"),
	              "t.json: key 'env.' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*, at most "
	              "127 bytes)"));
	CHECK(refused(with(", \"env\": {\"A=B\": \"x\"}}"),
	              "t.json: key 'env.A=B' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*, at most "
	              "127 bytes)"));
	CHECK(refused(with(", \"env\": {\"LD_PRELOAD\": \"/x.so\"}}"),
	              "t.json: key 'env.LD_PRELOAD' may not be granted: the sandbox sets it itself or it "
	              "makes programs load or run other code"));
	CHECK(refused(with(", \"env\": {\"PATH\": \"/x\"}}"),
	              "t.json: key 'env.PATH' may not be granted: the sandbox sets it itself or it "
	              "makes programs load or run other code"));
	CHECK(refused(with(", \"env\": {\"https_proxy\": \"http://evil\"}}"),
	              "t.json: key 'env.https_proxy' may not be granted: the sandbox sets it itself or it "
	              "makes programs load or run other code"));
	memset(longv, 'v', 4097);
	longv[4097] = '\0';
	snprintf(json, sizeof(json), ", \"env\": {\"V\": \"%s\"}}", longv);
	CHECK(refused(with(json), "t.json: key 'env.V' is longer than 4096 bytes"));
	off = (size_t)snprintf(json, sizeof(json), ", \"env\": {");
	for (int i = 0; i <= PROFILE_LIST_MAX; i++)
		off += (size_t)snprintf(json + off, sizeof(json) - off, "%s\"V%d\": \"x\"", i ? "," : "", i);
	snprintf(json + off, sizeof(json) - off, "}}");
	CHECK(refused(with(json), "t.json: key 'env' holds more than 32 entries"));
}

TEST(env_name_helpers)
{
	static const char *const valid[] = {"A", "_", "a", "_A1", "CARGO_HOME", "x9_y"};
	static const char *const invalid[] = {"", "1", "A-B", "A B", "A=B", "É", "A.B", "$A"};
	static const char *const dangerous[] = {
		"PATH", "HOME", "SHELL", "IFS", "ENV", "BASH_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
		"LD_", "ld_preload", "Path", "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT",
		"GCONV_PATH", "GLIBC_TUNABLES", "SHELLOPTS", "PROMPT_COMMAND", "PS4",
		"BASH_FUNC_x%%", "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "NO_PROXY",
		"GIT_SSH_COMMAND", "GIT_CONFIG_KEY_0", "GIT_CONFIG_PARAMETERS", "JAVA_TOOL_OPTIONS",
		"SHARNESS_RUN", "PYTHONPATH", "PERL5LIB",
	};
	static const char *const fine[] = {"CI", "LANG", "TZ", "TMPDIR", "CARGO_TERM_COLOR",
	                                   "NPM_CONFIG_LOGLEVEL", "PATHX", "LDFLAGS", "HOMEBREW",
	                                   "ENVIRONMENT", "MY_PATH"};
	char longname[200];

	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		CHECK(profile_env_name_valid(valid[i]));
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		CHECK(!profile_env_name_valid(invalid[i]));
	CHECK(!profile_env_name_valid(NULL));
	memset(longname, 'A', 127);
	longname[127] = '\0';
	CHECK(profile_env_name_valid(longname));
	longname[127] = 'A';
	longname[128] = '\0';
	CHECK(!profile_env_name_valid(longname));
	for (size_t i = 0; i < sizeof(dangerous) / sizeof(dangerous[0]); i++) {
		if (!profile_env_name_dangerous(dangerous[i]))
			fprintf(stderr, "# %s should be dangerous\n", dangerous[i]);
		CHECK(profile_env_name_dangerous(dangerous[i]));
	}
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		if (profile_env_name_dangerous(fine[i]))
			fprintf(stderr, "# %s should be fine\n", fine[i]);
		CHECK(!profile_env_name_dangerous(fine[i]));
	}
	CHECK(profile_env_name_dangerous(NULL));
}

TEST(free_is_safe)
{
	struct profile p;
	struct profile_set s = {0};

	profile_free(NULL);
	profile_set_free(NULL);
	profile_set_free(&s);
	CHECK_EQ_INT(parse(MIN_PROFILE, &p), 0);
	profile_free(&p);
	profile_free(&p);
}

TEST(shipped_profiles)
{
	struct profile_set set;
	const struct profile *p;
	size_t id = 99;

	CHECK_EQ_INT(profile_set_load(shipped, &set, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_EQ_INT(set.n, 4);
	if (set.n != 4)
		return;
	/* Sorted by file name: the launcher's table keys are these indexes. */
	CHECK_STR(set.v[0].name, "admin");
	CHECK_STR(set.v[1].name, "analyse");
	CHECK_STR(set.v[2].name, "build");
	CHECK_STR(set.v[3].name, "test");

	p = profile_set_find(&set, "analyse", &id);
	CHECK(p == &set.v[1]);
	CHECK_EQ_INT(id, 1);
	CHECK(p && !p->workspace_write && p->network == PROFILE_NETWORK_NONE &&
	      p->approval == PROFILE_APPROVAL_NEVER && p->pids_max == 64);

	p = profile_set_find(&set, "build", &id);
	CHECK_EQ_INT(id, 2);
	CHECK(p && p->workspace_write && p->network == PROFILE_NETWORK_PROXY &&
	      p->approval == PROFILE_APPROVAL_NEVER);
	if (p) {
		static const char *const want[] = {"pypi.org", "files.pythonhosted.org",
		                                   "registry.npmjs.org", "crates.io", "static.crates.io",
		                                   "index.crates.io", "proxy.golang.org", "sum.golang.org",
		                                   "deb.debian.org", "github.com", "codeload.github.com",
		                                   "*.githubusercontent.com", "rubygems.org",
		                                   "repo.maven.apache.org", "repo1.maven.org"};

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			bool found = false;

			for (size_t k = 0; k < p->n_proxy_allow; k++)
				found = found || !strcmp(p->proxy_allow[k], want[i]);
			if (!found)
				fprintf(stderr, "# build does not allow %s\n", want[i]);
			CHECK(found);
		}
	}

	p = profile_set_find(&set, "admin", &id);
	CHECK_EQ_INT(id, 0);
	CHECK(p && p->workspace_write && p->network == PROFILE_NETWORK_NONE &&
	      p->approval == PROFILE_APPROVAL_EACH);

	/* test: offline, exec only in the build outputs it makes and in /tmp. */
	p = profile_set_find(&set, "test", &id);
	CHECK_EQ_INT(id, 3);
	CHECK(p && p->workspace_write && p->network == PROFILE_NETWORK_NONE &&
	      p->approval == PROFILE_APPROVAL_NEVER && p->workspace_exec_create && p->tmp_exec &&
	      p->n_workspace_exec == 3 && p->n_exec_paths + p->n_write_paths + p->n_read_paths == 0);

	/* The verdict table: analyse, build and admin execute nothing from the
	 * workspace and grant no extra paths. */
	for (size_t i = 0; i < 3; i++) {
		CHECK_EQ_INT(set.v[i].n_workspace_exec, 0);
		CHECK(!set.v[i].tmp_exec && !set.v[i].workspace_exec_create);
		CHECK_EQ_INT(set.v[i].n_exec_paths + set.v[i].n_write_paths + set.v[i].n_read_paths, 0);
		CHECK_EQ_INT(strncmp(set.v[i].policy_hash, "sha256:", 7), 0);
	}
	CHECK(profile_set_find(&set, "anlyse", &id) == NULL);
	CHECK(profile_set_find(&set, "", NULL) == NULL);
	CHECK(profile_set_find(&set, "Analyse", NULL) == NULL);
	profile_set_free(&set);
	CHECK(set.v == NULL && set.n == 0);
}

TEST(set_load)
{
	struct profile_set set;
	const char *d = newdir("set");

	write_file(d, "zeta.json", doc("zeta"));
	write_file(d, "alpha.json", doc("alpha"));
	write_file(d, "README.md", "not a profile");
	write_file(d, ".alpha.json.swp", "junk");
	write_file(d, "notes.json~", "junk");
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), 0);
	CHECK_EQ_INT(set.n, 2);
	if (set.n == 2) {
		CHECK_STR(set.v[0].name, "alpha");
		CHECK_STR(set.v[1].name, "zeta");
	}
	profile_set_free(&set);
}

TEST(set_load_errors)
{
	struct profile_set set;
	char want[PATH_MAX + 128], path[PATH_MAX];
	const char *d;

	CHECK_EQ_INT(profile_set_load("/nonexistent/profiles", &set, err, sizeof(err)), -1);
	CHECK_STR(err, "/nonexistent/profiles: cannot open the profiles directory: No such file or directory");
	CHECK(set.v == NULL && set.n == 0);

	d = newdir("empty");
	write_file(d, "README", "x");
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: holds no profile (no *.json file)", d);
	CHECK_STR(err, want);

	d = newdir("mismatch");
	write_file(d, "a.json", doc("a"));
	write_file(d, "build.json", doc("buidl"));
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
	         "%s/build.json: key 'name' is 'buidl' but the file is named 'build.json'; they must match", d);
	CHECK_STR(err, want);
	CHECK(set.v == NULL && set.n == 0);

	d = newdir("badkey");
	write_file(d, "a.json", doc("a"));
	write_file(d, "build.json",
	           "{\"name\": \"build\", \"description\": \"d\", \"workspace\": \"read-only\","
	           " \"netwrk\": {\"mode\": \"none\"}, \"approval\": \"never\"}");
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/build.json: key 'netwrk' is unknown", d);
	CHECK_STR(err, want);

	d = newdir("dirjson");
	snprintf(path, sizeof(path), "%s/x.json", d);
	mkdir(path, 0755);
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/x.json: not a regular file", d);
	CHECK_STR(err, want);

	d = newdir("big");
	{
		static char big[70 * 1024];

		memset(big, ' ', sizeof(big) - 1);
		memcpy(big, doc("big"), strlen(doc("big")));
		write_file(d, "big.json", big);
	}
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/big.json: larger than 65536 bytes", d);
	CHECK_STR(err, want);

	d = newdir("many");
	for (int i = 0; i <= PROFILE_SET_MAX; i++) {
		char name[32], file[40];

		snprintf(name, sizeof(name), "p%02d", i);
		snprintf(file, sizeof(file), "%s.json", name);
		write_file(d, file, doc(name));
	}
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: holds more than 32 profiles", d);
	CHECK_STR(err, want);
	/* Exactly PROFILE_SET_MAX is fine. */
	snprintf(path, sizeof(path), "%s/p32.json", d);
	unlink(path);
	CHECK_EQ_INT(profile_set_load(d, &set, err, sizeof(err)), 0);
	CHECK_EQ_INT(set.n, PROFILE_SET_MAX);
	profile_set_free(&set);
}

TEST(shipped_hash_is_canonical)
{
	/* Reformatting a shipped profile (jq -S -c style) keeps its hash. */
	struct profile_set set;
	struct profile p;

	if (profile_set_load(shipped, &set, err, sizeof(err)) < 0) {
		fprintf(stderr, "# %s\n", err);
		CHECK(0);
		return;
	}
	for (size_t i = 0; i < set.n; i++) {
		CHECK_EQ_INT(profile_parse("again", set.v[i].name, set.v[i].canonical_json,
		                           strlen(set.v[i].canonical_json), &p, err, sizeof(err)), 0);
		CHECK_STR(p.canonical_json, set.v[i].canonical_json);
		CHECK_STR(p.policy_hash, set.v[i].policy_hash);
		profile_free(&p);
	}
	profile_set_free(&set);
}

static void cleanup(void)
{
	char cmd[256];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
}

/* The repository's profiles/: ./profiles from the repo root (tests/run.sh), else next to the binary. */
static void find_shipped(void)
{
	char exe[PATH_MAX];
	ssize_t n;
	struct stat st;

	snprintf(shipped, sizeof(shipped), "profiles");
	if (stat("profiles/analyse.json", &st) == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(shipped, sizeof(shipped), "%.*s/../../profiles", (int)(sizeof(shipped) - 20), exe);
	}
}

int main(void)
{
	char tmpl[] = "/tmp/test_profile.XXXXXX";

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	atexit(cleanup);
	find_shipped();
	RUN(minimal_profile_defaults);
	RUN(every_key);
	RUN(hash_is_stable_across_form);
	RUN(hash_changes_with_meaning);
	RUN(required_keys);
	RUN(unknown_and_duplicate_keys);
	RUN(not_json);
	RUN(name);
	RUN(description);
	RUN(workspace_and_approval_values);
	RUN(path_lists);
	RUN(network);
	RUN(numbers);
	RUN(timeouts);
	RUN(env_grants);
	RUN(env_name_helpers);
	RUN(free_is_safe);
	RUN(tmp_and_exec_create);
	RUN(shipped_profiles);
	RUN(set_load);
	RUN(set_load_errors);
	RUN(shipped_hash_is_canonical);
	return harness_done();
}
