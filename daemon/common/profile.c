/*
 * profile.c - sandbox profiles (SPEC §5): strict JSON loading, the canonical
 * form and its policy hash.
 *
 * Trust: profile files are operator configuration, read once at start, but
 * parsed strictly: an unknown key, a key given twice, an unknown value, a
 * wrong type or a missing required key refuses the whole set, naming the file
 * and the key, because a misspelled lock must never resolve to a wider one.
 *
 * The canonical form is the profile as a file would state it with every key
 * present (defaults filled in), keys sorted, set-like lists sorted, paths
 * without trailing slashes, no whitespace.  Two files that mean the same thing
 * therefore hash the same, and any change of meaning changes the hash.
 */
#include "errmsg.h"
#include "jsonstrict.h"
#include "utf8.h"
#include "profile.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROFILE_FILE_MAX (64u * 1024u)  /* a profile is a screenful of JSON */
#define ENV_NAME_MAX 128
#define ENV_VALUE_MAX 4096
#define HOST_MAX 253                     /* RFC 1035 name length, without the port */
#define MIB (1024u * 1024u)

#define DEFAULT_PIDS_MAX 64u
#define DEFAULT_MEMORY_MB 1024u
#define DEFAULT_TIMEOUT_S 60u
#define DEFAULT_TIMEOUT_MAX_S 600u
#define DEFAULT_OUTPUT_MAX (1u * MIB)

/* ---- environment names (shared with the request validator) ---- */

bool profile_env_name_valid(const char *name)
{
	size_t i;

	if (!name || !((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
	               name[0] == '_'))
		return false;
	for (i = 1; name[i]; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return i < ENV_NAME_MAX;
}

/*
 * Variables that change how a shell, the dynamic loader, libc or a language
 * runtime finds or runs code, or that the sandbox itself sets.  A grant or a
 * request may not set them: the sandbox builds PATH/HOME/proxy variables
 * itself, and the loader/runtime hooks turn "set a variable" into "run this
 * code first", which is not what a caller asking for an environment value
 * means.  Sources: glibc's UNSECURE_ENVVARS (sysdeps/generic/unsecvars.h),
 * bash(1) INVOCATION and Shell Variables, python(1), node(1) NODE_OPTIONS,
 * perlrun(1), ruby(1), git(1) ENVIRONMENT VARIABLES.  TMPDIR (on glibc's list
 * for setuid programs) is allowed: here it only names a directory the run can
 * already write.  Compared case-insensitively: curl and others honour
 * lower-case http_proxy, and refusing "path" too costs nothing.
 */
static const char *const dangerous_exact[] = {
	/* the sandbox's own */
	"PATH", "HOME", "SHELL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY",
	/* shells */
	"IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH",
	"GLOBIGNORE", "BASH_XTRACEFD", "POSIXLY_CORRECT", "ZDOTDIR",
	/* glibc */
	"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
	"MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
	/* language runtimes */
	"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE",
	"PYTHONBREAKPOINT", "PYTHONEXECUTABLE", "PYTHONPLATLIBDIR", "NODE_OPTIONS", "NODE_PATH",
	"NODE_REPL_EXTERNAL_MODULE", "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT",
	"RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	/* git: config injection runs programs (core.fsmonitor, core.pager, ...) */
	"GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
	"GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_DIR", "GIT_WORK_TREE",
	/* other tools that run a program named in a variable */
	"SSH_ASKPASS", "SUDO_ASKPASS", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER",
	NULL};

static const char *const dangerous_prefix[] = {
	"LD_",             /* ld.so(8): LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, ... */
	"BASH_FUNC_",      /* exported bash functions */
	"DYLD_",           /* the same idea elsewhere; never meaningful here */
	"GIT_CONFIG",      /* git(1): GIT_CONFIG, _PARAMETERS, _COUNT, _KEY_<n>, _VALUE_<n>, _GLOBAL, ... */
	"SHARNESS_",       /* reserved for the sandbox's own use */
	NULL};

bool profile_env_name_dangerous(const char *name)
{
	if (!name)
		return true;
	for (size_t i = 0; dangerous_exact[i]; i++)
		if (!strcasecmp(name, dangerous_exact[i]))
			return true;
	for (size_t i = 0; dangerous_prefix[i]; i++)
		if (!strncasecmp(name, dangerous_prefix[i], strlen(dangerous_prefix[i])))
			return true;
	return false;
}

/* ---- strict JSON helpers ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_env(const void *a, const void *b)
{
	return strcmp(((const struct profile_env *)a)->name, ((const struct profile_env *)b)->name);
}

/* ---- paths and hosts ---- */

/*
 * A path in normal form: components separated by single '/', none of them
 * "." or "..", no trailing '/' (one is stripped first).  Normal form matters
 * because the launcher compares and mounts these strings: "a/../b" or "a//b"
 * would be read one way here and another way by a reader of the file.
 */
static bool path_normal(char *p, bool absolute)
{
	size_t len = strlen(p);
	const char *c;

	if (len == 0 || len >= PATH_MAX || (p[0] == '/') != absolute)
		return false;
	if (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	if (absolute && len == 1)
		return true; /* "/" itself: normal, refused by the caller with its own sentence */
	c = absolute ? p + 1 : p;
	for (;;) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!slash)
			return true;
		c = slash + 1;
	}
}

/* a is b or a directory above b (component-wise). */
static bool path_covers(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (!strcmp(a, "/"))
		return true;
	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/');
}

/*
 * "host", "*.domain" or either with ":PORT".  Lower-case only, so the file
 * says exactly what the proxy compares after canonicalising (SPEC §8).
 * A wildcard needs at least two labels after "*." so "*.com" cannot be
 * written by accident.
 */
static int host_check(const char *s, const char **why)
{
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hlen = colon ? (size_t)(colon - s) : strlen(s);
	unsigned labels = 0;
	bool wild = false;

	*why = "must be a lower-case host name or '*.domain', optionally with ':PORT'";
	if (colon) {
		const char *p = colon + 1;
		unsigned long port = 0;

		if (!*p || *p == '0' || strlen(p) > 5)
			return -1;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -1;
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (port < 1 || port > 65535)
			return -1;
	}
	if (hlen >= 2 && h[0] == '*' && h[1] == '.') {
		wild = true;
		h += 2;
		hlen -= 2;
	}
	if (hlen == 0 || hlen > HOST_MAX)
		return -1;
	for (size_t i = 0; i < hlen;) {
		size_t n = 0;

		while (i + n < hlen && h[i + n] != '.') {
			char c = h[i + n];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
				return -1;
			n++;
		}
		if (n == 0 || n > 63 || h[i] == '-' || h[i + n - 1] == '-')
			return -1;
		labels++;
		i += n;
		if (i < hlen) {
			i++; /* the dot */
			if (i == hlen)
				return -1; /* trailing dot */
		}
	}
	if (wild && labels < 2) {
		*why = "is a wildcard over a top-level domain; name at least two labels after '*.'";
		return -1;
	}
	return 0;
}

/* ---- parsing ---- */

enum list_kind { LIST_RELATIVE, LIST_ABSOLUTE, LIST_HOST };

/* A list of unique strings, checked per kind, sorted (a set: order carries no meaning). */
static int get_list(const char *origin, const char *key, const cJSON *v, enum list_kind kind,
                    char **out, size_t *n_out, char *err, size_t errlen)
{
	const cJSON *e;
	size_t n = 0;

	if (!cJSON_IsArray(v)) {
		errmsg_set(err, errlen, "%s: key '%s' must be a list of strings", origin, key);
		return -1;
	}
	if (cJSON_GetArraySize(v) > PROFILE_LIST_MAX) {
		errmsg_set(err, errlen, "%s: key '%s' holds more than %d entries", origin, key,
		     PROFILE_LIST_MAX);
		return -1;
	}
	cJSON_ArrayForEach(e, v) {
		const char *why;
		char *s;

		if (!cJSON_IsString(e)) {
			errmsg_set(err, errlen, "%s: key '%s' must be a list of strings", origin, key);
			goto err_free;
		}
		s = strdup(e->valuestring);
		if (!s) {
			errmsg_set(err, errlen, "%s: out of memory", origin);
			goto err_free;
		}
		out[n++] = s;
		switch (kind) {
		case LIST_RELATIVE:
			if (!path_normal(s, false)) {
				errmsg_set(err, errlen,
				     "%s: key '%s' entry '%s' must be a relative path inside the "
				     "workspace, without '..', '.' or empty components",
				     origin, key, e->valuestring);
				goto err_free;
			}
			break;
		case LIST_ABSOLUTE:
			if (!path_normal(s, true)) {
				errmsg_set(err, errlen,
				     "%s: key '%s' entry '%s' must be an absolute path without '..', '.' "
				     "or empty components",
				     origin, key, e->valuestring);
				goto err_free;
			}
			if (!strcmp(s, "/")) {
				errmsg_set(err, errlen,
				     "%s: key '%s' entry '/' names the root directory; name the "
				     "directories instead",
				     origin, key);
				goto err_free;
			}
			break;
		case LIST_HOST:
			if (host_check(s, &why) < 0) {
				errmsg_set(err, errlen, "%s: key '%s' entry '%s' %s", origin, key, e->valuestring,
				     why);
				goto err_free;
			}
			break;
		}
		for (size_t i = 0; i + 1 < n; i++)
			if (!strcmp(out[i], s)) {
				errmsg_set(err, errlen, "%s: key '%s' names '%s' more than once", origin, key, s);
				goto err_free;
			}
	}
	qsort(out, n, sizeof(out[0]), cmp_str);
	*n_out = n;
	return 0;
err_free:
	while (n)
		free(out[--n]);
	return -1;
}

static int get_string(const char *origin, const char *key, const cJSON *v, const char **out,
                      char *err, size_t errlen)
{
	if (!cJSON_IsString(v)) {
		errmsg_set(err, errlen, "%s: key '%s' must be a string", origin, key);
		return -1;
	}
	*out = v->valuestring;
	return 0;
}

static bool name_valid(const char *s)
{
	size_t i;

	if (!(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (i = 1; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return i < PROFILE_NAME_MAX;
}

static int parse_network(const char *origin, const cJSON *v, struct profile *p, char *err,
                         size_t errlen)
{
	static const char *const known[] = {"mode", "allow", NULL};
	const cJSON *mode, *allow;

	if (!cJSON_IsObject(v)) {
		errmsg_set(err, errlen,
		     "%s: key 'network' must be an object such as {\"mode\": \"none\"} or "
		     "{\"mode\": \"proxy\", \"allow\": [...]}",
		     origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "network.", v, known, err, errlen) < 0)
		return -1;
	mode = cJSON_GetObjectItemCaseSensitive(v, "mode");
	allow = cJSON_GetObjectItemCaseSensitive(v, "allow");
	if (!mode) {
		errmsg_set(err, errlen, "%s: key 'network.mode' is required", origin);
		return -1;
	}
	if (cJSON_IsString(mode) && !strcmp(mode->valuestring, "none")) {
		p->network = PROFILE_NETWORK_NONE;
		if (allow) {
			errmsg_set(err, errlen,
			     "%s: key 'network.allow' is only allowed when 'network.mode' is \"proxy\"",
			     origin);
			return -1;
		}
		return 0;
	}
	if (!cJSON_IsString(mode) || strcmp(mode->valuestring, "proxy")) {
		errmsg_set(err, errlen, "%s: key 'network.mode' must be \"none\" or \"proxy\"", origin);
		return -1;
	}
	p->network = PROFILE_NETWORK_PROXY;
	if (!allow) {
		errmsg_set(err, errlen, "%s: key 'network.allow' is required when 'network.mode' is \"proxy\"",
		     origin);
		return -1;
	}
	if (get_list(origin, "network.allow", allow, LIST_HOST, p->proxy_allow, &p->n_proxy_allow,
	             err, errlen) < 0)
		return -1;
	if (p->n_proxy_allow == 0) {
		errmsg_set(err, errlen, "%s: key 'network.allow' must name at least one host", origin);
		return -1;
	}
	return 0;
}

static int parse_timeout(const char *origin, const cJSON *v, struct profile *p, char *err,
                         size_t errlen)
{
	static const char *const known[] = {"default", "max", NULL};
	const cJSON *d, *m;
	uint64_t x;

	if (!cJSON_IsObject(v)) {
		errmsg_set(err, errlen, "%s: key 'timeout_s' must be an object {\"default\": N, \"max\": N}",
		     origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "timeout_s.", v, known, err, errlen) < 0)
		return -1;
	d = cJSON_GetObjectItemCaseSensitive(v, "default");
	m = cJSON_GetObjectItemCaseSensitive(v, "max");
	if (!d || !m) {
		errmsg_set(err, errlen, "%s: key 'timeout_s.%s' is required", origin, d ? "max" : "default");
		return -1;
	}
	if (jsonstrict_get_uint(origin, "timeout_s.default", d, 1, 86400, &x, err, errlen) < 0)
		return -1;
	p->timeout_default_s = (unsigned)x;
	if (jsonstrict_get_uint(origin, "timeout_s.max", m, 1, 86400, &x, err, errlen) < 0)
		return -1;
	p->timeout_max_s = (unsigned)x;
	if (p->timeout_default_s > p->timeout_max_s) {
		errmsg_set(err, errlen, "%s: key 'timeout_s.default' (%u) is larger than 'timeout_s.max' (%u)",
		     origin, p->timeout_default_s, p->timeout_max_s);
		return -1;
	}
	return 0;
}

static int parse_env(const char *origin, const cJSON *v, struct profile *p, char *err,
                     size_t errlen)
{
	const cJSON *e;

	if (!cJSON_IsObject(v)) {
		errmsg_set(err, errlen, "%s: key 'env' must be an object of strings", origin);
		return -1;
	}
	if (cJSON_GetArraySize(v) > PROFILE_LIST_MAX) {
		errmsg_set(err, errlen, "%s: key 'env' holds more than %d entries", origin, PROFILE_LIST_MAX);
		return -1;
	}
	for (const cJSON *a = v->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (!strcmp(a->string, b->string)) {
				errmsg_set(err, errlen, "%s: key 'env.%s' appears more than once", origin,
				     a->string);
				return -1;
			}
	cJSON_ArrayForEach(e, v) {
		struct profile_env *pe;

		if (!profile_env_name_valid(e->string)) {
			errmsg_set(err, errlen,
			     "%s: key 'env.%.*s' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*, "
			     "at most %d bytes)",
			     origin, ENV_NAME_MAX, e->string, ENV_NAME_MAX - 1);
			return -1;
		}
		if (profile_env_name_dangerous(e->string)) {
			errmsg_set(err, errlen,
			     "%s: key 'env.%s' may not be granted: the sandbox sets it itself or it "
			     "makes programs load or run other code",
			     origin, e->string);
			return -1;
		}
		if (!cJSON_IsString(e)) {
			errmsg_set(err, errlen, "%s: key 'env.%s' must be a string", origin, e->string);
			return -1;
		}
		if (strlen(e->valuestring) > ENV_VALUE_MAX) {
			errmsg_set(err, errlen, "%s: key 'env.%s' is longer than %d bytes", origin, e->string,
			     ENV_VALUE_MAX);
			return -1;
		}
		pe = &p->env[p->n_env];
		pe->name = strdup(e->string);
		pe->value = strdup(e->valuestring);
		p->n_env++;
		if (!pe->name || !pe->value) {
			errmsg_set(err, errlen, "%s: out of memory", origin);
			return -1;
		}
	}
	qsort(p->env, p->n_env, sizeof(p->env[0]), cmp_env);
	return 0;
}

/* ---- canonical form ---- */

static cJSON *str_array(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);

		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

/* Add `item` under `key` (objects keep insertion order); `item` is freed on failure. */
static bool add(cJSON *obj, const char *key, cJSON *item)
{
	if (!item)
		return false;
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

/*
 * Every key is added in strcmp order at every level: that order, with no
 * whitespace (cJSON_PrintUnformatted), is the canonical form.  Sub-objects
 * are attached to `o` first so that `o` owns everything and one delete frees it.
 */
static char *canonical(const struct profile *p)
{
	cJSON *o = cJSON_CreateObject(), *env = NULL, *net = NULL, *to = NULL;
	char *out = NULL;
	bool ok = o != NULL;

	ok = ok && add(o, "approval",
	               cJSON_CreateString(p->approval == PROFILE_APPROVAL_EACH ? "each" : "never"));
	ok = ok && add(o, "description", cJSON_CreateString(p->description));
	ok = ok && (env = cJSON_AddObjectToObject(o, "env")) != NULL;
	for (size_t i = 0; ok && i < p->n_env; i++) /* p->env is sorted by name */
		ok = add(env, p->env[i].name, cJSON_CreateString(p->env[i].value));
	ok = ok && add(o, "exec_paths", str_array(p->exec_paths, p->n_exec_paths));
	uint64_t memory_max_mb = p->memory_max / MIB; /* whole MiB, as the file says */
	ok = ok && add(o, "memory_max_mb", cJSON_CreateNumber((double)memory_max_mb));
	ok = ok && add(o, "name", cJSON_CreateString(p->name));
	ok = ok && (net = cJSON_AddObjectToObject(o, "network")) != NULL;
	if (ok && p->network == PROFILE_NETWORK_PROXY)
		ok = add(net, "allow", str_array(p->proxy_allow, p->n_proxy_allow));
	ok = ok && add(net, "mode",
	               cJSON_CreateString(p->network == PROFILE_NETWORK_PROXY ? "proxy" : "none"));
	ok = ok && add(o, "output_max_bytes", cJSON_CreateNumber((double)p->output_max));
	ok = ok && add(o, "pids_max", cJSON_CreateNumber(p->pids_max));
	ok = ok && add(o, "read_paths", str_array(p->read_paths, p->n_read_paths));
	ok = ok && (to = cJSON_AddObjectToObject(o, "timeout_s")) != NULL;
	ok = ok && add(to, "default", cJSON_CreateNumber(p->timeout_default_s));
	ok = ok && add(to, "max", cJSON_CreateNumber(p->timeout_max_s));
	if (ok && p->tmp_exec) /* keys in byte order: after timeout_s */
		ok = add(o, "tmp", cJSON_CreateString("exec"));
	ok = ok && add(o, "workspace",
	               cJSON_CreateString(p->workspace_write ? "read-write" : "read-only"));
	ok = ok && add(o, "workspace_exec", str_array(p->workspace_exec, p->n_workspace_exec));
	/* workspace_exec_create and tmp are written only when not the default,
	 * so that profiles without them keep the policy hash they had. */
	if (ok && p->workspace_exec_create)
		ok = add(o, "workspace_exec_create", cJSON_CreateBool(true));
	ok = ok && add(o, "write_paths", str_array(p->write_paths, p->n_write_paths));
	if (ok)
		out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}

static int parse_root(const char *origin, const char *expected_name, const cJSON *root,
                      struct profile *p, char *err, size_t errlen)
{
	static const char *const known[] = {
		"name",        "description", "workspace", "workspace_exec", "read_paths",
		"write_paths", "exec_paths",  "network",   "pids_max",       "memory_max_mb",
		"timeout_s",   "output_max_bytes", "env",  "approval",       "workspace_exec_create",
		"tmp",         NULL};
	static const char *const required[] = {"name", "description", "workspace", "network",
	                                       "approval", NULL};
	const cJSON *v;
	const char *s;
	uint64_t x;

	if (!cJSON_IsObject(root)) {
		errmsg_set(err, errlen, "%s: the profile must be a JSON object", origin);
		return -1;
	}
	if (jsonstrict_check_keys(origin, "", root, known, err, errlen) < 0)
		return -1;
	for (size_t i = 0; required[i]; i++)
		if (!cJSON_GetObjectItemCaseSensitive(root, required[i])) {
			errmsg_set(err, errlen, "%s: key '%s' is required", origin, required[i]);
			return -1;
		}

	v = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (get_string(origin, "name", v, &s, err, errlen) < 0)
		return -1;
	if (!name_valid(s)) {
		errmsg_set(err, errlen, "%s: key 'name' must match [a-z][a-z0-9_-]* and be at most %d bytes",
		     origin, PROFILE_NAME_MAX - 1);
		return -1;
	}
	if (expected_name && strcmp(s, expected_name)) {
		errmsg_set(err, errlen, "%s: key 'name' is '%s' but the file is named '%s.json'; they must match",
		     origin, s, expected_name);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "%s", s); /* length checked by name_valid() */

	v = cJSON_GetObjectItemCaseSensitive(root, "description");
	if (get_string(origin, "description", v, &s, err, errlen) < 0)
		return -1;
	if (!s[0]) {
		errmsg_set(err, errlen, "%s: key 'description' must not be empty", origin);
		return -1;
	}
	if (strlen(s) >= PROFILE_DESC_MAX) {
		errmsg_set(err, errlen, "%s: key 'description' must be at most %d bytes", origin,
		     PROFILE_DESC_MAX - 1);
		return -1;
	}
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f) {
			errmsg_set(err, errlen, "%s: key 'description' must be one line without control characters",
			     origin);
			return -1;
		}
	snprintf(p->description, sizeof(p->description), "%s", s); /* length checked above */

	v = cJSON_GetObjectItemCaseSensitive(root, "workspace");
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "read-only")) {
		p->workspace_write = false;
	} else if (cJSON_IsString(v) && !strcmp(v->valuestring, "read-write")) {
		p->workspace_write = true;
	} else {
		errmsg_set(err, errlen, "%s: key 'workspace' must be \"read-only\" or \"read-write\"", origin);
		return -1;
	}

	if ((v = cJSON_GetObjectItemCaseSensitive(root, "workspace_exec")) &&
	    get_list(origin, "workspace_exec", v, LIST_RELATIVE, p->workspace_exec,
	             &p->n_workspace_exec, err, errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "workspace_exec_create"))) {
		if (!cJSON_IsBool(v)) {
			errmsg_set(err, errlen, "%s: key 'workspace_exec_create' must be true or false", origin);
			return -1;
		}
		p->workspace_exec_create = cJSON_IsTrue(v);
		for (size_t i = 0; p->workspace_exec_create && i < p->n_workspace_exec; i++)
			if (!p->workspace_write || strchr(p->workspace_exec[i], '/')) {
				errmsg_set(err, errlen,
				           "%s: key 'workspace_exec_create' needs a read-write workspace and "
				           "workspace_exec entries of one component ('%s' is not)",
				           origin, p->workspace_exec[i]);
				return -1;
			}
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "tmp"))) {
		if (cJSON_IsString(v) && !strcmp(v->valuestring, "exec"))
			p->tmp_exec = true;
		else if (!(cJSON_IsString(v) && !strcmp(v->valuestring, "noexec"))) {
			errmsg_set(err, errlen, "%s: key 'tmp' must be \"noexec\" or \"exec\"", origin);
			return -1;
		}
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "read_paths")) &&
	    get_list(origin, "read_paths", v, LIST_ABSOLUTE, p->read_paths, &p->n_read_paths, err,
	             errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "write_paths")) &&
	    get_list(origin, "write_paths", v, LIST_ABSOLUTE, p->write_paths, &p->n_write_paths, err,
	             errlen) < 0)
		return -1;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "exec_paths")) &&
	    get_list(origin, "exec_paths", v, LIST_ABSOLUTE, p->exec_paths, &p->n_exec_paths, err,
	             errlen) < 0)
		return -1;
	/* Writable mounts are noexec (SPEC §6): a path both writable and executable is a mistake. */
	for (size_t i = 0; i < p->n_exec_paths; i++)
		for (size_t j = 0; j < p->n_write_paths; j++)
			if (path_covers(p->exec_paths[i], p->write_paths[j]) ||
			    path_covers(p->write_paths[j], p->exec_paths[i])) {
				errmsg_set(err, errlen,
				     "%s: key 'exec_paths' entry '%s' overlaps 'write_paths' entry '%s'; a "
				     "path may be writable or executable, not both",
				     origin, p->exec_paths[i], p->write_paths[j]);
				return -1;
			}

	if (parse_network(origin, cJSON_GetObjectItemCaseSensitive(root, "network"), p, err,
	                  errlen) < 0)
		return -1;

	p->pids_max = DEFAULT_PIDS_MAX;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "pids_max"))) {
		if (jsonstrict_get_uint(origin, "pids_max", v, 1, 4096, &x, err, errlen) < 0)
			return -1;
		p->pids_max = (unsigned)x;
	}
	p->memory_max = (uint64_t)DEFAULT_MEMORY_MB * MIB;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "memory_max_mb"))) {
		if (jsonstrict_get_uint(origin, "memory_max_mb", v, 0, 65536, &x, err, errlen) < 0)
			return -1;
		p->memory_max = x * MIB;
	}
	p->timeout_default_s = DEFAULT_TIMEOUT_S;
	p->timeout_max_s = DEFAULT_TIMEOUT_MAX_S;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "timeout_s")) &&
	    parse_timeout(origin, v, p, err, errlen) < 0)
		return -1;
	p->output_max = DEFAULT_OUTPUT_MAX;
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "output_max_bytes"))) {
		if (jsonstrict_get_uint(origin, "output_max_bytes", v, 1024, 64u * MIB, &x, err, errlen) < 0)
			return -1;
		p->output_max = (size_t)x;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(root, "env")) &&
	    parse_env(origin, v, p, err, errlen) < 0)
		return -1;

	v = cJSON_GetObjectItemCaseSensitive(root, "approval");
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "never")) {
		p->approval = PROFILE_APPROVAL_NEVER;
	} else if (cJSON_IsString(v) && !strcmp(v->valuestring, "each")) {
		p->approval = PROFILE_APPROVAL_EACH;
	} else {
		errmsg_set(err, errlen, "%s: key 'approval' must be \"never\" or \"each\"", origin);
		return -1;
	}
	return 0;
}

int profile_parse(const char *origin, const char *expected_name, const char *json, size_t len,
                  struct profile *out, char *err, size_t errlen)
{
	cJSON *root;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > PROFILE_FILE_MAX) {
		errmsg_set(err, errlen, "%s: larger than %u bytes", origin, PROFILE_FILE_MAX);
		return -1;
	}
	/* The canonical form is served as JSON and hashed: it must be valid text. */
	if (!utf8_valid(json, len)) {
		errmsg_set(err, errlen, "%s: not valid UTF-8 text", origin);
		return -1;
	}
	root = jsonstrict_parse(origin, json, len, err, errlen);
	if (!root)
		return -1;
	rc = parse_root(origin, expected_name, root, out, err, errlen);
	cJSON_Delete(root);
	if (rc == 0) {
		out->canonical_json = canonical(out);
		if (!out->canonical_json || jsonstrict_hash(out->canonical_json, out->policy_hash) < 0) {
			errmsg_set(err, errlen, "%s: cannot compute the policy hash (out of memory?)", origin);
			rc = -1;
		}
	}
	if (rc < 0)
		profile_free(out);
	return rc;
}

/* ---- sets ---- */

int profile_set_load(const char *dir, struct profile_set *out, char *err, size_t errlen)
{
	char *names[PROFILE_SET_MAX];
	size_t n = 0, loaded = 0;
	struct dirent *de;
	DIR *d = NULL;
	int dfd, rc = -1;

	memset(out, 0, sizeof(*out));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		errmsg_set(err, errlen, "%s: cannot open the profiles directory: %s", dir, strerror(errno));
		return -1;
	}
	d = fdopendir(dfd);
	if (!d) {
		errmsg_set(err, errlen, "%s: cannot read the profiles directory: %s", dir, strerror(errno));
		close(dfd);
		return -1;
	}
	errno = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		/* Dotfiles (editor swap and backup files) are never profiles. */
		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		if (n == PROFILE_SET_MAX) {
			errmsg_set(err, errlen, "%s: holds more than %d profiles", dir, PROFILE_SET_MAX);
			goto out;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			errmsg_set(err, errlen, "%s: out of memory", dir);
			goto out;
		}
		n++;
		errno = 0;
	}
	if (errno) {
		errmsg_set(err, errlen, "%s: cannot read the profiles directory: %s", dir, strerror(errno));
		goto out;
	}
	if (n == 0) {
		errmsg_set(err, errlen, "%s: holds no profile (no *.json file)", dir);
		goto out;
	}
	qsort(names, n, sizeof(names[0]), cmp_str);
	out->v = calloc(n, sizeof(out->v[0]));
	if (!out->v) {
		errmsg_set(err, errlen, "%s: out of memory", dir);
		goto out;
	}
	for (loaded = 0; loaded < n; loaded++) {
		char origin[PATH_MAX + NAME_MAX + 2], expected[NAME_MAX + 1];
		char *buf = NULL;
		size_t len = 0;
		int r;

		snprintf(origin, sizeof(origin), "%s%s%s", dir,
		         dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", names[loaded]);
		snprintf(expected, sizeof(expected), "%.*s", (int)(strlen(names[loaded]) - 5),
		         names[loaded]);
		if (jsonstrict_read_file(dirfd(d), names[loaded], origin, PROFILE_FILE_MAX, &buf, &len, err, errlen) < 0)
			goto out;
		r = profile_parse(origin, expected, buf, len, &out->v[loaded], err, errlen);
		free(buf);
		if (r < 0)
			goto out;
		out->n = loaded + 1;
		/* Names equal file names, so this cannot trigger today; it guards the table key. */
		for (size_t i = 0; i < loaded; i++)
			if (!strcmp(out->v[i].name, out->v[loaded].name)) {
				errmsg_set(err, errlen, "%s: profile '%s' is defined twice", origin,
				     out->v[loaded].name);
				goto out;
			}
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	closedir(d);
	if (rc < 0)
		profile_set_free(out);
	return rc;
}

const struct profile *profile_set_find(const struct profile_set *set, const char *name, size_t *id)
{
	if (!set || !name)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].name, name)) {
			if (id)
				*id = i;
			return &set->v[i];
		}
	return NULL;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_workspace_exec; i++)
		free(p->workspace_exec[i]);
	for (size_t i = 0; i < p->n_read_paths; i++)
		free(p->read_paths[i]);
	for (size_t i = 0; i < p->n_write_paths; i++)
		free(p->write_paths[i]);
	for (size_t i = 0; i < p->n_exec_paths; i++)
		free(p->exec_paths[i]);
	for (size_t i = 0; i < p->n_proxy_allow; i++)
		free(p->proxy_allow[i]);
	for (size_t i = 0; i < p->n_env; i++) {
		/* Not secret: granted values are policy, shown by GET /v0/profiles. */
		free(p->env[i].name);
		free(p->env[i].value);
	}
	free(p->canonical_json);
	memset(p, 0, sizeof(*p));
}

void profile_set_free(struct profile_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		profile_free(&set->v[i]);
	free(set->v);
	set->v = NULL;
	set->n = 0;
}
