/*
 * lockdown.c - see lockdown.h.
 *
 * What the front needs of the system once it serves, and so all it keeps:
 *   files    read-only: /etc (the resolver's hosts, resolv.conf, nsswitch.conf
 *            and gai.conf, which may be replaced while we run, so the
 *            directory and not the files), the resolver stub's directory
 *            under /run, and the libraries NSS modules are loaded from; no
 *            write, exec, or device right anywhere.  Its own descriptors
 *            (sockets, the audit log, memfds) need no Landlock right.
 *   network  no TCP bind (it binds nothing: the listener comes from root);
 *            connect stays open, because the egress proxy dials the hosts
 *            a profile allows (and the allowlist, not the kernel, decides).
 *   scopes   no abstract unix socket or signal outside its own domain.
 *   syscalls an allowlist (below): threads but no new process and no exec,
 *            sockets of three families.  Anything else is trapped: the SIGSYS
 *            handler writes which call it was and the front exits, so the
 *            launcher stops the daemon (fail closed) with the reason logged.
 */
#include "lockdown.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <seccomp.h>

#include "landlock.h"

/* Read-only paths; a missing one is left out (not every system has them). */
static const char *const read_paths[] = {
	"/etc", "/run/systemd/resolve", "/usr/lib", "/lib", "/lib64", "/usr/lib64", "/usr/share/zoneinfo",
};

/* clang-format off */
static const char *const allowed[] = {
	/* memory and threads (libmicrohttpd, GnuTLS, Vectorscan scratch) */
	"brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "futex", "set_robust_list",
	"get_robust_list", "rseq", "exit", "exit_group", "gettid", "getpid",
	"getppid", "sched_yield", "sched_getaffinity", "getcpu", "membarrier", "tgkill",
	/* clone: threads only (below); clone3's flags are in a struct BPF cannot read */
	"restart_syscall", "sysinfo", "getrlimit", "prlimit64", "getuid", "geteuid", "getgid",
	"getegid", "uname",
	/* signals (signalfd, the blocked set, abort) */
	"rt_sigprocmask", "rt_sigaction", "rt_sigreturn", "sigaltstack", "signalfd4",
	/* descriptors */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "close", "dup", "dup2", "dup3",
	"fcntl", "lseek", "fstat", "newfstatat", "statx", "pipe2", "eventfd2", "memfd_create",
	"ftruncate", "fsync", "fdatasync", "getdents64",
	/* opening: Landlock decides what (read-only, above) */
	"openat", "open", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
	/* waiting */
	"poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "nanosleep", "clock_nanosleep", "clock_gettime",
	"clock_getres", "gettimeofday", "time",
	/* the network: clients, the control socket, the proxy's dials and DNS */
	/* socket: unix, IPv4 and IPv6 only (below) */
	"connect", "accept", "accept4", "getsockname", "getpeername", "setsockopt",
	"getsockopt", "shutdown", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg",
	"recvmmsg", "socketpair",
	"getrandom",
	NULL,
};
/* clang-format on */

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	char msg[160] = "sharnessd[front] made syscall "; /* + 10 digits + tail: fits */
	size_t n = strlen(msg);
	char digits[12];
	int nd = 0;
	unsigned v = (unsigned)si->si_syscall;
	do
		digits[nd++] = (char)('0' + v % 10);
	while ((v /= 10) && nd < (int)sizeof(digits));
	while (nd > 0)
		msg[n++] = digits[--nd];
	static const char tail[] = ", which its seccomp allowlist does not allow (front/lockdown.c): stopping\n";
	memcpy(msg + n, tail, sizeof(tail) - 1);
	/* One write(2), no stdio: the line stays whole and the handler safe. */
	(void)!write(STDERR_FILENO, msg, n + sizeof(tail) - 1);
	_exit(70);
}

static int landlock_front(char *err, size_t errlen)
{
	struct landlock_path paths[sizeof(read_paths) / sizeof(read_paths[0])];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(read_paths) / sizeof(read_paths[0]); i++)
		if (access(read_paths[i], F_OK) == 0)
			paths[n++] = (struct landlock_path){.path = read_paths[i], .grants = LANDLOCK_GRANT_READ};
	if (landlock_apply_connect_any(paths, n) < 0) {
		snprintf(err, errlen, "Landlock: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int seccomp_front(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int rc = ctx ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && allowed[i]; i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);
		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	/* Threads, never a new process: clone only with CLONE_THREAD, and
	 * clone3 answers ENOSYS, so glibc falls back to clone. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
		                      SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* Sockets of the families it uses; others (getaddrinfo tries netlink)
	 * get EAFNOSUPPORT, which glibc takes in its stride. */
	static const int families[] = {AF_UNIX, AF_INET, AF_INET6};
	for (size_t i = 0; rc == 0 && i < sizeof(families) / sizeof(families[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, families[i]));
	for (int fam = 0; rc == 0 && fam < AF_INET6; fam++)
		if (fam != AF_UNIX && fam != AF_INET)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
			                      SCMP_A0(SCMP_CMP_EQ, fam));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
		                      SCMP_A0(SCMP_CMP_GT, AF_INET6));
	/* ioctl: only what glibc and the sockets ask (isatty, FIONREAD, FIONBIO). */
	static const unsigned long ioctls[] = {TCGETS, FIONREAD, FIONBIO};
	for (size_t i = 0; rc == 0 && i < sizeof(ioctls) / sizeof(ioctls[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, ioctls[i]));
	/* prctl: thread names only (everything else was set before this). */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
#ifdef __SANITIZE_ADDRESS__
	/* The ASan runtime asks at exit whether we are dumpable: without this
	 * the front of `make asan` ended by SIGSYS at every shutdown. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_DUMPABLE));
#endif
	/* Every thread that exists already (none should) gets it too. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

int lockdown_front(char *err, size_t errlen)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		snprintf(err, errlen, "sigaction(SIGSYS): %s", strerror(errno));
		return -1;
	}
	/* Both locks require no_new_privs; root set it before the exec. */
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "no_new_privs is not set");
		return -1;
	}
	return landlock_front(err, errlen) < 0 ? -1 : seccomp_front(err, errlen);
}
