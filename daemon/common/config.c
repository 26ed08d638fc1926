/*
 * config.c - the daemon configuration (SPEC §11): embedded development
 * defaults, overlaid by a strict JSON file.
 *
 * Trust: the file is operator configuration, read once at start as root, but
 * parsed strictly anyway: an unknown key, a key given twice, a wrong type or an
 * out-of-range value refuses the whole file with one sentence naming the file
 * and the key, because a misspelled setting must never silently fall back to a
 * default the operator did not choose.
 *
 * Relative paths in a file are resolved against the directory holding the
 * file (so a config next to its certificates works from any cwd, including
 * systemd's "/"); relative paths in a document given to config_parse() and in
 * the embedded defaults are resolved against the current directory.  Every
 * path in a loaded struct config is absolute.
 */
#include "errmsg.h"
#include "jsonstrict.h"
#include "config.h"
#include "landlock.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#define CONFIG_FILE_MAX (1u << 20)       /* a config is a page of JSON; 1 MiB is generous */
#define MIB (1024u * 1024u)

#define DEFAULT_LISTEN_HOST "127.0.0.1"
#define DEFAULT_LISTEN_PORT 7443u
#define DEFAULT_UID_FIRST 1900000000u
#define DEFAULT_UID_COUNT 4096u
#define DEFAULT_MAX_RUNS 8u
#define DEFAULT_MAX_BODY (2u * MIB)
#define DEFAULT_CONNECTIONS 64u
#define DEFAULT_IDLE_TIMEOUT_S 15u
#define DEFAULT_APPROVAL_TIMEOUT_S 90u /* below an agent's 120 s tool timeout (SPEC §15.3) */
#define DEFAULT_QUEUE_TIMEOUT_S 30u
#define DEFAULT_QUEUE_MAX 64u
#define DEFAULT_MAX_JOBS 8u        /* live jobs per certificate */
#define DEFAULT_JOB_RETAIN_S 600u  /* a finished job's output stays readable */
/* Two: back to back, the next request takes the second while the first is
 * replaced (a replacement is built after its run, launcher.h); with one it
 * waited for that build (docs/bench.md, session 11). */
#define DEFAULT_PREWARM 2u
#define DEFAULT_DISK_MAX_BYTES (UINT64_C(2) << 30)
#define DEFAULT_DISK_MAX_INODES UINT64_C(100000)
#define DEFAULT_DISK_RESERVE_BYTES (UINT64_C(256) << 20)
#define DEFAULT_DISK_RESERVE_INODES UINT64_C(10000)
#define DEFAULT_LANDLOCK_MIN_ABI   1u /* every ABI is accepted; docs/landlock.md says what covers the rest */
#define EMBEDDED_SOURCE "(embedded defaults)"

/* base + "/" + path, or a copy of path when it is already absolute. */
static char *abs_path(const char *base, const char *path)
{
	char *out;

	if (path[0] == '/')
		return strdup(path);
	if (asprintf(&out, "%s%s%s", base, strcmp(base, "/") ? "/" : "", path) < 0)
		return NULL;
	return out;
}

/* Swap in a new owned string, releasing the old one. */
static void set_str(char **slot, char *v)
{
	free(*slot);
	*slot = v;
}

/* A non-empty string shorter than PATH_MAX, made absolute against `base`. */
static int get_path(const char *origin, const char *key, const cJSON *v, const char *base,
                    char **out, char *err, size_t errlen)
{
	char *p;

	if (!cJSON_IsString(v)) {
		errmsg_set(err, errlen, "%s: key '%s' must be a string (a path)", origin, key);
		return -1;
	}
	if (!v->valuestring[0]) {
		errmsg_set(err, errlen, "%s: key '%s' must not be empty", origin, key);
		return -1;
	}
	p = abs_path(base, v->valuestring);
	if (!p) {
		errmsg_set(err, errlen, "%s: out of memory", origin);
		return -1;
	}
	if (strlen(p) >= PATH_MAX) {
		free(p);
		errmsg_set(err, errlen, "%s: key '%s' is a path longer than %d bytes", origin, key, PATH_MAX - 1);
		return -1;
	}
	*out = p;
	return 0;
}

static bool addr_is_loopback(int family, const void *a)
{
	if (family == AF_INET)
		return ((const unsigned char *)a)[0] == 127;
	return !memcmp(a, &in6addr_loopback, sizeof(in6addr_loopback));
}

bool config_host_is_loopback(const char *host)
{
	struct in6_addr a; /* large enough for either family */
	if (inet_pton(AF_INET, host, &a) == 1)
		return addr_is_loopback(AF_INET, &a);
	return inet_pton(AF_INET6, host, &a) == 1 && addr_is_loopback(AF_INET6, &a);
}

/*
 * "host:port" with a numeric IPv4 host, "[v6]:port", or "localhost:port"
 * (taken as 127.0.0.1: a name would need a resolver at start and could
 * resolve to anything).  Fills a numeric host and the port.
 */
static int parse_listen(const char *origin, const char *key, const char *s, bool allow_any,
                        const char *allow_key, char **host_out, unsigned *port_out, char *err,
                        size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = s, *port_s;
	size_t hlen;
	unsigned char addr[sizeof(struct in6_addr)];
	int family;
	char *end;
	unsigned long port;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			goto bad;
		h = s + 1;
		hlen = (size_t)(rb - h);
		port_s = rb + 2;
		family = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			goto bad; /* a bare IPv6 address needs brackets */
		hlen = (size_t)(colon - s);
		port_s = colon + 1;
		family = AF_INET;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (family == AF_INET && !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(family, host, addr) != 1)
		goto bad;
	if (port_s[0] < '0' || port_s[0] > '9')
		goto bad;
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (errno || *end || port < 1 || port > 65535)
		goto bad;
	if (!allow_any && !addr_is_loopback(family, addr)) {
		errmsg_set(err, errlen,
		     "%s: key '%s' is %s, which is not a loopback address; set \"%s\": true to allow "
		     "it",
		     origin, key, s, allow_key);
		return -1;
	}
	*host_out = strdup(host);
	if (!*host_out) {
		errmsg_set(err, errlen, "%s: out of memory", origin);
		return -1;
	}
	*port_out = (unsigned)port;
	return 0;
bad:
	errmsg_set(err, errlen,
	     "%s: key '%s' must be \"HOST:PORT\" with a numeric address, such as \"127.0.0.1:7443\" "
	     "or \"[::1]:7443\"",
	     origin, key);
	return -1;
}

/* The development defaults keep certificates and state out of the checkout,
 * which is the workspace (SPEC §15.2): DEV_DIR_BASE/<first 12 hex digits of
 * the SHA-256 of the checkout's real path>, as scripts/devcerts.sh computes. */
#define DEV_DIR_BASE "/var/lib/sharness-dev"
static char *dev_path(const char *real, const char *name)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char *out = NULL;
	if (!real || !EVP_Digest(real, strlen(real), md, &mdlen, EVP_sha256(), NULL) || mdlen < 6)
		return NULL;
	if (asprintf(&out, DEV_DIR_BASE "/%02x%02x%02x%02x%02x%02x/%s", md[0], md[1], md[2], md[3], md[4], md[5],
	             name) < 0)
		return NULL;
	return out;
}

int config_defaults(struct config *c, char *err, size_t errlen)
{
	char cwd[PATH_MAX], *real = NULL;

	memset(c, 0, sizeof(*c));
	if (!getcwd(cwd, sizeof(cwd))) {
		errmsg_set(err, errlen, "cannot read the current directory: %s", strerror(errno));
		return -1;
	}
	/* The workspace is realpath'd like a configured one: the sandbox maps it at its real path. */
	real = realpath(cwd, NULL);
	c->listen_host = strdup(DEFAULT_LISTEN_HOST);
	c->listen_port = DEFAULT_LISTEN_PORT;
	c->listen_any = false;
	c->tls_ca = dev_path(real, "certs/ca.pem");
	c->tls_cert = dev_path(real, "certs/server.pem");
	c->tls_key = dev_path(real, "certs/server.key");
	c->profiles_dir = abs_path(cwd, "profiles");
	c->workspaces[0] = real;
	c->n_workspaces = 1;
	c->uid_first = DEFAULT_UID_FIRST;
	c->uid_count = DEFAULT_UID_COUNT;
	c->max_runs = DEFAULT_MAX_RUNS;
	c->secrets_file = NULL;
	c->audit_log = strdup("-");
	c->state_dir = dev_path(real, "state");
	c->max_body = DEFAULT_MAX_BODY;
	c->connection_limit = DEFAULT_CONNECTIONS;
	c->connection_timeout_s = DEFAULT_IDLE_TIMEOUT_S;
	c->approval_timeout_s = DEFAULT_APPROVAL_TIMEOUT_S;
	c->queue_timeout_s = DEFAULT_QUEUE_TIMEOUT_S;
	c->queue_max = DEFAULT_QUEUE_MAX;
	c->max_jobs = DEFAULT_MAX_JOBS;
	c->job_retain_s = DEFAULT_JOB_RETAIN_S;
	c->prewarm = DEFAULT_PREWARM;
	c->disk_max_bytes = DEFAULT_DISK_MAX_BYTES;
	c->disk_max_inodes = DEFAULT_DISK_MAX_INODES;
	c->disk_reserve_bytes = DEFAULT_DISK_RESERVE_BYTES;
	c->disk_reserve_inodes = DEFAULT_DISK_RESERVE_INODES;
	c->landlock_min_abi = DEFAULT_LANDLOCK_MIN_ABI;
	c->proxy_listen = NULL;
	c->source = strdup(EMBEDDED_SOURCE);
	if (!c->listen_host || !c->tls_ca || !c->tls_cert || !c->tls_key || !c->profiles_dir ||
	    !real || !c->audit_log || !c->state_dir || !c->source) {
		errmsg_set(err, errlen, "cannot set the embedded defaults: %s", strerror(errno ? errno : ENOMEM));
		config_free(c);
		return -1;
	}
	return 0;
}

static int parse_tls(const char *origin, const cJSON *tls, const char *base, struct config *c,
                     char *err, size_t errlen)
{
	static const char *const known[] = {"ca", "cert", "key", NULL};
	static const char *const names[] = {"tls.ca", "tls.cert", "tls.key"};
	char **slots[] = {&c->tls_ca, &c->tls_cert, &c->tls_key};

	if (!cJSON_IsObject(tls)) {
		errmsg_set(err, errlen, "%s: key 'tls' must be an object with 'ca', 'cert' and 'key'", origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "tls.", tls, known, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(tls, known[i]);
		char *p;

		if (!v)
			continue;
		if (get_path(origin, names[i], v, base, &p, err, errlen) < 0)
			return -1;
		set_str(slots[i], p);
	}
	return 0;
}

static int parse_workspaces(const char *origin, const cJSON *ws, struct config *c, char *err,
                            size_t errlen)
{
	char *tmp[CONFIG_WORKSPACES_MAX] = {0};
	size_t n = 0;
	const cJSON *e;
	int rc = -1;

	if (!cJSON_IsArray(ws)) {
		errmsg_set(err, errlen, "%s: key 'workspaces' must be a list of absolute directory paths",
		     origin);
		return -1;
	}
	if (cJSON_GetArraySize(ws) < 1) {
		errmsg_set(err, errlen, "%s: key 'workspaces' must name at least one directory", origin);
		return -1;
	}
	if (cJSON_GetArraySize(ws) > CONFIG_WORKSPACES_MAX) {
		errmsg_set(err, errlen, "%s: key 'workspaces' holds more than %d directories", origin,
		     CONFIG_WORKSPACES_MAX);
		return -1;
	}
	cJSON_ArrayForEach(e, ws) {
		struct stat st;
		char *real;

		if (!cJSON_IsString(e) || e->valuestring[0] != '/') {
			errmsg_set(err, errlen, "%s: key 'workspaces' entry %zu must be an absolute path", origin,
			     n + 1);
			goto out;
		}
		real = realpath(e->valuestring, NULL);
		if (!real) {
			errmsg_set(err, errlen, "%s: key 'workspaces' entry '%s' cannot be resolved: %s", origin,
			     e->valuestring, strerror(errno));
			goto out;
		}
		tmp[n++] = real;
		if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
			errmsg_set(err, errlen, "%s: key 'workspaces' entry '%s' is not a directory", origin,
			     e->valuestring);
			goto out;
		}
		/* "/" as a workspace would map the whole host into every sandbox. */
		if (!strcmp(real, "/")) {
			errmsg_set(err, errlen,
			     "%s: key 'workspaces' entry '%s' is the root directory; name a project "
			     "directory instead",
			     origin, e->valuestring);
			goto out;
		}
		for (size_t i = 0; i + 1 < n; i++)
			if (!strcmp(tmp[i], real)) {
				errmsg_set(err, errlen, "%s: key 'workspaces' names '%s' more than once", origin,
				     real);
				goto out;
			}
	}
	for (size_t i = 0; i < c->n_workspaces; i++)
		free(c->workspaces[i]);
	memcpy(c->workspaces, tmp, sizeof(tmp));
	c->n_workspaces = n;
	n = 0;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(tmp[i]);
	return rc;
}

static int parse_uid_range(const char *origin, const cJSON *r, struct config *c, char *err,
                           size_t errlen)
{
	static const char *const known[] = {"first", "count", NULL};
	const cJSON *v;
	uint64_t x;

	if (!cJSON_IsObject(r)) {
		errmsg_set(err, errlen, "%s: key 'uid_range' must be an object {\"first\": N, \"count\": N}",
		     origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "uid_range.", r, known, err, errlen) < 0)
		return -1;
	/* uid 0 is root and (uid_t)-1 means "no change" to set*id(); uidpool checks the rest. */
	if ((v = cJSON_GetObjectItemCaseSensitive(r, "first"))) {
		if (jsonstrict_get_uint(origin, "uid_range.first", v, 1, UINT32_MAX - 1, &x, err, errlen) < 0)
			return -1;
		c->uid_first = (uid_t)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(r, "count"))) {
		if (jsonstrict_get_uint(origin, "uid_range.count", v, 1, 1u << 20, &x, err, errlen) < 0)
			return -1;
		c->uid_count = (unsigned)x;
	}
	return 0;
}

static int parse_limits(const char *origin, const cJSON *l, struct config *c, char *err,
                        size_t errlen)
{
	static const char *const known[] = {"max_body_bytes", "connections", "idle_timeout_s", "disk_max_bytes",
	                                    "disk_max_inodes", "disk_reserve_bytes", "disk_reserve_inodes", NULL};
	/* The disk bounds of a writable run (asrun/watch.c): 1 MiB / 100 inodes
	 * at least (a run must be able to write something), 1 PiB / 2^40 at
	 * most (beyond is no bound; a typo like 1e30 is refused). */
	const struct {
		const char *key;
		uint64_t min, max;
		uint64_t *dst;
	} disk[] = {
		{"disk_max_bytes", MIB, UINT64_C(1) << 50, &c->disk_max_bytes},
		{"disk_max_inodes", 100, UINT64_C(1) << 40, &c->disk_max_inodes},
		{"disk_reserve_bytes", 0, UINT64_C(1) << 50, &c->disk_reserve_bytes},
		{"disk_reserve_inodes", 0, UINT64_C(1) << 40, &c->disk_reserve_inodes},
	};
	char key[64];
	const cJSON *v;
	uint64_t x;

	if (!cJSON_IsObject(l)) {
		errmsg_set(err, errlen, "%s: key 'limits' must be an object", origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "limits.", l, known, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(l, "max_body_bytes"))) {
		if (jsonstrict_get_uint(origin, "limits.max_body_bytes", v, 1024, 64u * MIB, &x, err, errlen) < 0)
			return -1;
		c->max_body = (size_t)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(l, "connections"))) {
		if (jsonstrict_get_uint(origin, "limits.connections", v, 1, 4096, &x, err, errlen) < 0)
			return -1;
		c->connection_limit = (unsigned)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(l, "idle_timeout_s"))) {
		if (jsonstrict_get_uint(origin, "limits.idle_timeout_s", v, 1, 3600, &x, err, errlen) < 0)
			return -1;
		c->connection_timeout_s = (unsigned)x;
	}
	for (size_t i = 0; i < sizeof(disk) / sizeof(disk[0]); i++) {
		if (!(v = cJSON_GetObjectItemCaseSensitive(l, disk[i].key)))
			continue;
		snprintf(key, sizeof(key), "limits.%s", disk[i].key);
		if (jsonstrict_get_uint(origin, key, v, disk[i].min, disk[i].max, &x, err, errlen) < 0)
			return -1;
		*disk[i].dst = x;
	}
	return 0;
}

static int parse_proxy(const char *origin, const cJSON *p, struct config *c, char *err,
                       size_t errlen)
{
	static const char *const known[] = {"listen", NULL};
	const cJSON *v;
	char *host = NULL, *s;
	unsigned port;

	if (!cJSON_IsObject(p)) {
		errmsg_set(err, errlen, "%s: key 'proxy' must be an object", origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "proxy.", p, known, err, errlen) < 0)
		return -1;
	v = cJSON_GetObjectItemCaseSensitive(p, "listen");
	if (!v)
		return 0;
	if (!cJSON_IsString(v)) {
		errmsg_set(err, errlen, "%s: key 'proxy.listen' must be a string \"HOST:PORT\"", origin);
		return -1;
	}
	/* The egress proxy serves sandboxes on this machine only: never off loopback. */
	if (parse_listen(origin, "proxy.listen", v->valuestring, false, "listen_non_loopback", &host,
	                 &port, err, errlen) < 0)
		return -1;
	free(host);
	s = strdup(v->valuestring);
	if (!s) {
		errmsg_set(err, errlen, "%s: out of memory", origin);
		return -1;
	}
	set_str(&c->proxy_listen, s);
	return 0;
}

/* Overlay the document `root` on `c` (which holds the defaults). */
static int overlay(const char *origin, const cJSON *root, const char *base, struct config *c,
                   char *err, size_t errlen)
{
	/* clang-format off */
	static const char *const known[] = {
		"listen",      "listen_non_loopback", "tls",      "profiles_dir", "workspaces",
		"uid_range",   "max_runs",            "secrets_file", "audit_log", "state_dir",
		"limits",      "approval_timeout_s",  "proxy",    "prewarm",   "landlock_min_abi",
		"queue_max",   "queue_timeout_s",     "max_jobs", "job_retain_s",
		NULL};
	/* clang-format on */
	const cJSON *v;
	uint64_t x;
	char *p;

	if (!cJSON_IsObject(root)) {
		errmsg_set(err, errlen, "%s: the configuration must be a JSON object", origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "", root, known, err, errlen) < 0)
		return -1;

	/* Read listen_non_loopback first: the listen check depends on it. */
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "listen_non_loopback"))) {
		if (!cJSON_IsBool(v)) {
			errmsg_set(err, errlen, "%s: key 'listen_non_loopback' must be true or false", origin);
			return -1;
		}
		c->listen_any = cJSON_IsTrue(v);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "listen"))) {
		char *host;
		unsigned port;

		if (!cJSON_IsString(v)) {
			errmsg_set(err, errlen, "%s: key 'listen' must be a string \"HOST:PORT\"", origin);
			return -1;
		}
		if (parse_listen(origin, "listen", v->valuestring, c->listen_any, "listen_non_loopback",
		                 &host, &port, err, errlen) < 0)
			return -1;
		set_str(&c->listen_host, host);
		c->listen_port = port;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "tls")) &&
	    parse_tls(origin, v, base, c, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "profiles_dir"))) {
		if (get_path(origin, "profiles_dir", v, base, &p, err, errlen) < 0)
			return -1;
		set_str(&c->profiles_dir, p);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "workspaces")) &&
	    parse_workspaces(origin, v, c, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "uid_range")) &&
	    parse_uid_range(origin, v, c, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "max_runs"))) {
		if (jsonstrict_get_uint(origin, "max_runs", v, 1, 1024, &x, err, errlen) < 0)
			return -1;
		c->max_runs = (unsigned)x;
	}
	/* The FIFO of requests past max_runs (runq.h); 0 means no queue. */
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "queue_max"))) {
		if (jsonstrict_get_uint(origin, "queue_max", v, 0, 4096, &x, err, errlen) < 0)
			return -1;
		c->queue_max = (unsigned)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "queue_timeout_s"))) {
		if (jsonstrict_get_uint(origin, "queue_timeout_s", v, 1, 3600, &x, err, errlen) < 0)
			return -1;
		c->queue_timeout_s = (unsigned)x;
	}
	/* Jobs (jobs.c): live ones per certificate, and how long a finished
	 * one stays readable. */
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "max_jobs"))) {
		if (jsonstrict_get_uint(origin, "max_jobs", v, 0, 256, &x, err, errlen) < 0)
			return -1;
		c->max_jobs = (unsigned)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "job_retain_s"))) {
		if (jsonstrict_get_uint(origin, "job_retain_s", v, 1, 86400, &x, err, errlen) < 0)
			return -1;
		c->job_retain_s = (unsigned)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "secrets_file"))) {
		if (cJSON_IsNull(v)) {
			set_str(&c->secrets_file, NULL);
		} else {
			if (!cJSON_IsString(v)) {
				errmsg_set(err, errlen, "%s: key 'secrets_file' must be a path or null", origin);
				return -1;
			}
			if (get_path(origin, "secrets_file", v, base, &p, err, errlen) < 0)
				return -1;
			set_str(&c->secrets_file, p);
		}
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "audit_log"))) {
		if (cJSON_IsString(v) && !strcmp(v->valuestring, "-"))
			p = strdup("-");
		else if (get_path(origin, "audit_log", v, base, &p, err, errlen) < 0)
			return -1;
		if (!p) {
			errmsg_set(err, errlen, "%s: out of memory", origin);
			return -1;
		}
		set_str(&c->audit_log, p);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "state_dir"))) {
		if (get_path(origin, "state_dir", v, base, &p, err, errlen) < 0)
			return -1;
		set_str(&c->state_dir, p);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "limits")) &&
	    parse_limits(origin, v, c, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "approval_timeout_s"))) {
		if (jsonstrict_get_uint(origin, "approval_timeout_s", v, 1, 86400, &x, err, errlen) < 0)
			return -1;
		c->approval_timeout_s = (unsigned)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "proxy")) &&
	    parse_proxy(origin, v, c, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "prewarm"))) {
		if (jsonstrict_get_uint(origin, "prewarm", v, 0, 8, &x, err, errlen) < 0)
			return -1;
		c->prewarm = (unsigned)x;
	}
	/* Above the newest ABI this build knows, the demand could never be
	 * checked against what the ruleset handles: refused, not clamped. */
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "landlock_min_abi"))) {
		if (jsonstrict_get_uint(origin, "landlock_min_abi", v, 1, LANDLOCK_ABI_KNOWN, &x, err,
					errlen) < 0)
			return -1;
		c->landlock_min_abi = (unsigned)x;
	}

	/* Cross-key rules: each live run holds one uid, so the pool must cover max_runs. */
	if (c->uid_count < c->max_runs) {
		errmsg_set(err, errlen,
		     "%s: key 'uid_range.count' (%u) is smaller than 'max_runs' (%u); every "
		     "concurrent run needs its own uid",
		     origin, c->uid_count, c->max_runs);
		return -1;
	}
	if ((uint64_t)c->uid_first + c->uid_count - 1 > UINT32_MAX - 1) {
		errmsg_set(err, errlen, "%s: key 'uid_range' runs past the largest uid %u", origin,
		     UINT32_MAX - 1);
		return -1;
	}
	return 0;
}

static int parse_with_base(const char *origin, const char *json, size_t len, const char *base,
                           struct config *c, char *err, size_t errlen)
{
	struct config tmp;
	cJSON *root;
	char *src;
	int rc;

	memset(c, 0, sizeof(*c));
	root = jsonstrict_parse(origin, json, len, err, errlen);
	if (!root)
		return -1;
	if (config_defaults(&tmp, err, errlen) < 0) {
		cJSON_Delete(root);
		return -1;
	}
	rc = overlay(origin, root, base, &tmp, err, errlen);
	cJSON_Delete(root);
	if (rc == 0 && !(src = strdup(origin))) {
		errmsg_set(err, errlen, "%s: out of memory", origin);
		rc = -1;
	}
	if (rc < 0) {
		config_free(&tmp);
		return -1;
	}
	set_str(&tmp.source, src);
	*c = tmp;
	return 0;
}

int config_parse(const char *origin, const char *json, size_t len, struct config *c, char *err,
                 size_t errlen)
{
	char cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd))) {
		memset(c, 0, sizeof(*c));
		errmsg_set(err, errlen, "cannot read the current directory: %s", strerror(errno));
		return -1;
	}
	return parse_with_base(origin, json, len, cwd, c, err, errlen);
}

int config_load(const char *path, struct config *c, char *err, size_t errlen)
{
	char *buf = NULL, *real = NULL, *slash;
	size_t len = 0;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (jsonstrict_read_file(AT_FDCWD, path, path, CONFIG_FILE_MAX, &buf, &len, err, errlen) < 0)
		return -1;
	real = realpath(path, NULL);
	if (!real) {
		errmsg_set(err, errlen, "%s: cannot resolve: %s", path, strerror(errno));
		goto out;
	}
	slash = strrchr(real, '/');
	if (slash == real)
		slash[1] = '\0'; /* a file in "/" */
	else
		*slash = '\0';
	rc = parse_with_base(path, buf, len, real, c, err, errlen);
out:
	free(real);
	free(buf);
	return rc;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	free(c->listen_host);
	free(c->tls_ca);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->profiles_dir);
	for (size_t i = 0; i < c->n_workspaces && i < CONFIG_WORKSPACES_MAX; i++) {
		free(c->workspaces[i]);
		free(c->git_dirs[i]);
	}
	free(c->secrets_file);
	free(c->audit_log);
	free(c->state_dir);
	free(c->proxy_listen);
	free(c->source);
	memset(c, 0, sizeof(*c));
}
