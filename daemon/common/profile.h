/*
 * profile.h - sandbox profiles: strict JSON loading and the canonical policy hash.
 *
 * Trust: profile files are trusted configuration written by the operator,
 * but they are parsed strictly anyway: an unknown key, an unknown value or a
 * missing required key refuses the whole set, naming the file and the key,
 * because a misspelled lock must never resolve to a wider one.
 *
 * Ownership: a profile_set owns every string it points to; profile_set_free()
 * releases them.  Loaded once at start, read-only afterwards (shared by the
 * front and the launcher after fork).
 */
#ifndef SHARNESS_PROFILE_H
#define SHARNESS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_NAME_MAX 32        /* bytes incl. NUL; names match [a-z][a-z0-9_-]* */
#define PROFILE_DESC_MAX 256
#define PROFILE_LIST_MAX 32        /* entries in any list (paths, hosts, env grants) */
#define PROFILE_SET_MAX 32         /* profiles in one directory */
#define PROFILE_HASH_LEN 71        /* "sha256:" + 64 hex, without NUL */

enum profile_network { PROFILE_NETWORK_NONE, PROFILE_NETWORK_PROXY };
enum profile_approval { PROFILE_APPROVAL_NEVER, PROFILE_APPROVAL_EACH };

struct profile_env {
	char *name;
	char *value;
};

struct profile {
	char name[PROFILE_NAME_MAX];
	char description[PROFILE_DESC_MAX];
	bool workspace_write;          /* "workspace": "read-only" | "read-write" */
	char *workspace_exec[PROFILE_LIST_MAX]; /* relative subpaths of the workspace where exec is granted */
	size_t n_workspace_exec;
	bool workspace_exec_create;    /* missing one-component workspace_exec dirs are made at prep */
	bool tmp_exec;                 /* "tmp": "exec": the private /tmp allows exec (go test builds there) */
	char *read_paths[PROFILE_LIST_MAX];     /* extra absolute host paths, read-only */
	size_t n_read_paths;
	char *write_paths[PROFILE_LIST_MAX];    /* extra absolute host paths, read-write, noexec */
	size_t n_write_paths;
	char *exec_paths[PROFILE_LIST_MAX];     /* extra absolute host paths, read + execute */
	size_t n_exec_paths;
	enum profile_network network;
	char *proxy_allow[PROFILE_LIST_MAX];    /* "host", "*.suffix", optional ":port" */
	size_t n_proxy_allow;
	unsigned pids_max;             /* default 64 */
	uint64_t memory_max;           /* bytes; 0 = no limit */
	unsigned timeout_default_s;
	unsigned timeout_max_s;
	size_t output_max;             /* bytes kept per stream; default 1 MiB */
	struct profile_env env[PROFILE_LIST_MAX]; /* granted environment values */
	size_t n_env;
	enum profile_approval approval;
	char policy_hash[PROFILE_HASH_LEN + 1];
	char *canonical_json;          /* sorted keys, no whitespace: what is hashed */
};

struct profile_set {
	struct profile *v;
	size_t n;
};

/* Parse one profile document. `origin` names it in errors ("profiles/build.json").
 * The profile's "name" must equal `expected_name` when that is not NULL.
 * Returns 0, or -1 with `err` set to one sentence naming origin and key. */
int profile_parse(const char *origin, const char *expected_name, const char *json,
                  size_t len, struct profile *out, char *err, size_t errlen);

/* Load every *.json in `dir` (sorted by name); at least one profile required. */
int profile_set_load(const char *dir, struct profile_set *out, char *err, size_t errlen);

/* The profile called `name`, or NULL; *id is its index (the launcher's table key). */
const struct profile *profile_set_find(const struct profile_set *set, const char *name,
                                       size_t *id);

void profile_free(struct profile *p);
void profile_set_free(struct profile_set *set);

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*, at most 127 bytes. */
bool profile_env_name_valid(const char *name);

/* A name no profile grant or request may set (compared case-insensitively):
 * the sandbox's own (PATH, HOME, *_PROXY), shell hooks (IFS, ENV, BASH_ENV, ...),
 * loader and libc hooks (LD_*, GCONV_PATH, GLIBC_TUNABLES, ...), language
 * runtime hooks (PYTHONSTARTUP, NODE_OPTIONS, PERL5OPT, RUBYOPT, ...), git
 * config injection (GIT_CONFIG*, GIT_SSH_COMMAND, ...) and SHARNESS_*.
 * NULL counts as dangerous. */
bool profile_env_name_dangerous(const char *name);

#endif
