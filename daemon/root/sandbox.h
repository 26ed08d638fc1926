/*
 * sandbox.h - the sandbox child: the one ordered function that turns a fresh
 * clone (new pid, mount, ipc, uts and net namespaces) into the run's locked
 * init, which then waits for its one job (a sandbox may be built before its
 * request arrives), forks and execs `/bin/bash -c CMD` and reaps it.
 *
 * Trust: privileged until the privilege drop step; every input was validated
 * by the launcher.  Runs in a single-threaded child of the supervisor.
 */
#ifndef SHARNESS_SANDBOX_H
#define SHARNESS_SANDBOX_H

#include <sys/stat.h>
#include <stdint.h>
#include <stdnoreturn.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "privsep.h"
#include "profile.h"

#define SANDBOX_HOME "/home/sandbox"
/* The command's environment: the base (4), the proxy variables (6), the
 * profile's grants and the request's variables; one bound for both sides. */
#define SANDBOX_ENV_MAX (16 + PROFILE_LIST_MAX + RUN_ENV_COUNT_MAX)
#define SANDBOX_ENV_BYTES_MAX (RUN_ENV_BYTES_MAX + 128u * 1024)
#define SANDBOX_HOSTNAME "sandbox"

struct sandbox_spec {
	uid_t uid;                    /* the run's ephemeral uid (== gid) */
	const struct profile *profile;
	const char *workspace;        /* realpath of the workspace */
	struct stat workspace_st;     /* that directory as the supervisor checked it */
	const char *git_dir;          /* its shared git directory outside it (config.h), or NULL */
	const struct stat *git_dir_st; /* that directory as opened at start */
	int userns_fd;                /* user namespace for the idmapped workspace */
	const char *newroot;          /* empty directory to build the root on */
	int stdin_fd, stdout_fd, stderr_fd;
	int status_fd;                /* write end: struct sandbox_status to the supervisor */
	int sync_fd;                  /* read end: one byte once the supervisor attached our cgroup;
	                               * EOF once the supervisor is gone */
	int job_fd;                   /* read end: the one job, once a request came */
	const struct sock_fprog *seccomp;
	unsigned proxy_port;          /* TCP connect allowed to this port; 0 = none */
};

/* The job: what a request adds to a sandbox built ahead of it.  Sent by the
 * supervisor after it re-validated the request; followed by cwd, cmd and
 * env_count "NAME=VALUE\0" entries (env_len bytes), each part unterminated
 * except the env entries. */
struct sandbox_job {
	uint32_t cwd_len, cmd_len, env_len, env_count;
	uint32_t has_stdin;           /* else the command's stdin is /dev/null */
};

/* READY: every lock is on; `err` is the init's fd number of the seccomp
 * listener (seccomp.c, umask), which the supervisor takes with pidfd_getfd. */
enum sandbox_status_kind { SANDBOX_STATUS_EXIT = 1, SANDBOX_STATUS_SETUP_FAILED = 2, SANDBOX_STATUS_READY = 3 };

struct sandbox_status {
	int kind;
	int wstatus;      /* waitpid status of bash, for SANDBOX_STATUS_EXIT */
	int step;         /* index into sandbox_step_names, for SETUP_FAILED */
	int err;          /* errno of the failed step */
	char what[160];   /* the failing syscall and path, where the step knows it */
};

/* Human name of setup step `step` ("mount the new root", ...). */
/* The steps of the sandbox child, in order (what a SETUP_FAILED status names). */
enum sandbox_step {
	STEP_PDEATHSIG,
	STEP_WAIT_CGROUP,
	STEP_CGROUP_NS,
	STEP_HOSTNAME,
	STEP_LOOPBACK,
	STEP_MOUNTS,
	STEP_CMDLINE,
	STEP_CAPS,
	STEP_IDS,
	STEP_DUMPABLE,
	STEP_NO_NEW_PRIVS,
	STEP_LANDLOCK,
	STEP_SECCOMP,
	STEP_JOB,
	STEP_FORK,
	STEP_COUNT
};

const char *sandbox_step_name(int step);
/* Report `step` failed (with errno) on the status pipe and exit. */
noreturn void sandbox_fail(const struct sandbox_spec *s, int step);

/* Never returns: exits when the command has exited (the pid namespace dies
 * with it), after reporting a setup failure on status_fd, or quietly when
 * the job pipe closes without a job (a prepared sandbox nobody needed). */
noreturn void sandbox_child(const struct sandbox_spec *s);
/* The child's steps after the switch to the run's uid (asrun/sandbox_run.c). */
noreturn void sandbox_as_run(const struct sandbox_spec *s);

#endif
