/*
 * test_config.c - config.c: the embedded defaults, every key, every refusal
 * sentence, and loading real files (relative paths, size limit).
 */
#include "config.h"
#include "harness.h"
#include "landlock.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

static char tmpdir[128];      /* realpath of a fresh directory for this run */
static char cwd[PATH_MAX];    /* realpath of the current directory */
static char err[512];

/* Parse `json` as "test.json"; returns config_parse's result, err in `err`. */
static int parse(const char *json, struct config *c)
{
	err[0] = '\0';
	return config_parse("test.json", json, strlen(json), c, err, sizeof(err));
}

/* The document must be refused with exactly `want`, leaving `c` empty. */
static int refused(const char *json, const char *want)
{
	struct config c;
	int ok;

	memset(&c, 0xa5, sizeof(c));
	ok = parse(json, &c) == -1 && !strcmp(err, want) && c.listen_host == NULL &&
	     c.n_workspaces == 0 && c.source == NULL;
	if (!ok)
		fprintf(stderr, "# for %s\n#   got  \"%s\"\n#   want \"%s\"\n", json, err, want);
	config_free(&c);
	return ok;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static char *join(const char *a, const char *b)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", a, b);
	return buf[i];
}

/* The development defaults' directory: outside the checkout (config.c dev_path). */
static const char *dev(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int i;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_Digest(cwd, strlen(cwd), md, &mdlen, EVP_sha256(), NULL);
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "/var/lib/sharness-dev/%02x%02x%02x%02x%02x%02x/%s", md[0], md[1], md[2],
	         md[3], md[4], md[5], name);
	return buf[i];
}

TEST(defaults)
{
	struct config c;

	CHECK_EQ_INT(config_defaults(&c, err, sizeof(err)), 0);
	CHECK_STR(c.listen_host, "127.0.0.1");
	CHECK_EQ_INT(c.listen_port, 7443);
	CHECK(!c.listen_any);
	CHECK_STR(c.tls_ca, dev("certs/ca.pem"));
	CHECK_STR(c.tls_cert, dev("certs/server.pem"));
	CHECK_STR(c.tls_key, dev("certs/server.key"));
	CHECK_STR(c.profiles_dir, join(cwd, "profiles"));
	CHECK_EQ_INT(c.n_workspaces, 1);
	CHECK_STR(c.workspaces[0], cwd);
	CHECK_EQ_INT(c.uid_first, 1900000000);
	CHECK_EQ_INT(c.uid_count, 4096);
	CHECK_EQ_INT(c.max_runs, 8);
	CHECK(c.secrets_file == NULL);
	CHECK_STR(c.audit_log, "-");
	CHECK_STR(c.state_dir, dev("state"));
	CHECK_EQ_INT(c.max_body, 2 * 1024 * 1024);
	CHECK_EQ_INT(c.connection_limit, 64);
	CHECK_EQ_INT(c.connection_timeout_s, 15);
	CHECK_EQ_INT(c.approval_timeout_s, 90);
	CHECK_EQ_INT(c.queue_max, 64);
	CHECK_EQ_INT(c.queue_timeout_s, 30);
	CHECK(c.proxy_listen == NULL);
	CHECK_EQ_INT(c.landlock_min_abi, 1);
	CHECK_STR(c.source, "(embedded defaults)");
	config_free(&c);
	CHECK(c.listen_host == NULL);
}

TEST(empty_object_is_the_defaults)
{
	struct config c, d;

	CHECK_EQ_INT(parse("{}", &c), 0);
	CHECK_EQ_INT(config_defaults(&d, err, sizeof(err)), 0);
	CHECK_STR(c.listen_host, d.listen_host);
	CHECK_EQ_INT(c.listen_port, d.listen_port);
	CHECK_STR(c.tls_ca, d.tls_ca);
	CHECK_STR(c.workspaces[0], d.workspaces[0]);
	CHECK_EQ_INT(c.max_body, d.max_body);
	CHECK_STR(c.source, "test.json");
	config_free(&c);
	config_free(&d);
}

TEST(free_is_safe)
{
	struct config c;

	config_free(NULL);
	CHECK_EQ_INT(parse("{}", &c), 0);
	config_free(&c);
	config_free(&c); /* zeroed by the first call */
}

TEST(every_key)
{
	struct config c;
	char json[4096];

	snprintf(json, sizeof(json),
	         "{\"listen\": \"127.0.0.2:9000\", \"listen_non_loopback\": false,"
	         " \"tls\": {\"ca\": \"/etc/s/ca.pem\", \"cert\": \"/etc/s/srv.pem\", \"key\": \"k/srv.key\"},"
	         " \"profiles_dir\": \"/etc/sharness/profiles\", \"workspaces\": [\"%s\", \"/tmp\"],"
	         " \"uid_range\": {\"first\": 2000000000, \"count\": 100}, \"max_runs\": 100,"
	         " \"secrets_file\": \"/etc/sharness/secrets\", \"audit_log\": \"/var/log/s.log\","
	         " \"state_dir\": \"/var/lib/sharness\","
	         " \"limits\": {\"max_body_bytes\": 4096, \"connections\": 3, \"idle_timeout_s\": 30},"
	         " \"approval_timeout_s\": 60, \"proxy\": {\"listen\": \"127.0.0.1:3128\"}}",
	         tmpdir);
	CHECK_EQ_INT(parse(json, &c), 0);
	CHECK_STR(err, "");
	CHECK_STR(c.listen_host, "127.0.0.2");
	CHECK_EQ_INT(c.listen_port, 9000);
	CHECK(!c.listen_any);
	CHECK_STR(c.tls_ca, "/etc/s/ca.pem");
	CHECK_STR(c.tls_cert, "/etc/s/srv.pem");
	CHECK_STR(c.tls_key, join(cwd, "k/srv.key"));
	CHECK_STR(c.profiles_dir, "/etc/sharness/profiles");
	CHECK_EQ_INT(c.n_workspaces, 2);
	CHECK_STR(c.workspaces[0], tmpdir);
	CHECK_STR(c.workspaces[1], "/tmp");
	CHECK_EQ_INT(c.uid_first, 2000000000);
	CHECK_EQ_INT(c.uid_count, 100);
	CHECK_EQ_INT(c.max_runs, 100);
	CHECK_STR(c.secrets_file, "/etc/sharness/secrets");
	CHECK_STR(c.audit_log, "/var/log/s.log");
	CHECK_STR(c.state_dir, "/var/lib/sharness");
	CHECK_EQ_INT(c.max_body, 4096);
	CHECK_EQ_INT(c.connection_limit, 3);
	CHECK_EQ_INT(c.connection_timeout_s, 30);
	CHECK_EQ_INT(c.approval_timeout_s, 60);
	CHECK_STR(c.proxy_listen, "127.0.0.1:3128");
	config_free(&c);
}

TEST(partial_objects_keep_other_defaults)
{
	struct config c;

	CHECK_EQ_INT(parse("{\"tls\": {\"key\": \"/k\"}, \"limits\": {\"connections\": 5},"
	                   " \"uid_range\": {\"count\": 64}}", &c), 0);
	CHECK_STR(c.tls_key, "/k");
	CHECK_STR(c.tls_ca, dev("certs/ca.pem"));
	CHECK_EQ_INT(c.connection_limit, 5);
	CHECK_EQ_INT(c.max_body, 2 * 1024 * 1024);
	CHECK_EQ_INT(c.connection_timeout_s, 15);
	CHECK_EQ_INT(c.uid_first, 1900000000);
	CHECK_EQ_INT(c.uid_count, 64);
	config_free(&c);
}

TEST(listen_forms)
{
	struct config c;

	CHECK_EQ_INT(parse("{\"listen\": \"127.1.2.3:1\"}", &c), 0);
	CHECK_STR(c.listen_host, "127.1.2.3");
	CHECK_EQ_INT(c.listen_port, 1);
	config_free(&c);
	CHECK_EQ_INT(parse("{\"listen\": \"[::1]:65535\"}", &c), 0);
	CHECK_STR(c.listen_host, "::1");
	CHECK_EQ_INT(c.listen_port, 65535);
	config_free(&c);
	CHECK_EQ_INT(parse("{\"listen\": \"localhost:8443\"}", &c), 0);
	CHECK_STR(c.listen_host, "127.0.0.1");
	CHECK_EQ_INT(c.listen_port, 8443);
	config_free(&c);
}

TEST(listen_non_loopback)
{
	struct config c;

	CHECK(refused("{\"listen\": \"192.168.1.5:7443\"}",
	              "test.json: key 'listen' is 192.168.1.5:7443, which is not a loopback address; "
	              "set \"listen_non_loopback\": true to allow it"));
	CHECK(refused("{\"listen\": \"0.0.0.0:7443\"}",
	              "test.json: key 'listen' is 0.0.0.0:7443, which is not a loopback address; "
	              "set \"listen_non_loopback\": true to allow it"));
	CHECK(refused("{\"listen\": \"[::]:7443\"}",
	              "test.json: key 'listen' is [::]:7443, which is not a loopback address; "
	              "set \"listen_non_loopback\": true to allow it"));
	CHECK(refused("{\"listen\": \"[::ffff:127.0.0.1]:7443\"}",
	              "test.json: key 'listen' is [::ffff:127.0.0.1]:7443, which is not a loopback "
	              "address; set \"listen_non_loopback\": true to allow it"));
	CHECK(refused("{\"listen\": \"10.0.0.1:7443\", \"listen_non_loopback\": false}",
	              "test.json: key 'listen' is 10.0.0.1:7443, which is not a loopback address; "
	              "set \"listen_non_loopback\": true to allow it"));
	/* The order of keys in the file does not matter. */
	CHECK_EQ_INT(parse("{\"listen\": \"0.0.0.0:7443\", \"listen_non_loopback\": true}", &c), 0);
	CHECK_STR(c.listen_host, "0.0.0.0");
	CHECK(c.listen_any);
	config_free(&c);
	CHECK(refused("{\"listen_non_loopback\": 1}",
	              "test.json: key 'listen_non_loopback' must be true or false"));
}

TEST(listen_bad_forms)
{
	static const char *const bad[] = {
		"127.0.0.1",       "127.0.0.1:",      "127.0.0.1:0",   "127.0.0.1:65536",
		"127.0.0.1:80x",   "127.0.0.1:-1",    "127.0.0.1:+80", ":7443",
		"::1:7443",        "[::1]7443",       "[::1",          "sharness.local:7443",
		"127.0.0.1 :7443", "127.0.0.01:7443", "[]:7443",       "127.0.0.1:99999999999999999999",
	};
	char json[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json), "{\"listen\": \"%s\"}", bad[i]);
		CHECK(refused(json, "test.json: key 'listen' must be \"HOST:PORT\" with a numeric "
		                    "address, such as \"127.0.0.1:7443\" or \"[::1]:7443\""));
	}
	CHECK(refused("{\"listen\": 7443}", "test.json: key 'listen' must be a string \"HOST:PORT\""));
}

TEST(unknown_keys)
{
	CHECK(refused("{\"lisen\": \"127.0.0.1:1\"}", "test.json: key 'lisen' is unknown"));
	CHECK(refused("{\"tls\": {\"cafile\": \"/x\"}}", "test.json: key 'tls.cafile' is unknown"));
	CHECK(refused("{\"uid_range\": {\"first\": 2000000000, \"last\": 2}}",
	              "test.json: key 'uid_range.last' is unknown"));
	CHECK(refused("{\"limits\": {\"max_body\": 1}}", "test.json: key 'limits.max_body' is unknown"));
	CHECK(refused("{\"proxy\": {\"port\": 1}}", "test.json: key 'proxy.port' is unknown"));
	CHECK(refused("{\"Listen\": \"127.0.0.1:1\"}", "test.json: key 'Listen' is unknown"));
}

TEST(duplicate_keys)
{
	CHECK(refused("{\"max_runs\": 2, \"max_runs\": 200}",
	              "test.json: key 'max_runs' appears more than once"));
	CHECK(refused("{\"tls\": {\"ca\": \"/a\", \"ca\": \"/b\"}}",
	              "test.json: key 'tls.ca' appears more than once"));
}

TEST(not_json)
{
	CHECK(refused("", "test.json: not valid JSON near line 1"));
	CHECK(refused("{\n\"listen\": \"127.0.0.1:1\",\n}", "test.json: not valid JSON near line 3"));
	CHECK(refused("{} {}", "test.json: not valid JSON near line 1"));
	CHECK(refused("[]", "test.json: the configuration must be a JSON object"));
	CHECK(refused("null", "test.json: the configuration must be a JSON object"));
	CHECK(refused("{\"state_dir\": \"/var/lib\\u0000/x\"}",
	              "test.json: a string holds \\u0000, which is not allowed"));
}

TEST(escaped_backslash_is_not_nul)
{
	struct config c;

	CHECK_EQ_INT(parse("{\"state_dir\": \"/x\\\\u0000\"}", &c), 0);
	CHECK_STR(c.state_dir, "/x\\u0000");
	config_free(&c);
}

TEST(tls)
{
	CHECK(refused("{\"tls\": \"/x\"}",
	              "test.json: key 'tls' must be an object with 'ca', 'cert' and 'key'"));
	CHECK(refused("{\"tls\": {\"ca\": 1}}", "test.json: key 'tls.ca' must be a string (a path)"));
	CHECK(refused("{\"tls\": {\"cert\": \"\"}}", "test.json: key 'tls.cert' must not be empty"));
	CHECK(refused("{\"tls\": {\"key\": null}}", "test.json: key 'tls.key' must be a string (a path)"));
}

TEST(paths)
{
	struct config c;
	char json[PATH_MAX + 64], longp[PATH_MAX + 1];

	CHECK_EQ_INT(parse("{\"profiles_dir\": \"p\", \"state_dir\": \"s/t\", \"audit_log\": \"a.log\","
	                   " \"secrets_file\": \"sec\"}", &c), 0);
	CHECK_STR(c.profiles_dir, join(cwd, "p"));
	CHECK_STR(c.state_dir, join(cwd, "s/t"));
	CHECK_STR(c.audit_log, join(cwd, "a.log"));
	CHECK_STR(c.secrets_file, join(cwd, "sec"));
	config_free(&c);
	CHECK_EQ_INT(parse("{\"secrets_file\": null, \"audit_log\": \"-\"}", &c), 0);
	CHECK(c.secrets_file == NULL);
	CHECK_STR(c.audit_log, "-");
	config_free(&c);
	CHECK(refused("{\"profiles_dir\": 1}", "test.json: key 'profiles_dir' must be a string (a path)"));
	CHECK(refused("{\"state_dir\": \"\"}", "test.json: key 'state_dir' must not be empty"));
	CHECK(refused("{\"audit_log\": false}", "test.json: key 'audit_log' must be a string (a path)"));
	CHECK(refused("{\"secrets_file\": 3}", "test.json: key 'secrets_file' must be a path or null"));
	CHECK(refused("{\"secrets_file\": \"\"}", "test.json: key 'secrets_file' must not be empty"));
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	snprintf(json, sizeof(json), "{\"state_dir\": \"%s\"}", longp);
	snprintf(err, sizeof(err), "test.json: key 'state_dir' is a path longer than %d bytes",
	         PATH_MAX - 1);
	{
		char want[sizeof(err)];

		memcpy(want, err, sizeof(want));
		CHECK(refused(json, want));
	}
}

TEST(workspaces)
{
	struct config c;
	char json[PATH_MAX * 2], want[PATH_MAX * 2], link[PATH_MAX];

	/* A symlink to a workspace is stored as its real path: the sandbox maps the real one. */
	snprintf(link, sizeof(link), "%s/ws-link", tmpdir);
	CHECK_EQ_INT(symlink(tmpdir, link), 0);
	snprintf(json, sizeof(json), "{\"workspaces\": [\"%s\"]}", link);
	CHECK_EQ_INT(parse(json, &c), 0);
	CHECK_EQ_INT(c.n_workspaces, 1);
	CHECK_STR(c.workspaces[0], tmpdir);
	config_free(&c);

	CHECK(refused("{\"workspaces\": \"/tmp\"}",
	              "test.json: key 'workspaces' must be a list of absolute directory paths"));
	CHECK(refused("{\"workspaces\": []}",
	              "test.json: key 'workspaces' must name at least one directory"));
	CHECK(refused("{\"workspaces\": [\"tmp\"]}",
	              "test.json: key 'workspaces' entry 1 must be an absolute path"));
	CHECK(refused("{\"workspaces\": [\"/tmp\", 5]}",
	              "test.json: key 'workspaces' entry 2 must be an absolute path"));
	CHECK(refused("{\"workspaces\": [\"/nonexistent-sharness-ws\"]}",
	              "test.json: key 'workspaces' entry '/nonexistent-sharness-ws' cannot be resolved: "
	              "No such file or directory"));
	write_file(join(tmpdir, "plainfile"), "x");
	snprintf(json, sizeof(json), "{\"workspaces\": [\"%s\"]}", join(tmpdir, "plainfile"));
	snprintf(want, sizeof(want), "test.json: key 'workspaces' entry '%s' is not a directory",
	         join(tmpdir, "plainfile"));
	CHECK(refused(json, want));
	CHECK(refused("{\"workspaces\": [\"/tmp/..\"]}",
	              "test.json: key 'workspaces' entry '/tmp/..' is the root directory; name a "
	              "project directory instead"));
	snprintf(json, sizeof(json), "{\"workspaces\": [\"%s\", \"%s\"]}", tmpdir, link);
	snprintf(want, sizeof(want), "test.json: key 'workspaces' names '%s' more than once", tmpdir);
	CHECK(refused(json, want));
	CHECK(refused("{\"workspaces\": [\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\","
	              "\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\",\"/tmp\","
	              "\"/tmp\"]}",
	              "test.json: key 'workspaces' holds more than 16 directories"));
}

TEST(workspaces_max)
{
	struct config c;
	char json[PATH_MAX * 20];
	size_t off = 0;

	off += (size_t)snprintf(json + off, sizeof(json) - off, "{\"workspaces\": [");
	for (int i = 0; i < CONFIG_WORKSPACES_MAX; i++) {
		char d[PATH_MAX];

		snprintf(d, sizeof(d), "%s/ws%02d", tmpdir, i);
		mkdir(d, 0755);
		off += (size_t)snprintf(json + off, sizeof(json) - off, "%s\"%s\"", i ? "," : "", d);
	}
	snprintf(json + off, sizeof(json) - off, "]}");
	CHECK_EQ_INT(parse(json, &c), 0);
	CHECK_EQ_INT(c.n_workspaces, CONFIG_WORKSPACES_MAX);
	CHECK_STR(c.workspaces[15], join(tmpdir, "ws15"));
	config_free(&c);
}

TEST(uid_range)
{
	CHECK(refused("{\"uid_range\": [1, 2]}",
	              "test.json: key 'uid_range' must be an object {\"first\": N, \"count\": N}"));
	CHECK(refused("{\"uid_range\": {\"first\": 0}}",
	              "test.json: key 'uid_range.first' must be a whole number from 1 to 4294967294"));
	CHECK(refused("{\"uid_range\": {\"first\": 4294967295}}",
	              "test.json: key 'uid_range.first' must be a whole number from 1 to 4294967294"));
	CHECK(refused("{\"uid_range\": {\"first\": 1.5}}",
	              "test.json: key 'uid_range.first' must be a whole number from 1 to 4294967294"));
	CHECK(refused("{\"uid_range\": {\"first\": \"2000000000\"}}",
	              "test.json: key 'uid_range.first' must be a number"));
	CHECK(refused("{\"uid_range\": {\"count\": 0}}",
	              "test.json: key 'uid_range.count' must be a whole number from 1 to 1048576"));
	CHECK(refused("{\"uid_range\": {\"count\": 4}}",
	              "test.json: key 'uid_range.count' (4) is smaller than 'max_runs' (8); every "
	              "concurrent run needs its own uid"));
	CHECK(refused("{\"uid_range\": {\"first\": 4294967290, \"count\": 8}}",
	              "test.json: key 'uid_range' runs past the largest uid 4294967294"));
}

TEST(numbers)
{
	struct config c;

	CHECK(refused("{\"max_runs\": 0}", "test.json: key 'max_runs' must be a whole number from 1 to 1024"));
	CHECK(refused("{\"max_runs\": 1025}", "test.json: key 'max_runs' must be a whole number from 1 to 1024"));
	CHECK(refused("{\"max_runs\": -1}", "test.json: key 'max_runs' must be a whole number from 1 to 1024"));
	CHECK(refused("{\"max_runs\": true}", "test.json: key 'max_runs' must be a number"));
	CHECK(refused("{\"max_runs\": 1e400}", "test.json: key 'max_runs' must be a whole number from 1 to 1024"));
	CHECK_EQ_INT(parse("{\"max_runs\": 1024, \"uid_range\": {\"count\": 1024}}", &c), 0);
	CHECK_EQ_INT(c.max_runs, 1024);
	config_free(&c);
	CHECK(refused("{\"queue_max\": 4097}", "test.json: key 'queue_max' must be a whole number from 0 to 4096"));
	CHECK(refused("{\"queue_max\": -1}", "test.json: key 'queue_max' must be a whole number from 0 to 4096"));
	CHECK(refused("{\"queue_timeout_s\": 0}",
	              "test.json: key 'queue_timeout_s' must be a whole number from 1 to 3600"));
	CHECK(refused("{\"queue_timeout_s\": \"30\"}", "test.json: key 'queue_timeout_s' must be a number"));
	CHECK(refused("{\"approval_timeout_s\": 0}",
	              "test.json: key 'approval_timeout_s' must be a whole number from 1 to 86400"));
	CHECK(refused("{\"approval_timeout_s\": 86401}",
	              "test.json: key 'approval_timeout_s' must be a whole number from 1 to 86400"));
}

/* limits.disk_*: the bounds of a writable run's disk (supervise.c). */
TEST(disk_limits)
{
	struct config c;

	CHECK_EQ_INT(parse("{}", &c), 0);
	CHECK(c.disk_max_bytes == (UINT64_C(2) << 30) && c.disk_max_inodes == 100000);
	CHECK(c.disk_reserve_bytes == (UINT64_C(256) << 20) && c.disk_reserve_inodes == 10000);
	config_free(&c);
	CHECK_EQ_INT(parse("{\"limits\": {\"disk_max_bytes\": 1048576, \"disk_max_inodes\": 100, "
	                   "\"disk_reserve_bytes\": 0, \"disk_reserve_inodes\": 1099511627776}}", &c), 0);
	CHECK(c.disk_max_bytes == 1048576 && c.disk_max_inodes == 100);
	CHECK(c.disk_reserve_bytes == 0 && c.disk_reserve_inodes == (UINT64_C(1) << 40));
	CHECK(c.max_body == 2u * 1024 * 1024); /* the other limits keep their defaults */
	config_free(&c);
	CHECK(refused("{\"limits\": {\"disk_max_bytes\": 1048575}}",
	              "test.json: key 'limits.disk_max_bytes' must be a whole number from 1048576 to 1125899906842624"));
	CHECK(refused("{\"limits\": {\"disk_max_bytes\": 1e30}}",
	              "test.json: key 'limits.disk_max_bytes' must be a whole number from 1048576 to 1125899906842624"));
	CHECK(refused("{\"limits\": {\"disk_max_inodes\": 99}}",
	              "test.json: key 'limits.disk_max_inodes' must be a whole number from 100 to 1099511627776"));
	CHECK(refused("{\"limits\": {\"disk_reserve_bytes\": -1}}",
	              "test.json: key 'limits.disk_reserve_bytes' must be a whole number from 0 to 1125899906842624"));
	CHECK(refused("{\"limits\": {\"disk_reserve_inodes\": \"10\"}}",
	              "test.json: key 'limits.disk_reserve_inodes' must be a number"));
	CHECK(refused("{\"limits\": {\"disk_max\": 1}}", "test.json: key 'limits.disk_max' is unknown"));
}

/* landlock_min_abi: 1 up to the newest ABI landlock.c knows, nothing else. */
TEST(landlock_min_abi)
{
	static const char range[] = "test.json: key 'landlock_min_abi' must be a whole number from 1 to 8";
	struct config c;

	CHECK_EQ_INT(LANDLOCK_ABI_KNOWN, 8);
	for (int abi = 1; abi <= LANDLOCK_ABI_KNOWN; abi++) {
		char json[64];

		snprintf(json, sizeof(json), "{\"landlock_min_abi\": %d}", abi);
		CHECK_EQ_INT(parse(json, &c), 0);
		CHECK_EQ_INT(c.landlock_min_abi, abi);
		config_free(&c);
	}
	CHECK(refused("{\"landlock_min_abi\": 0}", range));
	CHECK(refused("{\"landlock_min_abi\": 9}", range));
	CHECK(refused("{\"landlock_min_abi\": -1}", range));
	CHECK(refused("{\"landlock_min_abi\": 2.5}", range));
	CHECK(refused("{\"landlock_min_abi\": 1e400}", range));
	CHECK(refused("{\"landlock_min_abi\": \"3\"}", "test.json: key 'landlock_min_abi' must be a number"));
	CHECK(refused("{\"landlock_min_abi\": null}", "test.json: key 'landlock_min_abi' must be a number"));
	CHECK(refused("{\"landlock_min_abi\": 2, \"landlock_min_abi\": 3}",
		      "test.json: key 'landlock_min_abi' appears more than once"));
	CHECK(refused("{\"landlock_minabi\": 2}", "test.json: key 'landlock_minabi' is unknown"));
}

TEST(limits)
{
	struct config c;

	CHECK(refused("{\"limits\": 5}", "test.json: key 'limits' must be an object"));
	CHECK(refused("{\"limits\": {\"max_body_bytes\": 1023}}",
	              "test.json: key 'limits.max_body_bytes' must be a whole number from 1024 to 67108864"));
	CHECK(refused("{\"limits\": {\"max_body_bytes\": 67108865}}",
	              "test.json: key 'limits.max_body_bytes' must be a whole number from 1024 to 67108864"));
	CHECK(refused("{\"limits\": {\"connections\": 0}}",
	              "test.json: key 'limits.connections' must be a whole number from 1 to 4096"));
	CHECK(refused("{\"limits\": {\"idle_timeout_s\": 3601}}",
	              "test.json: key 'limits.idle_timeout_s' must be a whole number from 1 to 3600"));
	CHECK_EQ_INT(parse("{\"limits\": {\"max_body_bytes\": 67108864}}", &c), 0);
	CHECK_EQ_INT(c.max_body, 64 * 1024 * 1024);
	config_free(&c);
}

TEST(proxy)
{
	struct config c;

	CHECK_EQ_INT(parse("{\"proxy\": {}}", &c), 0);
	CHECK(c.proxy_listen == NULL);
	config_free(&c);
	CHECK(refused("{\"proxy\": true}", "test.json: key 'proxy' must be an object"));
	CHECK(refused("{\"proxy\": {\"listen\": 3128}}",
	              "test.json: key 'proxy.listen' must be a string \"HOST:PORT\""));
	CHECK(refused("{\"proxy\": {\"listen\": \"127.0.0.1\"}}",
	              "test.json: key 'proxy.listen' must be \"HOST:PORT\" with a numeric address, "
	              "such as \"127.0.0.1:7443\" or \"[::1]:7443\""));
	/* listen_non_loopback is about the API listener; the proxy stays on loopback. */
	CHECK(refused("{\"listen_non_loopback\": true, \"proxy\": {\"listen\": \"0.0.0.0:3128\"}}",
	              "test.json: key 'proxy.listen' is 0.0.0.0:3128, which is not a loopback address; "
	              "set \"listen_non_loopback\": true to allow it"));
}

TEST(load_file)
{
	struct config c;
	char *path = join(tmpdir, "conf.json");
	char want[PATH_MAX * 2];

	write_file(path, "{\"tls\": {\"ca\": \"certs/ca.pem\"}, \"state_dir\": \"../state\","
	                 " \"audit_log\": \"/var/log/a\"}\n");
	err[0] = '\0';
	CHECK_EQ_INT(config_load(path, &c, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	/* Relative paths in a file are relative to the file's directory, not the cwd. */
	CHECK_STR(c.tls_ca, join(tmpdir, "certs/ca.pem"));
	CHECK_STR(c.state_dir, join(tmpdir, "../state"));
	CHECK_STR(c.audit_log, "/var/log/a");
	CHECK_STR(c.tls_cert, dev("certs/server.pem")); /* a default */
	CHECK_STR(c.source, path);
	config_free(&c);

	write_file(path, "{\"max_runs\": 0}");
	snprintf(want, sizeof(want), "%s: key 'max_runs' must be a whole number from 1 to 1024", path);
	CHECK_EQ_INT(config_load(path, &c, err, sizeof(err)), -1);
	CHECK_STR(err, want);
	CHECK(c.source == NULL);
}

TEST(load_errors)
{
	struct config c;
	char *path = join(tmpdir, "big.json");
	char want[PATH_MAX * 2];
	FILE *f;

	CHECK_EQ_INT(config_load("/nonexistent/sharness.json", &c, err, sizeof(err)), -1);
	CHECK_STR(err, "/nonexistent/sharness.json: cannot open: No such file or directory");
	CHECK_EQ_INT(config_load(tmpdir, &c, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", tmpdir);
	CHECK_STR(err, want);

	/* Just over 1 MiB of valid JSON whitespace: refused for its size, not its content. */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputc('{', f);
		for (int i = 0; i < (1 << 20); i++)
			fputc(' ', f);
		fputc('}', f);
		fclose(f);
	}
	CHECK_EQ_INT(config_load(path, &c, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	CHECK_STR(err, want);
	/* Exactly 1 MiB is fine. */
	CHECK_EQ_INT(truncate(path, 1 << 20), 0);
	f = fopen(path, "r+");
	if (f) {
		fseek(f, (1 << 20) - 1, SEEK_SET);
		fputc('}', f);
		fclose(f);
	}
	CHECK_EQ_INT(config_load(path, &c, err, sizeof(err)), 0);
	config_free(&c);
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tmpdir);
	}
}

int main(void)
{
	char tmpl[] = "/tmp/test_config.XXXXXX";

	char *r;

	if (!mkdtemp(tmpl) || !(r = realpath(tmpl, NULL)) || strlen(r) >= sizeof(tmpdir) ||
	    !getcwd(cwd, sizeof(cwd))) {
		perror("setup");
		return 2;
	}
	strcpy(tmpdir, r);
	free(r);
	if ((r = realpath(cwd, NULL))) {
		snprintf(cwd, sizeof(cwd), "%s", r);
		free(r);
	}
	atexit(cleanup);
	RUN(defaults);
	RUN(empty_object_is_the_defaults);
	RUN(free_is_safe);
	RUN(every_key);
	RUN(partial_objects_keep_other_defaults);
	RUN(listen_forms);
	RUN(listen_non_loopback);
	RUN(listen_bad_forms);
	RUN(unknown_keys);
	RUN(duplicate_keys);
	RUN(not_json);
	RUN(escaped_backslash_is_not_nul);
	RUN(tls);
	RUN(paths);
	RUN(workspaces);
	RUN(workspaces_max);
	RUN(uid_range);
	RUN(numbers);
	RUN(landlock_min_abi);
	RUN(limits);
	RUN(disk_limits);
	RUN(proxy);
	RUN(load_file);
	RUN(load_errors);
	return harness_done();
}
