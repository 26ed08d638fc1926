/*
 * privsep.h - the boundary between the unprivileged front and the root
 * launcher: fixed, versioned messages over SOCK_SEQPACKET socketpairs.
 *
 * Flow of one run:
 *   1. front makes a per-run socketpair (the run channel) and a memfd with
 *      the variable payload (cmd, cwd, env), and sends PRIVSEP_RUN with both
 *      fds over the control socket;
 *   2. the launcher re-validates every field (privsep_check_run + the payload
 *      checks in launcher.c), forks a supervisor, which answers on the run
 *      channel with PRIVSEP_STARTED carrying the stdout/stderr read ends and the
 *      stdin write end, or with PRIVSEP_EXIT carrying an error;
 *   3. the supervisor sends PRIVSEP_EXIT when the run is over and torn down.
 *   The front closing its end of the run channel means "abort this run".
 *
 * Trust: the launcher treats every byte from the front as hostile.
 */
#ifndef SHARNESS_PRIVSEP_H
#define SHARNESS_PRIVSEP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PRIVSEP_MAGIC 0x5348524eu /* "SHRN" */
#define PRIVSEP_VERSION 2

/* Limits shared by the validator in the front and the re-check in the launcher. */
#define RUN_CMD_MAX (256u * 1024)
#define RUN_STDIN_MAX (1024u * 1024)
#define RUN_CWD_MAX 4096u
#define RUN_ENV_COUNT_MAX 64u
#define RUN_ENV_BYTES_MAX (64u * 1024)
#define RUN_ID_LEN 32 /* hex characters */

enum privsep_type {
	PRIVSEP_RUN = 1,
	PRIVSEP_STARTED = 2,
	PRIVSEP_EXIT = 3,
	PRIVSEP_AUDIT_FD = 4, /* launcher -> front, control socket; fds: [new audit log] */
};

struct privsep_header {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
};

/* front -> launcher, control socket; fds: [run channel, payload memfd].
 * Payload layout: cmd (cmd_len) | cwd (cwd_len) | env_count entries of
 * "NAME=VALUE\0" (env_len bytes in all). */
struct privsep_run {
	struct privsep_header h;
	char run_id[RUN_ID_LEN + 1];
	uint32_t profile_id;   /* index into the launcher's own profile table */
	uint32_t workspace_id; /* index into the configured workspaces */
	uint32_t timeout_s;    /* already capped by the front; re-checked */
	uint32_t cmd_len;
	uint32_t cwd_len;
	uint32_t env_len;
	uint32_t env_count;
	uint32_t has_stdin;
};

/* launcher -> front, run channel; fds: [stdout read, stderr read, stdin write (if has_stdin),
 * the egress proxy's listening socket inside the run's netns (proxy profiles)] */
struct privsep_started {
	struct privsep_header h;
	uint32_t uid;
	uint32_t has_stdin; /* fds are sent in order, absent ones skipped */
	uint32_t has_proxy;
};

enum privsep_error {
	PRIVSEP_OK = 0,
	PRIVSEP_ERR_INVALID = 1,  /* a field failed the launcher's re-check (400) */
	PRIVSEP_ERR_CAPACITY = 2, /* no free slot or uid (503) */
	PRIVSEP_ERR_SETUP = 3,    /* the sandbox could not be built (500) */
	PRIVSEP_ERR_CWD = 4,      /* cwd does not resolve inside the workspace (404) */
	PRIVSEP_ERR_DISK = 5,     /* a file system the run may write is below limits.disk_reserve_* (507) */
};

/* What a run cost (asrun/usage.c), in struct privsep_exit.  A PRIVSEP_USAGE_*
 * bit clear in `have` is a value the kernel could not give: null in the
 * reply, never a made-up 0. */
enum {
	PRIVSEP_USAGE_CPU = 1u << 0,
	PRIVSEP_USAGE_PEAK_MEMORY = 1u << 1,
	PRIVSEP_USAGE_PEAK_PIDS = 1u << 2,
	PRIVSEP_USAGE_OOM = 1u << 3,
	PRIVSEP_USAGE_PIDS_LIMITED = 1u << 4,
};
struct privsep_usage {
	uint32_t have;          /* PRIVSEP_USAGE_* */
	uint32_t oom_killed;    /* 0 or 1 */
	uint32_t pids_limited;  /* 0 or 1 */
	uint32_t pad;
	uint64_t cpu_us;
	uint64_t peak_memory_bytes;
	uint64_t peak_pids;
};

/* What a lock of the supervisor refused during a run (notify.c, actor.c),
 * for the reply's `denials`.  The first PRIVSEP_DENIALS_MAX distinct ones
 * are kept; n_denied counts them all. */
enum privsep_denial_kind {
	PRIVSEP_DENIAL_UNIX = 1, /* a connect to a unix socket not the run's */
	PRIVSEP_DENIAL_TCP,      /* a TCP connect outside the proxy's port */
	PRIVSEP_DENIAL_GIT,      /* a write that would create or change a .git */
	PRIVSEP_DENIAL_MODE,     /* a setuid, setgid or world-writable mode */
	PRIVSEP_DENIAL_DAEMON,   /* the daemon could not make the call (no actor, an undumpable caller) */
	PRIVSEP_DENIAL_GIT_RUNS, /* a write to a path the person's git runs or reads as config */
	PRIVSEP_DENIAL_AGENT,    /* a write to an AI agent's configuration in a workspace */
};
#define PRIVSEP_DENIALS_MAX 4
/* Room for a whole path and the sentence around it: the front filters a
 * detail before it cuts it, so a secret in a path is never cut in two. */
#define PRIVSEP_DENIAL_DETAIL (PATH_MAX + 512)
struct privsep_denial {
	uint32_t kind;                        /* enum privsep_denial_kind */
	char detail[PRIVSEP_DENIAL_DETAIL];   /* the call and its path or port */
};

/* launcher -> front, run channel, last message of a run. */
struct privsep_exit {
	struct privsep_header h;
	uint32_t error;     /* enum privsep_error */
	int32_t exit_code;  /* -1 when killed by a signal */
	int32_t signal;     /* 0 or the signal number */
	uint32_t timed_out;
	uint32_t cleanup_failed; /* a process or the cgroup outlived the run */
	uint32_t disk_limited;   /* killed: the run's disk use hit a limits.disk_* bound */
	uint64_t ms;
	struct privsep_usage usage; /* read from the run's cgroup before its removal */
	char message[256]; /* one sentence when error != 0 or disk_limited */
	uint32_t n_denied;  /* refusals of the supervisor's locks, all of them */
	struct privsep_denial denied[PRIVSEP_DENIALS_MAX]; /* the first distinct ones */
};

void privsep_header_init(struct privsep_header *h, enum privsep_type type);
/* 0 when magic, version and type match. */
int privsep_header_check(const struct privsep_header *h, enum privsep_type type);

/* Send one message with up to 4 fds (-1 entries are skipped). */
#define PRIVSEP_PROXY_PORT 3128 /* the egress proxy, as the sandbox sees it */
int privsep_send(int sock, const void *msg, size_t len, const int *fds, size_t nfds);
/* The same, never blocking (EAGAIN): for channels the front handed over,
 * which a hostile front could have filled beforehand. */
int privsep_send_nowait(int sock, const void *msg, size_t len, const int *fds, size_t nfds);
/* Receive one message into `msg` (room for `len` bytes) and up to `maxfds`
 * fds (missing ones are -1; extra fds are closed).  Returns the message's
 * length, 0 on EOF (or an empty message without fds, which SOCK_SEQPACKET
 * cannot tell from it), -1 on error or a message larger than `len` or empty
 * with fds (EPROTO; the fds are closed).
 * The caller checks the header and that the length fits the type. */
ssize_t privsep_recv(int sock, void *msg, size_t len, int *fds, size_t maxfds);

/* Send a PRIVSEP_EXIT that carries an error sentence instead of a result
 * (never blocking). */
int privsep_send_error(int chan, enum privsep_error error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
