/*
 * config.h - the daemon configuration (SPEC §11): strict JSON, embedded
 * development defaults, and the config's own policy hash.
 *
 * Trust: the file is operator configuration; unknown keys, wrong types and
 * out-of-range values are refused with one sentence naming the key.
 * Ownership: struct config owns all its strings; config_free() releases them.
 */
#ifndef SHARNESS_CONFIG_H
#define SHARNESS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define CONFIG_WORKSPACES_MAX 16

struct config {
	char *listen_host;             /* "127.0.0.1" */
	unsigned listen_port;          /* 7443 */
	bool listen_any;               /* "listen_non_loopback": true allows a non-loopback address */
	char *tls_ca, *tls_cert, *tls_key;
	char *profiles_dir;
	char *workspaces[CONFIG_WORKSPACES_MAX]; /* absolute, realpath'd at load */
	size_t n_workspaces;
	/* Each workspace's shared git directory where it lies outside (a
	 * linked worktree's or a submodule's): root binds it read-only into the
	 * runs' view.  start/gitdirs.c fills it; NULL = none. */
	char *git_dirs[CONFIG_WORKSPACES_MAX];
	struct stat git_dirs_st[CONFIG_WORKSPACES_MAX]; /* each as checked then */
	uid_t uid_first;               /* uid_range.first */
	unsigned uid_count;            /* uid_range.count */
	unsigned max_runs;             /* concurrent runs; beyond -> the queue */
	char *secrets_file;            /* NULL = none */
	char *audit_log;               /* path, or "-" for stderr */
	char *state_dir;
	size_t max_body;               /* limits.max_body_bytes, default 2 MiB */
	unsigned connection_limit;     /* limits.connections, default 64 */
	unsigned connection_timeout_s; /* limits.idle_timeout_s, default 15 */
	/* A writable run's disk (asrun/watch.c watches the workspace's file
	 * system): at most disk_max_bytes / disk_max_inodes consumed, and never
	 * below disk_reserve_bytes / disk_reserve_inodes free. */
	uint64_t disk_max_bytes;       /* limits.disk_max_bytes, default 2 GiB */
	uint64_t disk_max_inodes;      /* limits.disk_max_inodes, default 100000 */
	uint64_t disk_reserve_bytes;   /* limits.disk_reserve_bytes, default 256 MiB */
	uint64_t disk_reserve_inodes;  /* limits.disk_reserve_inodes, default 10000 */
	unsigned approval_timeout_s;   /* default 90 */
	unsigned queue_max;            /* requests waiting for a slot past max_runs, 0-4096, default 64 */
	unsigned queue_timeout_s;      /* how long one waits, 1-3600, default 30 */
	unsigned max_jobs;             /* live jobs per certificate, 0-256, default 8 (0: no jobs) */
	unsigned job_retain_s;         /* a finished job stays readable, 1-86400, default 600 */
	unsigned prewarm;              /* sandboxes built ahead per profile (first workspace), 0-8, default 2 */
	unsigned landlock_min_abi;     /* refuse to start below this Landlock ABI; 1-8, default 1 */
	char *proxy_listen;            /* accepted, no effect: start-up says so */
	char *source;                  /* file it came from, or "(embedded defaults)" */
};

/* Fill `c` with the embedded development defaults (certs and state under
 * /var/lib/sharness-dev/<12 hex of the SHA-256 of the current directory's real
 * path>/certs and /state, outside the workspace; profiles under ./profiles;
 * workspace = the current directory). */
int config_defaults(struct config *c, char *err, size_t errlen);

/* Load `path` over the defaults. Returns 0 or -1 with err set. */
int config_load(const char *path, struct config *c, char *err, size_t errlen);

/* Parse a JSON document (for tests and fuzzing); `origin` names it in errors. */
int config_parse(const char *origin, const char *json, size_t len, struct config *c,
                 char *err, size_t errlen);

void config_free(struct config *c);

/* A numeric IPv4 address in 127.0.0.0/8 or the IPv6 ::1 (start-up and
 * --doctor judge config.listen_host alike). */
bool config_host_is_loopback(const char *host);

#endif
