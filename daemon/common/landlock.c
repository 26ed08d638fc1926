/*
 * landlock.c - the run's Landlock ruleset (SPEC §6, research/sandbox.md §A.6)
 * through the raw syscalls: every access right the running kernel's ABI knows
 * is handled, so anything not granted by a path rule is denied.
 *
 * Trust: the paths come from the launcher's own profile table (validated at
 * load), never from the network.  Runs in the sandbox child after the mount
 * namespace is built and before seccomp and execve; landlock_apply() only
 * makes syscalls (no allocation), so it is safe after fork in a threaded
 * parent.  landlock_check() runs once at start, in the launcher.
 *
 * Fail closed: no Landlock (ENOSYS: not built; EOPNOTSUPP: disabled at boot)
 * is an error, never a silent skip.  A path that cannot be opened (ENOENT,
 * ...) is also an error, so the caller decides whether a missing path is fine.
 *
 * Every ABI from 1 is accepted: the table of rights below says, for each
 * right a newer ABI brought, which other lock of the sandbox holds it on an
 * older kernel.  landlock_check() is the start-up gate (landlock_min_abi) and
 * words its refusal from this system's facts (uname, /sys/kernel/security/lsm).
 *
 * The distro's <linux/landlock.h> (Linux 6.1) stops at ABI 2, so the newer
 * constants and the grown structs are spelled out here with their kernel
 * values (include/uapi/linux/landlock.h).  The kernel accepts a larger
 * ruleset_attr as long as the bytes it does not know are zero, so one struct
 * serves every ABI.  Rights of ABIs newer than this file (ABI 9's RESOLVE_UNIX)
 * are not handled; the mount namespace hides /run and friends for that reason.
 */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "errmsg.h"
#include "procstatus.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* enum landlock_rule_type: LANDLOCK_RULE_NET_PORT is 2 (ABI 4); the 6.1
 * header's enum lacks it and an enum cannot be tested with #ifdef. */
#define RULE_PATH_BENEATH 1
#define RULE_NET_PORT 2

/* struct landlock_ruleset_attr as of ABI 6 (handled_access_net: ABI 4,
 * scoped: ABI 6). */
struct ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

/* struct landlock_net_port_attr (ABI 4). */
struct net_port_attr {
	__u64 allowed_access;
	__u64 port;
};

/* Rights that make sense on a file (not a directory); the kernel refuses a
 * path_beneath rule on a file that grants directory rights (EINVAL). */
#define FS_FILE_RIGHTS                                                                   \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                    \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                    \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define GRANT_READ_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define GRANT_EXEC_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE)
#define GRANT_WRITE_RIGHTS                                                               \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                 \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |                 \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                     \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |                   \
	 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM |                   \
	 LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)
#define GRANT_DEV_RIGHTS (LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * The one table of rights (landlock.h).  The other locks named here were
 * checked against the code that sets them up: mount.c (read-only binds,
 * nodev everywhere but the six /dev binds, /dev itself read-only), ns.h
 * (CLONE_NEWNET, CLONE_NEWPID), supervise.c proxy_listener() (the proxy's
 * listener is made inside the run's network namespace), sandbox.c (the init
 * applies Landlock itself before it forks the command; setsid; the uid
 * switch) and seccomp.c (TIOCSTI, TIOCLINUX).  A change there must change
 * the sentence here and docs/landlock.md with it.
 */
/* clang-format off */
#define FS1(n, b) {n, LANDLOCK_KIND_FS, b, 1, NULL}
static const struct landlock_right rights[] = {
	FS1("execute", LANDLOCK_ACCESS_FS_EXECUTE),
	FS1("write_file", LANDLOCK_ACCESS_FS_WRITE_FILE),
	FS1("read_file", LANDLOCK_ACCESS_FS_READ_FILE),
	FS1("read_dir", LANDLOCK_ACCESS_FS_READ_DIR),
	FS1("remove_dir", LANDLOCK_ACCESS_FS_REMOVE_DIR),
	FS1("remove_file", LANDLOCK_ACCESS_FS_REMOVE_FILE),
	FS1("make_char", LANDLOCK_ACCESS_FS_MAKE_CHAR),
	FS1("make_dir", LANDLOCK_ACCESS_FS_MAKE_DIR),
	FS1("make_reg", LANDLOCK_ACCESS_FS_MAKE_REG),
	FS1("make_sock", LANDLOCK_ACCESS_FS_MAKE_SOCK),
	FS1("make_fifo", LANDLOCK_ACCESS_FS_MAKE_FIFO),
	FS1("make_block", LANDLOCK_ACCESS_FS_MAKE_BLOCK),
	FS1("make_sym", LANDLOCK_ACCESS_FS_MAKE_SYM),
	/* ABI 1 handles no REFER: the kernel then refuses every reparenting
	 * (Documentation/userspace-api/landlock.rst, "File renaming and
	 * linking"), which is stricter, not weaker. */
	{"refer", LANDLOCK_KIND_FS, LANDLOCK_ACCESS_FS_REFER, 2,
	 "Landlock ABI 1 itself, more strictly: a rename or link that changes the parent directory "
	 "always fails with EXDEV (mv falls back to copy and delete)"},
	/* Without TRUNCATE, truncate(2) and O_TRUNC need only DAC and a
	 * writable mount; every path without a write grant is a read-only
	 * mount (mount.c ATTR_RO_*, the root remounted read-only). */
	{"truncate", LANDLOCK_KIND_FS, LANDLOCK_ACCESS_FS_TRUNCATE, 3,
	 "read-only mounts: every path without a Landlock write grant (the root, /usr and the other "
	 "system dirs, /etc, /opt, /home/sandbox, a read-only workspace, .git, read_paths, exec_paths) is "
	 "mounted read-only, so truncate(2) and O_TRUNC fail there with EROFS"},
	{"bind_tcp", LANDLOCK_KIND_NET, LANDLOCK_ACCESS_NET_BIND_TCP, 4,
	 "the run's supervisor, which makes every bind for the run and refuses a TCP one (EACCES), and "
	 "the run's network namespace: it holds only lo"},
	{"connect_tcp", LANDLOCK_KIND_NET, LANDLOCK_ACCESS_NET_CONNECT_TCP, 4,
	 "the run's network namespace: it holds only lo, so a connect reaches the run's own listeners "
	 "and, for proxy profiles, the egress proxy's listener on 127.0.0.1:3128, which the daemon "
	 "opens inside that namespace; beyond it only the proxy's allowlist lets anything out"},
	{"ioctl_dev", LANDLOCK_KIND_FS, LANDLOCK_ACCESS_FS_IOCTL_DEV, 5,
	 "the mount namespace's /dev: the only device nodes in the view are /dev/null, zero, full, "
	 "random, urandom and tty (every other mount is nodev, /dev is read-only, no CAP_MKNOD), the "
	 "command has no controlling terminal (setsid), and seccomp denies ioctl TIOCSTI and "
	 "TIOCLINUX; the /dev grant allows ioctl on those six on every ABI"},
	{"abstract_unix_socket", LANDLOCK_KIND_SCOPE, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, 6,
	 "the run's network namespace: abstract unix socket names are per network namespace, and "
	 "only the run's processes are in it"},
	{"signal", LANDLOCK_KIND_SCOPE, LANDLOCK_SCOPE_SIGNAL, 6,
	 "the run's pid namespace: no process outside it has a pid the run can name, and every "
	 "process inside (the sandbox init too) is in the run's Landlock domain; the run's uid is "
	 "its own, so kill(2) would refuse another uid's process even if the run could name one"},
};
#undef FS1
/* clang-format on */

const struct landlock_right *landlock_rights(size_t *n)
{
	*n = sizeof(rights) / sizeof(rights[0]);
	return rights;
}

const char *landlock_enforced_by(const struct landlock_right *r, int abi)
{
	if (abi >= r->since_abi)
		return "Landlock";
	return r->other_lock ? r->other_lock : "nothing: this kernel has no Landlock";
}

int landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0)
		return -1;
	if (abi == 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return (int)abi;
}

/* The handled mask of one kind: every right of the table this ABI has.
 * ABI 7/8 add audit and TSYNC flags, no new rights. */
static __u64 handled_mask(enum landlock_kind kind, int abi)
{
	__u64 r = 0;

	for (size_t i = 0; i < sizeof(rights) / sizeof(rights[0]); i++)
		if (rights[i].kind == kind && abi >= rights[i].since_abi)
			r |= rights[i].bit;
	return r;
}

/* The first upstream release with each ABI (the kernel's landlock.rst);
 * distributions may backport, so it is only a hint. */
static const char *first_linux(int abi)
{
	static const char *const v[] = {NULL, "5.13", "5.19", "6.2", "6.7", "6.10", "6.12", "6.15"};

	return abi >= 1 && abi < (int)(sizeof(v) / sizeof(v[0])) ? v[abi] : NULL;
}

int landlock_refusal(int abi, int errnum, int min_abi, const char *release, const char *lsm, int seccomp_mode,
		     char *err, size_t errlen)
{
	int major = 0, minor = 0;
	bool parsed = sscanf(release, "%d.%d", &major, &minor) == 2;
	bool old = parsed && (major < 5 || (major == 5 && minor < 13));
	/* ENOSYS (or any other error) under a seccomp filter may be the
	 * filter's answer, not the kernel's. */
	const char *filtered = seccomp_mode == 2 ? "; sharnessd runs under a seccomp filter (Seccomp: 2 in "
						   "/proc/self/status), which may be what refuses the call: "
						   "allow the landlock_* system calls to it"
						 : "";

	if (abi >= 1) {
		const char *v = first_linux(min_abi);

		if (abi >= min_abi)
			return 0;
		errmsg_set(
		    err, errlen,
		    "Landlock ABI %d on kernel %s is below landlock_min_abi %d; boot a kernel with "
		    "Landlock ABI %d or newer%s%s%s, or lower landlock_min_abi in the configuration to %d",
		    abi, release, min_abi, min_abi, v ? " (upstream Linux " : "", v ? v : "",
		    v ? " and newer)" : "", abi);
		return -1;
	}
	if (errnum == EOPNOTSUPP) {
		if (lsm && lsm[0] && !strstr(lsm, "landlock"))
			errmsg_set(
			    err, errlen,
			    "Landlock is built into kernel %s but not enabled at boot (the active LSMs are "
			    "%s); add it to the lsm= boot parameter, lsm=%s,landlock, and reboot",
			    release, lsm, lsm);
		else if (lsm && lsm[0])
			errmsg_set(
			    err, errlen,
			    "Landlock is listed in /sys/kernel/security/lsm (%s) but kernel %s reports it "
			    "disabled (EOPNOTSUPP); check the kernel's boot parameters",
			    lsm, release);
		else
			errmsg_set(
			    err, errlen,
			    "Landlock is built into kernel %s but not enabled at boot; add landlock to the "
			    "lsm= boot parameter, lsm=<the current list>,landlock, and reboot (the current "
			    "list is in /sys/kernel/security/lsm: mount -t securityfs securityfs "
			    "/sys/kernel/security to read it)",
			    release);
	} else if (errnum == ENOSYS && old) {
		errmsg_set(err, errlen,
			   "Landlock is not available: kernel %s is older than 5.13, the first Linux with "
			   "Landlock; boot a kernel 5.13 or newer built with CONFIG_SECURITY_LANDLOCK=y and "
			   "landlock in its lsm= boot parameter%s",
			   release, filtered);
	} else if (errnum == ENOSYS) {
		errmsg_set(
		    err, errlen,
		    "Landlock is not available: kernel %s %s (landlock_create_ruleset(2): ENOSYS); boot "
		    "a kernel 5.13 or newer built with CONFIG_SECURITY_LANDLOCK=y and landlock in its "
		    "lsm= boot parameter%s",
		    release, parsed ? "was built without it" : "is older than 5.13 or was built without it",
		    filtered);
	} else {
		errmsg_set(err, errlen,
			   "Landlock is not usable on kernel %s: landlock_create_ruleset(2): %s%s", release,
			   strerror(errnum), filtered);
	}
	return -1;
}

/* The Seccomp: field of /proc/self/status (0, 1, 2), or -1. */
static int seccomp_mode(void)
{
	char buf[PROCSTATUS_MAX];
	const char *v = procstatus_read(0, buf, sizeof(buf)) == 0 ? procstatus_find(buf, "Seccomp") : NULL;
	return v && *v >= '0' && *v <= '2' ? *v - '0' : -1;
}

int landlock_check(int min_abi, char *err, size_t errlen)
{
	struct utsname u;
	char lsm[256] = "";
	int abi = landlock_abi(), e = errno;
	const char *release = uname(&u) == 0 ? u.release : "(uname failed)";

	if (abi < 0 && e == EOPNOTSUPP) {
		int fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, lsm, sizeof(lsm) - 1) : -1;

		lsm[n > 0 ? n : 0] = '\0';
		lsm[strcspn(lsm, "\n")] = '\0';
		if (fd >= 0)
			close(fd);
	}
	if (landlock_refusal(abi, e, min_abi, release, lsm[0] ? lsm : NULL, abi < 0 ? seccomp_mode() : -1,
			     err, errlen) < 0)
		return -1;
	return abi;
}

static __u64 grant_rights(unsigned grants)
{
	__u64 r = 0;

	if (grants & LANDLOCK_GRANT_READ)
		r |= GRANT_READ_RIGHTS;
	if (grants & LANDLOCK_GRANT_EXEC)
		r |= GRANT_EXEC_RIGHTS;
	if (grants & LANDLOCK_GRANT_WRITE)
		r |= GRANT_WRITE_RIGHTS;
	if (grants & LANDLOCK_GRANT_DEV)
		r |= GRANT_DEV_RIGHTS;
	if (grants & LANDLOCK_GRANT_LIST)
		r |= LANDLOCK_ACCESS_FS_READ_DIR;
	return r;
}

static int add_path(int ruleset, const struct landlock_path *p, __u64 handled)
{
	struct landlock_path_beneath_attr attr = {0};
	struct stat st;
	int fd, saved;

	/* O_PATH: Landlock needs only the inode; symlinks are followed, so the
	 * rule lands on what the name resolves to inside our mount namespace. */
	fd = open(p->path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errmsg_op_failed("open", p->path);
	if (fstat(fd, &st) < 0)
		goto err_close;
	attr.allowed_access = grant_rights(p->grants) & handled;
	if (!S_ISDIR(st.st_mode))
		attr.allowed_access &= FS_FILE_RIGHTS;
	attr.parent_fd = fd;
	/* A grant that leaves nothing on this inode (e.g. only READ_DIR on a
	 * file) is no rule at all; the kernel would say ENOMSG. */
	if (attr.allowed_access != 0 &&
	    syscall(__NR_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &attr, 0) < 0)
		goto err_close;
	close(fd);
	return 0;

err_close:
	saved = errno;
	close(fd);
	errno = saved;
	return errmsg_op_failed("landlock_add_rule", p->path);
}

/* tcp_connect_port: 0 none, -1 any (the front: no connect right handled). */
static int apply(const struct landlock_path *paths, size_t n, int tcp_connect_port)
{
	struct ruleset_attr attr = {0};
	int abi, ruleset, saved;

	if (n > 0 && !paths) {
		errno = EINVAL;
		return -1;
	}
	abi = landlock_abi();
	if (abi < 0)
		return -1;
	attr.handled_access_fs = handled_mask(LANDLOCK_KIND_FS, abi);
	/* ABI 4: handling both TCP rights with no bind rule denies every TCP
	 * bind (port 0 included) and every connect but the proxy's port. */
	attr.handled_access_net = handled_mask(LANDLOCK_KIND_NET, abi);
	if (tcp_connect_port < 0)
		attr.handled_access_net &= ~(__u64)LANDLOCK_ACCESS_NET_CONNECT_TCP;
	/* ABI 6: no connecting to abstract unix sockets or signalling
	 * processes outside this domain (the daemon, other runs). */
	attr.scoped = handled_mask(LANDLOCK_KIND_SCOPE, abi);

	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return errmsg_op_failed("landlock_create_ruleset", NULL);
	for (size_t i = 0; i < n; i++) {
		if (!paths[i].path) {
			errno = EINVAL;
			goto err_close;
		}
		if (add_path(ruleset, &paths[i], attr.handled_access_fs) < 0)
			goto err_close;
	}
	if (abi >= 4 && tcp_connect_port > 0) {
		struct net_port_attr np = {
			.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
			.port = (__u64)tcp_connect_port,
		};
		if (syscall(__NR_landlock_add_rule, ruleset, RULE_NET_PORT, &np, 0) < 0) {
			errmsg_op_failed("landlock_add_rule", "(tcp connect port)");
			goto err_close;
		}
	}
	/* The kernel requires no_new_privs (or CAP_SYS_ADMIN) here: EPERM
	 * otherwise, which we pass up rather than set NNP behind the caller. */
	if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0) {
		errmsg_op_failed("landlock_restrict_self", NULL);
		goto err_close;
	}
	close(ruleset);
	return 0;

err_close:
	saved = errno;
	close(ruleset);
	errno = saved;
	return -1;
}

int landlock_apply(const struct landlock_path *paths, size_t n, uint16_t tcp_connect_port)
{
	return apply(paths, n, tcp_connect_port);
}

int landlock_apply_connect_any(const struct landlock_path *paths, size_t n)
{
	return apply(paths, n, -1);
}
