/*
 * main.c - sharnessd-front, the front's own executable.  sharnessd (root)
 * forks, drops the child to the front's uid with no capability and
 * no_new_privs, and execs this with the descriptors of handover.h; it
 * maps libmicrohttpd, GnuTLS and Vectorscan, which root never does.
 *
 *   sharnessd-front --front     serve (only as started by sharnessd)
 *   sharnessd-front --filter …  the secret filter on stdin (sharnessd --filter)
 *   sharnessd-front --probe-lockdown [--syscall] PATH…
 *                               apply the front's own locks to this process
 *                               and try to read and write each PATH (and,
 *                               with --syscall, a call off the allowlist):
 *                               what the front could reach on this system
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "approval.h"
#include "front.h"
#include "handover.h"
#include "jobs.h"
#include "lockdown.h"
#include "log.h"
#include "loop.h"
#include "runq.h"
#include "scrub.h"
#include "scrub_vault.h"

#define PEM_MAX (64 * 1024)

static int usage(void)
{
	fprintf(stderr, "sharnessd-front is the network half of sharnessd, started by it; run sharnessd "
	                "(or sharnessd --filter) instead.\n");
	return 2;
}

/* One line per PATH and access: "read PATH: ok" or the errno's text. */
static int probe_lockdown(int argc, char **argv)
{
	char err[256];
	bool sys = argc > 0 && strcmp(argv[0], "--syscall") == 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || lockdown_front(err, sizeof(err)) < 0) {
		fprintf(stderr, "sharnessd-front: %s\n", err);
		return 1;
	}
	for (int i = sys; i < argc; i++) {
		static const struct {
			const char *what;
			int flags;
		} how[] = {{"read", O_RDONLY}, {"write", O_WRONLY | O_APPEND}};
		for (size_t k = 0; k < 2; k++) {
			int fd = open(argv[i], how[k].flags | O_CLOEXEC | O_NOCTTY);
			printf("%s %s: %s\n", how[k].what, argv[i], fd >= 0 ? "ok" : strerror(errno));
			if (fd >= 0)
				close(fd);
		}
	}
	fflush(stdout);
	if (sys)
		syscall(SYS_unshare, 0); /* off the allowlist: the SIGSYS handler ends us */
	return 0;
}

/* Each run holds a few descriptors and its proxy up to two per connection
 * (32 by default): systemd's soft limit of 1024 would run out long before
 * the hard one, and with it every client's accept.  The loop and
 * libmicrohttpd use epoll, never select(2), so any number is fine. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("the front keeps its descriptor limit: %s", strerror(errno));
	}
}

int main(int argc, char **argv)
{
	char err[512];
	if (argc > 1 && strcmp(argv[1], "--filter") == 0)
		return scrub_filter_main(argc - 2, argv + 2);
	if (argc > 1 && strcmp(argv[1], "--probe-lockdown") == 0)
		return probe_lockdown(argc - 2, argv + 2);
	if (argc != 2 || strcmp(argv[1], "--front") != 0)
		return usage();
	log_set_prefix("front");
	raise_nofile();

	struct config cfg;
	struct profile_set profiles;
	struct handover h;
	if (handover_read(HANDOVER_FD_DOC, &h, &cfg, &profiles, err, sizeof(err)) < 0) {
		log_warn("%s", err);
		return 1;
	}
	close(HANDOVER_FD_DOC);
	log_set_verbose(h.verbose);
	size_t key_len = 0;
	struct loop *loop = loop_new();
	struct front f = {
		.cfg = &cfg, .profiles = &profiles, .uid = h.uid, .launcher_pid = h.launcher_pid,
		.vault_keys = h.vault_keys, .policy_json = h.policy_json, .profiles_json = h.profiles_json,
		.tls_ca = h.tls_ca, .tls_cert = h.tls_cert,
		.tls_key = handover_slurp(HANDOVER_FD_TLS_KEY, PEM_MAX, &key_len),
		.ctl = HANDOVER_FD_CTL, .listen_fd = HANDOVER_FD_LISTEN, .audit_fd = HANDOVER_FD_AUDIT,
		.loop = loop, .approvals = loop ? approvals_new(loop, cfg.max_runs * 4) : NULL,
		.runq = loop ? runq_new(loop, cfg.max_runs, cfg.queue_max) : NULL,
		.jobs = jobs_new(cfg.max_jobs, cfg.max_runs, cfg.job_retain_s),
	};
	snprintf(f.policy_hash, sizeof(f.policy_hash), "%s", h.policy_hash);
	if (!f.tls_key || !f.approvals || !f.runq || (cfg.max_jobs && !f.jobs)) {
		log_warn("the front could not take its handover (the TLS key, or out of memory)");
		return 1;
	}
	/* The key counts as a vault key, read from the same memfd. */
	struct scrub_sources src = {.secrets_fd = cfg.secrets_file ? HANDOVER_FD_SECRETS : -1,
	                            .secrets_name = cfg.secrets_file,
	                            .key_fd = HANDOVER_FD_TLS_KEY,
	                            .key_name = cfg.tls_key};
	int rc = front_main(&f, &src, HANDOVER_FD_READY);
	return rc;
}
