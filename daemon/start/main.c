/*
 * main.c - sharnessd start-up: options, configuration, the fail-closed
 * self-check, crash recovery, then the split into the root launcher and the
 * unprivileged front.
 */
#include <arpa/inet.h>
#include <linux/capability.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "gitdirs.h"
#include "keepout.h"
#include "auditfile.h"
#include "config.h"
#include "doctor.h"
#include "frontexec.h"
#include "handover.h"
#include "instance.h"
#include "landlock.h"
#include "launcher.h"
#include "log.h"
#include "mount.h"
#include "ns.h"
#include "policy.h"
#include "profile.h"
#include "cgsetup.h"
#include "runcg.h"
#include "scrub_vault.h"
#include "sandbox_filter.h"
#include "uidpool.h"
#include "uidrange.h"
#include "version.h"

#define PEM_MAX (64 * 1024)

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: sharnessd [--config FILE] [--verbose]\n"
	        "       sharnessd --check-config [--config FILE]\n"
	        "       sharnessd --doctor [--config FILE]\n"
	        "       sharnessd --filter [--secrets FILE] [--tls-key FILE]\n"
	        "       sharnessd --version | --help\n"
	        "\n"
	        "Runs each shell command an agent sends over loopback mutual TLS in a fresh\n"
	        "Linux sandbox and returns its output with secrets filtered out.\n"
	        "\n"
	        "  --config FILE    JSON configuration (see sharnessd.json(5)); without it the\n"
	        "                   embedded development defaults apply (certs and state in\n"
	        "                   /var/lib/sharness-dev/<hash of the checkout>, profiles in\n"
	        "                   ./profiles, the current directory as workspace)\n"
	        "  --check-config   validate the configuration and profiles, print their policy\n"
	        "                   hashes, and exit\n"
	        "  --doctor         check this system and the configuration without starting or\n"
	        "                   changing anything: one line per check, \u2714 or \u2718 with the\n"
	        "                   fix; exit 1 on any \u2718\n"
	        "  --filter         filter stdin to stdout with the secret filter, print a summary\n"
	        "                   on stderr; --secrets FILE adds vault keys, --tls-key FILE a\n"
	        "                   private key to treat as a secret too\n"
	        "  --verbose        log debug lines\n"
	        "\n"
	        "sharnessd must start as root: it keeps a small root launcher and serves the\n"
	        "network from an unprivileged process, sharnessd-front (beside sharnessd or in\n"
	        "../libexec/sharness), which it starts as its own uid.\n"
	        "\n"
	        "API (GET /v0/policy lists the roles per endpoint):\n"
	        "  POST /v0/run                 run a command; \"stream\": true for NDJSON events\n"
	        "  POST /v0/jobs                start a job; GET /v0/jobs, GET /v0/jobs/ID,\n"
	        "                               GET /v0/jobs/ID/output?stream=stdout&since=N,\n"
	        "                               DELETE /v0/jobs/ID\n"
	        "  GET /v0/profiles, /v0/policy, /v0/approvals; POST /v0/approvals/ID\n");
}

static char *read_pem(const char *path, const char *what)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		log_fatal("cannot read the TLS %s %s: %s; run 'make run' or certs/mkcerts to create it", what, path,
		          strerror(errno));
	char *buf = calloc(1, PEM_MAX + 1);
	ssize_t n = buf ? read(fd, buf, PEM_MAX) : -1;
	close(fd);
	if (n <= 0 || n == PEM_MAX)
		log_fatal("the TLS %s %s is empty, unreadable or larger than %d bytes", what, path, PEM_MAX);
	return buf;
}

/* Fail closed on TLS material that is not what it claims to be: GnuTLS
 * would otherwise start with an empty trust list or no usable key. */
static void check_tls(const char *pem_ca, const char *pem_cert, const char *pem_key, const struct config *cfg)
{
	BIO *b = BIO_new_mem_buf(pem_ca, -1);
	X509 *ca = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	if (!ca)
		log_fatal("tls.ca %s holds no PEM certificate; point it at the CA's ca.pem", cfg->tls_ca);
	b = BIO_new_mem_buf(pem_cert, -1);
	X509 *cert = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	if (!cert)
		log_fatal("tls.cert %s holds no PEM certificate; point it at the server's server.pem", cfg->tls_cert);
	b = BIO_new_mem_buf(pem_key, -1);
	EVP_PKEY *key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	if (!key)
		log_fatal("tls.key %s holds no PEM private key (or it is encrypted); point it at server.key",
		          cfg->tls_key);
	if (X509_check_private_key(cert, key) != 1)
		log_fatal("tls.key %s does not belong to tls.cert %s", cfg->tls_key, cfg->tls_cert);
	EVP_PKEY *cakey = X509_get0_pubkey(ca);
	if (!cakey || X509_verify(cert, cakey) != 1)
		log_fatal("tls.cert %s is not signed by tls.ca %s", cfg->tls_cert, cfg->tls_ca);
	EVP_PKEY_free(key);
	X509_free(cert);
	X509_free(ca);
}

/* A socket handed over by systemd (sharnessd.socket), or our own. */
static int open_listener(const struct config *cfg)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	if (pid && fds && atoi(pid) == getpid() && atoi(fds) == 1) {
		fcntl(3, F_SETFD, FD_CLOEXEC);
		return 3;
	}
	if (!cfg->listen_any && !config_host_is_loopback(cfg->listen_host))
		log_fatal("listen address %s is not loopback; set \"listen_non_loopback\": true in the config to allow it",
		          cfg->listen_host);
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, cfg->listen_host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)cfg->listen_port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, cfg->listen_host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)cfg->listen_port);
		sl = sizeof(*s6);
	} else {
		log_fatal("listen address '%s' is not a numeric IPv4 or IPv6 address", cfg->listen_host);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 128) < 0)
		log_fatal("cannot listen on %s:%u: %s", cfg->listen_host, cfg->listen_port, strerror(errno));
	return fd;
}

/* The launcher's pid once its cgroups exist: from then on every exit of
 * the launcher removes them, a refusal at start (log_fatal exits) as much
 * as a stop, so that a daemon that would not start leaves nothing behind. */
static pid_t launcher_pid;

static void remove_cgroups_at_exit(void)
{
	char err[512];

	if (getpid() != launcher_pid) /* a forked child's exit(): not its to undo */
		return;
	runcg_cleanup_stale(err, sizeof(err));
	runcg_remove_parent();
}

/* Leave workspace i's shared git directory out of the runs' view (the
 * actor then refuses that tree's writes), saying why. */
static void leave_git_dir_out(struct config *cfg, size_t i, const char *why)
{
	log_warn("%s", why);
	free(cfg->git_dirs[i]);
	cfg->git_dirs[i] = NULL;
}

/* Fail closed (SPEC §6): every lock must work on this kernel. */
static void self_check(const struct config *cfg, struct policy_facts *facts, struct sock_fprog *filter)
{
	if (doctor_ptrace_scope() > 1)
		log_fatal("kernel.yama.ptrace_scope is %d: a run's supervisor, which runs as the run's uid, could not "
		          "read its run's calls; set it to 1 (sysctl kernel.yama.ptrace_scope=1; 3 needs a reboot)",
		          doctor_ptrace_scope());
	char err[1024], parent[64];
	const char *core = doctor_core_socket(err, sizeof(err));
	if (core)
		log_warn("%s (now %s)", core, err);
	/* Every ABI from 1: landlock.c's table names the lock that covers each
	 * newer right; the refusal is worded from this system's facts. */
	char why[1024];
	facts->landlock_min_abi = (int)cfg->landlock_min_abi;
	facts->landlock_abi = landlock_check(facts->landlock_min_abi, why, sizeof(why));
	if (facts->landlock_abi < 0)
		log_fatal("%s", why);
	if (seccomp_build_sandbox(filter, err, sizeof(err)) < 0)
		log_fatal("seccomp is not usable: %s", err);
	runcg_parent_name(parent, sizeof(parent), cfg->uid_first);
	if (runcg_init_named(parent, false, err, sizeof(err)) < 0)
		log_fatal("cgroups are not usable: %s", err);
	launcher_pid = getpid();
	atexit(remove_cgroups_at_exit);
	facts->cgroup_version = runcg_version();
	facts->memory_controller = runcg_has_memory();
	/* The namespaces of a run, for real: a child that must be pid 1. */
	pid_t pid = (pid_t)syscall(SYS_clone, NS_SANDBOX_FLAGS | CLONE_NEWCGROUP | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 1);
	int ws = 0;
	if (pid < 0 || waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		log_fatal("the kernel refused the run namespaces (pid, mount, ipc, uts, net, cgroup): %s",
		          strerror(pid < 0 ? errno : EPERM));
	int u = ns_idmap_userns(0, 0, 65534);
	if (u < 0)
		log_fatal("user namespaces for idmapped workspaces are not available: %s", strerror(errno));
	close(u);
}

/* A root login shell on a systemd machine sits in a session scope that
 * systemd has not delegated and that holds other processes: no controller
 * can be enabled below it.  Ask systemd for a transient scope of our own
 * with Delegate=yes and run again inside it (systemd-run --scope moves
 * itself into the scope, then execs us: same pid, same terminal).  The
 * environment variable stops a loop when systemd would not delegate. */
static noreturn void restart_in_scope(const struct config *cfg, char **argv)
{
	char unit[96], exe[4096];
	if (getenv("SHARNESSD_IN_SCOPE"))
		log_fatal("systemd did not delegate the scope it started for us; run sharnessd from its unit "
		          "(systemctl start sharnessd) instead");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		log_fatal("cannot find our own executable: %s", strerror(errno));
	exe[n] = '\0';
	snprintf(unit, sizeof(unit), "--unit=sharnessd-%u-%d", cfg->uid_first, (int)getpid());
	int argc = 0;
	while (argv[argc])
		argc++;
	char **args = calloc((size_t)argc + 8, sizeof(*args));
	if (!args)
		log_fatal("out of memory");
	int i = 0;
	args[i++] = "systemd-run";
	args[i++] = "--scope";
	args[i++] = "--quiet";
	args[i++] = "--collect";
	args[i++] = "-p";
	args[i++] = "Delegate=yes";
	args[i++] = unit;
	args[i++] = exe;
	for (int j = 1; j < argc; j++)
		args[i++] = argv[j];
	setenv("SHARNESSD_IN_SCOPE", "1", 1);
	log_info("this shell's cgroup is not delegated: starting again in the transient scope %s.scope", unit + 7);
	execvp("systemd-run", args);
	log_fatal("cannot run systemd-run for a delegated cgroup scope: %s; start sharnessd from its unit instead",
	          strerror(errno));
}

static void notify_systemd(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, state, strlen(state), 0, (struct sockaddr *)&sa,
	       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path)));
	close(fd);
}

/*
 * Drop the launcher's resident pages that hold only zeros, once, before it
 * forks its first supervisor.  Every fork copies the page table entries of
 * every present anonymous page, and every exit frees them: three times per
 * run (the supervisor, the sandbox init, the actor).  Half of those pages
 * are zeros: libcgroup's mount table (cgroup_init clears ~800 KB of it for
 * the dozen controllers it fills), freed heap.  Only private anonymous
 * mappings (no file behind them, [heap]): after MADV_DONTNEED such a page
 * reads back as zeros (madvise(2)), so the program sees no change.  Single-
 * threaded here: nothing writes between the check and the drop.
 */
static void drop_zero_pages(void)
{
#ifdef __SANITIZE_ADDRESS__
	/* ASan's shadow and allocator regions are anonymous mappings too, not
	 * the program's to read (reading them faulted, make asan-test). */
	return;
#endif
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char vec[256];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[5], path[PATH_MAX] = "";
		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %4095s", &lo, &hi, perm, path) < 3 ||
		    strcmp(perm, "rw-p") != 0 || (path[0] && strcmp(path, "[heap]") != 0))
			continue;
		for (unsigned long a = lo; a < hi; a += 256 * (unsigned long)pg) {
			size_t len = hi - a < 256 * (unsigned long)pg ? hi - a : 256 * (size_t)pg;
			if (mincore((void *)a, len, vec) < 0)
				break;
			for (size_t i = 0; i < len / (size_t)pg; i++) {
				const unsigned long *w = (const unsigned long *)(a + i * (size_t)pg);
				size_t k = 0;
				while (vec[i] & 1 && k < (size_t)pg / sizeof(*w) && w[k] == 0)
					k++;
				if (k == (size_t)pg / sizeof(*w))
					(void)madvise((void *)w, (size_t)pg, MADV_DONTNEED);
			}
		}
	}
	if (f)
		fclose(f);
}

/* Sandboxes built ahead wait at the lowest priority (launcher.h).  Setting
 * one back takes CAP_SYS_NICE, or a nice limit (RLIMIT_NICE, "20 - nice",
 * setrlimit(2)) that reaches our own niceness: the supervisor uses it after
 * it dropped to the run's uid, on the run's init and actor.  The limit is
 * set to exactly our niceness, so that no run, which inherits it, can ever
 * be more urgent than the daemon. */
static bool can_set_back(int nice)
{
	struct rlimit rl = {.rlim_cur = (rlim_t)(20 - nice), .rlim_max = (rlim_t)(20 - nice)};
	if (setrlimit(RLIMIT_NICE, &rl) == 0)
		return true;
	struct __user_cap_header_struct ch = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct cd[2] = {0};
	return syscall(SYS_capget, &ch, cd) == 0 && (cd[CAP_SYS_NICE / 32].effective >> (CAP_SYS_NICE % 32) & 1);
}

/* sharnessd --filter: the filter lives in sharnessd-front (root's image maps
 * no Vectorscan), so run that, as whoever asked, with the same arguments. */
static int filter_main(char **argv)
{
	char path[PATH_MAX], err[512];
	int fd = frontexec_open("sharnessd-front", path, sizeof(path), err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "sharnessd: %s\n", err);
		return 1;
	}
	argv[0] = "sharnessd-front";
	extern char **environ;
	syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
	fprintf(stderr, "sharnessd: cannot run %s: %s\n", path, strerror(errno));
	return 1;
}

static int check_config_only(const struct config *cfg, const struct profile_set *profiles)
{
	char err[256], hash[72];
	if (uidpool_check_range(cfg->uid_first, cfg->uid_count, err, sizeof(err)) < 0) {
		fprintf(stderr, "sharnessd: %s\n", err);
		return 1;
	}
	/* Read the secrets as the front would: a bad secret is refused here. */
	size_t keys = 0;
	if (scrub_vault_check_files(cfg->secrets_file, NULL, &keys, err, sizeof(err)) < 0) {
		fprintf(stderr, "sharnessd: %s\n", err);
		return 1;
	}
	struct policy_facts facts = {
	    .landlock_abi = 0, .landlock_min_abi = (int)cfg->landlock_min_abi, .cgroup_version = "unchecked"};
	char *policy = policy_build(cfg, profiles, keys, &facts, hash);
	free(policy);
	printf("configuration OK: %s\n", cfg->source);
	for (size_t i = 0; i < profiles->n; i++)
		printf("profile %-12s %s\n", profiles->v[i].name, profiles->v[i].policy_hash);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"check-config", no_argument, NULL, 'k'},
		{"doctor", no_argument, NULL, 'D'},
		{"verbose", no_argument, NULL, 'v'},      {"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
	const char *config_path = NULL;
	int check = 0, c;
	char err[512];

	if (argc > 1 && strcmp(argv[1], "--filter") == 0)
		return filter_main(argv);
	while ((c = getopt_long(argc, argv, "c:kvVh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'k':
			check = 1;
			break;
		case 'D':
			check = 2;
			break;
		case 'v':
			log_set_verbose(1);
			break;
		case 'V':
			printf("sharnessd %s\n", SHARNESS_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	if (check == 2)
		return doctor_main(config_path);
	struct config cfg;
	struct profile_set profiles = {0};
	if ((config_path ? config_load(config_path, &cfg, err, sizeof(err)) : config_defaults(&cfg, err, sizeof(err))) < 0)
		log_fatal("%s", err);
	if (profile_set_load(cfg.profiles_dir, &profiles, err, sizeof(err)) < 0)
		log_fatal("%s", err);
	gitdirs_find(&cfg);
	if (keepout_check(&cfg, err, sizeof(err)) < 0 || /* our own secrets, out of the runs' reach */
	    keepout_profiles(&cfg, &profiles, err, sizeof(err)) < 0)
		log_fatal("%s", err);
	for (size_t i = 0; i < cfg.n_workspaces; i++)
		if (keepout_git_dir(&cfg, &profiles, i, err, sizeof(err)) < 0)
			leave_git_dir_out(&cfg, i, err);
	if (cfg.proxy_listen) /* still accepted, so that a configuration of 0.1 loads */
		log_warn("proxy.listen (%s) has no effect and can be removed: the egress proxy listens on "
			 "127.0.0.1:3128 inside each proxy run's own network namespace",
			 cfg.proxy_listen);
	if (check)
		return check_config_only(&cfg, &profiles);

	/* Mount points and state files get the modes we ask for, whatever
	 * umask the service manager or shell gave us. */
	umask(022);
	if (geteuid() != 0)
		log_fatal("sharnessd must start as root: it keeps a small root launcher for the sandboxes and drops privileges for everything else");
	log_set_prefix("launcher");
	if (uidpool_check_range(cfg.uid_first, cfg.uid_count, err, sizeof(err)) < 0)
		log_fatal("%s", err);
	if (runcg_wants_scope())
		restart_in_scope(&cfg, argv);
	if (instance_claim(cfg.state_dir, cfg.uid_first, cfg.uid_count, err, sizeof(err)) < 0)
		log_fatal("%s", err);

	struct launcher l = {.cfg = &cfg, .profiles = &profiles};
	struct policy_facts facts;
	self_check(&cfg, &facts, &l.seccomp);

	/* Crash recovery: nothing a killed predecessor of this state_dir left
	 * may live on, and nothing else is touched: its run cgroups are those
	 * below our own runs directory and below the one it recorded (a
	 * transient scope of an earlier start). */
	char runs_dir[4096], previous[4096];
	int removed = runcg_cleanup_stale(err, sizeof(err)), more = 0;
	if (removed < 0)
		log_fatal("cannot remove stale run cgroups: %s", err);
	if (instance_previous_cgroup(cfg.state_dir, previous, sizeof(previous)) == 1 &&
	    (more = runcg_cleanup_previous(previous, err, sizeof(err))) < 0)
		log_fatal("%s", err);
	if (removed + more > 0)
		log_info("recovered from a previous run: removed %d run cgroup(s) and killed what they held", removed + more);
	/* The record matters where the runs directory moves between starts (a
	 * transient scope per start); elsewhere it is the same every time and
	 * a full state_dir only costs a warning. */
	if (runcg_runs_dir(runs_dir, sizeof(runs_dir)) < 0 || instance_record_cgroup(cfg.state_dir, runs_dir) < 0) {
		if (getenv("SHARNESSD_IN_SCOPE"))
			log_fatal("cannot record the run cgroups in %s/cgroup: %s", cfg.state_dir, strerror(errno));
		log_warn("cannot record the run cgroups in %s/cgroup: %s", cfg.state_dir, strerror(errno));
	}

	l.uids = uidpool_new(cfg.uid_first + 1, cfg.uid_count - 1, err, sizeof(err));
	l.front_uid = cfg.uid_first; /* frontexec_spawn's */
	if (!l.uids)
		log_fatal("%s", err);
	/* Each workspace as it is now: every run's must be that directory
	 * (root/supervise.c, open_workspace), not whatever its path leads to
	 * then.  Held open for good, so that its inode number is never
	 * another directory's. */
	for (size_t i = 0; i < cfg.n_workspaces; i++) {
		int fd = mount_open_workspace(cfg.workspaces[i], NULL);
		if (fd < 0 || fstat(fd, &l.workspace_st[i]) < 0)
			log_fatal("cannot open the workspace %s without a symlink on the way: %s",
				  cfg.workspaces[i], strerror(errno));
		if (!cfg.git_dirs[i])
			continue;
		/* Root binds it read-only into each run's view, while it is this
		 * directory (root/mount.c); held open like the workspace.  What
		 * is opened must be the directory gitdirs_find checked;
		 * if not, it is left out (the actor then refuses the tree's
		 * writes). */
		fd = mount_open_workspace(cfg.git_dirs[i], NULL);
		if (fd < 0 || fstat(fd, &l.git_dir_st[i]) < 0 || l.git_dir_st[i].st_dev != cfg.git_dirs_st[i].st_dev ||
		    l.git_dir_st[i].st_ino != cfg.git_dirs_st[i].st_ino) {
			snprintf(err, sizeof(err),
				 "workspace %s: its shared git directory %s changed while sharnessd started; runs "
				 "will not see it (writes there are refused): restart sharnessd",
				 cfg.workspaces[i], cfg.git_dirs[i]);
			leave_git_dir_out(&cfg, i, err);
			if (fd >= 0)
				close(fd);
			continue;
		}
		log_info("workspace %s: a linked worktree or a submodule; runs see its shared git "
			 "directory %s, read-only", cfg.workspaces[i], cfg.git_dirs[i]);
	}
	snprintf(l.newroot, sizeof(l.newroot), "%s/root", cfg.state_dir);
	if (mkdir(l.newroot, 0700) < 0 && errno != EEXIST)
		log_fatal("cannot create %s: %s", l.newroot, strerror(errno));

	char front_path[PATH_MAX];
	int front_exe = frontexec_open("sharnessd-front", front_path, sizeof(front_path), err, sizeof(err));
	if (front_exe < 0)
		log_fatal("%s", err);
	/* A run's file actor is exec'd from this descriptor, by a process that
	 * is the run already (root/actor.c). */
	char actor_path[PATH_MAX];
	l.actor_exe = frontexec_open("sharness-actor", actor_path, sizeof(actor_path), err, sizeof(err));
	if (l.actor_exe < 0)
		log_fatal("%s", err);
	char *tls_ca = read_pem(cfg.tls_ca, "CA certificate");
	char *tls_cert = read_pem(cfg.tls_cert, "certificate");
	char *tls_key = read_pem(cfg.tls_key, "private key");
	check_tls(tls_ca, tls_cert, tls_key, &cfg);
	/* The front gets the key as a sealed memfd of exactly what was checked
	 * here, and the secrets file as a descriptor: it cannot open either. */
	int key_fd = handover_memfd("sharness-tls-key", tls_key, strlen(tls_key));
	explicit_bzero(tls_key, strlen(tls_key));
	free(tls_key);
	if (key_fd < 0)
		log_fatal("cannot hand the TLS key to the front: %s", strerror(errno));
	/* Root only checks and counts the secrets: every supervisor and sandbox
	 * init is forked from it and must not carry a copy.  The front builds
	 * the filter itself, after its exec. */
	struct scrub_sources src;
	size_t vault_keys = 0;
	if (scrub_sources_open(&src, cfg.secrets_file, NULL, err, sizeof(err)) < 0)
		log_fatal("%s", err);
	src.key_fd = key_fd;
	src.key_name = cfg.tls_key;
	if (scrub_vault_check(&src, &vault_keys, err, sizeof(err)) < 0)
		log_fatal("%s", err);
	char policy_hash[72];
	struct handover h = {.uid = cfg.uid_first, .launcher_pid = getpid(), .verbose = log_is_verbose(),
	                     .vault_keys = vault_keys, .tls_ca = tls_ca, .tls_cert = tls_cert,
	                     .policy_json = policy_build(&cfg, &profiles, vault_keys, &facts, policy_hash),
	                     .profiles_json = policy_profiles(&profiles), .policy_hash = policy_hash};
	int doc_fd = h.policy_json && h.profiles_json ? handover_write(&h, &cfg, &profiles) : -1;
	if (doc_fd < 0)
		log_fatal("cannot write the front's handover: %s", strerror(errno));
	int audit_fd = audit_open(cfg.audit_log);
	if (audit_fd < 0)
		log_fatal("cannot open the audit log %s: %s", cfg.audit_log, strerror(errno));
	int listen_fd = open_listener(&cfg);

	/* Signals are read synchronously (signalfd, sigwait) in both halves. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	int ctl[2], ready[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		log_fatal("socketpair: %s", strerror(errno));
	struct frontexec_fds ffds = {.ctl = ctl[1], .ready = ready[1], .listen = listen_fd, .audit = audit_fd,
	                             .doc = doc_fd, .tls_key = key_fd, .secrets = src.secrets_fd};
	pid_t front = frontexec_spawn(front_exe, &ffds, cfg.uid_first);
	if (front < 0)
		log_fatal("fork: %s", strerror(errno));
	close(ctl[1]);
	close(ready[1]);
	close(listen_fd);
	close(audit_fd);
	close(doc_fd);
	close(front_exe);
	scrub_sources_close(&src); /* the key memfd and the secrets file: the front's alone now */

	struct pollfd p = {.fd = ready[0], .events = POLLIN};
	char one;
	if (poll(&p, 1, 30000) != 1 || read(ready[0], &one, 1) != 1) {
		kill(front, SIGKILL);
		int ws = 0;
		if (waitpid(front, &ws, 0) == front && WIFEXITED(ws) && WEXITSTATUS(ws) >= 126)
			log_fatal("the front (%s) could not be started as uid %u: %s", front_path, cfg.uid_first,
			          WEXITSTATUS(ws) == 127 ? "the exec failed (is it executable by that uid?)"
			                                 : "dropping to its uid failed");
		log_fatal("the front did not start; see the lines above");
	}
	close(ready[0]);
	free(tls_ca);
	free(tls_cert);
	free(h.policy_json);
	free(h.profiles_json);
	log_info("sharnessd %s listening on https://%s:%u (profiles: %zu, policy %s)", SHARNESS_VERSION,
	         cfg.listen_host, cfg.listen_port, profiles.n, policy_hash);
	if (!doctor_can_connect())
		log_warn("CAP_SYS_PTRACE or CAP_SYS_CHROOT is missing: every connect, unix bind and write of a "
		         "run (the proxy's too) will fail; start sharnessd with both (the unit of this release grants them)");
	errno = 0;
	l.nice = getpriority(PRIO_PROCESS, 0);
	l.nice = errno ? 0 : l.nice;
	l.ahead_low = can_set_back(l.nice);
	if (!l.ahead_low && cfg.prewarm)
		log_info("sandboxes built ahead keep the daemon's priority: setting them back needs CAP_SYS_NICE or "
		         "a nice limit (LimitNICE=+%d in the unit)", l.nice);
	notify_systemd("READY=1");
	drop_zero_pages();
	int code = launcher_serve(&l, ctl[0], front);
	log_info("stopped");
	return code; /* remove_cgroups_at_exit: the run cgroups, then ours */
}
