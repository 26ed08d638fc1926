/*
 * sandbox_filter.c - the sandbox's seccomp deny list (SPEC §6,
 * research/sandbox.md §B), compiled once at start with libseccomp 2.5.4 and
 * kept as raw BPF so that each run pays one prctl(), not a compile.
 *
 * Trust: the rule tables are constants of this file; nothing here reads input.
 * It runs privileged once at start (it only allocates); loading the filter
 * into each run is root/seccomp.c's (async-signal-safe: one syscall).
 *
 * (The front has an allowlist of its own: front/lockdown.c.)
 *
 * Shape of the filter: default ALLOW, native architecture only, any other
 * architecture (i386 `int 0x80`, x32 `nr | 0x40000000`) kills the process.
 * libseccomp 2.5.4 emits the x32 check itself once BADARCH is KILL_PROCESS and
 * no other arch is added (checked with a BPF dump, research §B rule 2).
 * Denied calls return an errno they do not return naturally, so a probe can
 * tell "filtered" from "failed": EPERM for most, ENOSYS where libc probes and
 * falls back (clone3, the new mount API, io_uring: Flatpak CVE-2021-41133),
 * EAFNOSUPPORT for socket families.
 */
#include "errmsg.h"
#include "sandbox_filter.h"
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
/* libseccomp's <seccomp.h> has the same name as our root/seccomp.h; name
 * it through a directory that only exists under the system include dir. */
#include <linux/../seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
/* Mask for "compare the low 32 bits only" (see add_arg_rules). */
#define LOW32 UINT64_C(0xffffffff)

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/*
 * Unconditional denials.  Each list is an X-macro so that the rules and the
 * names /v0/policy shows cannot drift apart.
 */
#define DENY_EPERM(X)                                                                    \
	/* other processes: inspect, steal fds, move memory */                           \
	X(ptrace) X(process_vm_readv) X(process_vm_writev) X(kcmp) X(pidfd_getfd)        \
	X(process_madvise)                                                               \
	/* the VFS view (Landlock also stops mount/pivot_root, not chroot) */            \
	X(mount) X(umount2) X(pivot_root) X(chroot)                                      \
	/* namespaces: a user ns gives CAP_SYS_ADMIN over a copy of everything */        \
	X(unshare) X(setns)                                                              \
	/* the keyring is not namespaced */                                              \
	X(keyctl) X(add_key) X(request_key)                                              \
	/* kernel attack surface with a long CVE list */                                 \
	X(bpf) X(perf_event_open) X(userfaultfd)                                         \
	/* host control, modules, raw I/O, old 16-bit/ldt paths */                       \
	X(kexec_load) X(kexec_file_load) X(reboot) X(init_module) X(finit_module)        \
	X(delete_module) X(create_module) X(query_module) X(get_kernel_syms) X(iopl)     \
	X(ioperm) X(modify_ldt)                                                          \
	/* host-global or obsolete */                                                    \
	X(acct) X(quotactl) X(quotactl_fd) X(swapon) X(swapoff) X(syslog) X(vhangup)     \
	X(uselib) X(ustat) X(sysfs) X(_sysctl) X(nfsservctl) X(lookup_dcookie)           \
	/* the clock is not namespaced; adjtimex's read-only mode lives in a struct     \
	 * BPF cannot read, so it goes too (clock_gettime still tells the time) */       \
	X(settimeofday) X(clock_settime) X(clock_adjtime) X(adjtimex)                    \
	/* NUMA: cross-process page moves and policy */                                  \
	X(move_pages) X(migrate_pages) X(mbind) X(set_mempolicy) X(get_mempolicy)        \
	X(set_mempolicy_home_node)                                                       \
	/* inode handles walk around mounts (the "Shocker" breakout) */                  \
	X(open_by_handle_at) X(name_to_handle_at)

#define DENY_ENOSYS(X)                                                                   \
	/* flags in a struct BPF cannot read; glibc falls back to clone */               \
	X(clone3)                                                                        \
	/* IORING_OP_SOCKET/CONNECT/OPENAT run around every other filter */              \
	X(io_uring_setup) X(io_uring_enter) X(io_uring_register)                         \
	/* the new mount API */                                                          \
	X(fsopen) X(fsconfig) X(fsmount) X(fspick) X(open_tree) X(move_mount)            \
	X(mount_setattr) X(open_tree_attr)                                               \
	/* Linux AIO: io_submit queues direct I/O that no signal stops, past the       \
	 * disk watch and the timeout, and io_setup takes from fs.aio-nr, one count    \
	 * for the whole host (review s37 lifecycle H1, H2, M1); glibc's POSIX AIO     \
	 * uses threads */                                                               \
	X(io_setup) X(io_submit) X(io_getevents) X(io_pgetevents) X(io_cancel)          \
	X(io_destroy)

#define NAME_STR(s) #s,

static const char *const denied_names[] = {
	DENY_EPERM(NAME_STR) DENY_ENOSYS(NAME_STR)
	"clone(CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET)",
	"personality(other than 0 and 0xffffffff)",
	"execveat(AT_EMPTY_PATH)",
	"ioctl(TIOCSTI)",
	"ioctl(TIOCLINUX)",
	"socket(family other than AF_UNIX, AF_INET, AF_INET6)",
	"socket, socketpair(AF_UNIX, SOCK_DGRAM or SOCK_RAW: EACCES)",
	"connect(made by the supervisor: a unix path only to a listener of the run's own uid, TCP only to the proxy's port)",
	"open, openat(for writing), creat, mkdir, mknod, symlink, link, rename, unlink, rmdir, truncate, chmod families, bind of a unix path(made by the run's actor: no .git created or changed)",
	"bind(other addresses: made by the supervisor, in the run's network namespace)",
	"chmod, fchmod, fchmodat, fchmodat2, creat, open, openat, mknod, mknodat(S_ISUID, S_ISGID; chmod also S_IWOTH: refused by the run's actor)",
	"umask(without S_IWOTH: answered with the unchanged umask)",
	"seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)",
	"setxattr, lsetxattr, fsetxattr, setxattrat, removexattr, lremovexattr, fremovexattr, removexattrat(any name: EOPNOTSUPP)",
	"fallocate(any mode: EOPNOTSUPP)",
	"open, openat, fcntl(F_SETFL)(O_DIRECT: EINVAL)",
	NULL,
};

const char *const *seccomp_denied_names(void)
{
	return denied_names;
}

/* One rule per namespace flag: a masked compare can only say "all these bits
 * are set", and a default-allow filter must catch any one of them. */
static const uint32_t clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

/*
 * Syscalls newer than libseccomp 2.5.4's tables, by native number.  A rule on
 * a bare number works for the native arch (libseccomp passes it through).
 */
static int resolve(const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, name);

	if (nr >= 0)
		return nr;
#if defined(__x86_64__)
	if (strcmp(name, "open_tree_attr") == 0)
		return 467; /* Linux 6.15, arch/x86/entry/syscalls/syscall_64.tbl */
#endif
	return -1;
}

static int add_names(scmp_filter_ctx ctx, const char *const *names, size_t n, int errnum,
                     char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int nr = resolve(names[i]);
		int rc;

		/* Fail closed: a name we cannot resolve is a rule we would not
		 * enforce while /v0/policy claims it. */
		if (nr < 0) {
			errmsg_set(err, errlen, "seccomp: syscall '%s' is unknown to libseccomp on this architecture",
			     names[i]);
			errno = ENOSYS;
			return -1;
		}
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 0);
		if (rc < 0) {
			errmsg_set(err, errlen, "seccomp: cannot add a rule for '%s': %s", names[i], strerror(-rc));
			errno = -rc;
			return -1;
		}
	}
	return 0;
}

/* The socket type without SOCK_NONBLOCK and SOCK_CLOEXEC (linux/net.h). */
#define SOCK_TYPE_MASK 0xf

#define RULE(ctx, act, sys, ...)                                                         \
	do {                                                                             \
		int rc_ = seccomp_rule_add((ctx), (act), SCMP_SYS(sys), __VA_ARGS__);    \
		if (rc_ < 0) {                                                           \
			errmsg_set(err, errlen, "seccomp: cannot add the argument rule for '%s': %s", \
			     #sys, strerror(-rc_));                                      \
			errno = -rc_;                                                    \
			return -1;                                                       \
		}                                                                        \
	} while (0)

/*
 * Rules with argument conditions.  libseccomp 2.5.4 refuses two comparisons
 * on the same argument in one rule (EINVAL), and rules are ORed, so every
 * "deny unless one of these values" is written as a union of single
 * comparisons.  The kernel reads these arguments as int/unsigned int, so a
 * caller may put anything in the high word: an EQ on all 64 bits would let
 * `(1 << 32) | TIOCSTI` slip past (CVE-2019-10063).  SCMP_A*_32 only casts
 * the datum in 2.5.4 (the compare stays 64-bit), so every "equals" is a
 * MASKED_EQ whose mask has a zero high word: libseccomp then checks only the
 * low word.  The socket rule's GT is safe on 64 bits: any high bit makes the
 * value > 10, which denies.
 */
static int add_arg_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	/* clone: the kernel takes lower_32_bits(flags) (kernel/fork.c). */
	for (size_t i = 0; i < sizeof(clone_ns_flags) / sizeof(clone_ns_flags[0]); i++)
		RULE(ctx, SCMP_ACT_ERRNO(EPERM), clone, 1,
		     SCMP_A0_64(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]));

	/* personality: allow 0 (PER_LINUX) and 0xffffffff (query) only.  A
	 * 32-bit value is neither all zeros nor all ones exactly when, for some
	 * bit i, bit i is 1 and bit (i+1) mod 32 is 0; one rule per i. */
	for (unsigned i = 0; i < 32; i++) {
		uint32_t one = UINT32_C(1) << i, next = UINT32_C(1) << ((i + 1) % 32);
		RULE(ctx, SCMP_ACT_ERRNO(EPERM), personality, 1,
		     SCMP_A0_64(SCMP_CMP_MASKED_EQ, one | next, one));
	}

	/* execveat(fd, "", ..., AT_EMPTY_PATH) runs an fd (memfd, O_PATH) with
	 * no path for Landlock or a noexec mount to judge; execve of
	 * /proc/self/fd/N remains and is left to vm.memfd_noexec=2. */
	RULE(ctx, SCMP_ACT_ERRNO(EPERM), execveat, 1,
	     SCMP_A4_64(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));

	/* Terminal input injection (CVE-2017-5226) and console injection
	 * (CVE-2023-28100); the command is 32 bits in the kernel. */
	RULE(ctx, SCMP_ACT_ERRNO(EPERM), ioctl, 1, SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, TIOCSTI));
	RULE(ctx, SCMP_ACT_ERRNO(EPERM), ioctl, 1, SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, TIOCLINUX));

	/* socket: only AF_UNIX (1), AF_INET (2), AF_INET6 (10).  AF_ALG,
	 * AF_VSOCK, AF_PACKET, AF_NETLINK, ... are kernel surface a command
	 * has no need for.  Denied = 0, 3..9, > 10. */
	RULE(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), socket, 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, 0));
	for (uint32_t fam = 3; fam <= 9; fam++)
		RULE(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), socket, 1,
		     SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, fam));
	RULE(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), socket, 1, SCMP_A0_64(SCMP_CMP_GT, 10));

	/* RLIMIT_CORE stays at the 1 byte the init sets (root/sandbox.c): the
	 * one value at which the kernel runs no core_pattern pipe helper
	 * (`|`: systemd-coredump, apport; root, outside the run's cgroup,
	 * reading what the run's crash hands it).  Lowering it to 0 would bring
	 * the helper back; raising it, the hard limit stops already.  Setting
	 * it answers success and changes nothing: GnuPG dies when it cannot
	 * "disable core dumps", and `ulimit -c 0` in a `set -e` script would
	 * too, while a limit of 1 byte disables them already.  A prlimit64
	 * that also reads the old value cannot be answered so (it would read
	 * nothing): EPERM.  Reading stays. */
	RULE(ctx, SCMP_ACT_ERRNO(0), setrlimit, 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, RLIMIT_CORE));
	RULE(ctx, SCMP_ACT_ERRNO(0), prlimit64, 3, SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, RLIMIT_CORE),
	     SCMP_A2_64(SCMP_CMP_NE, 0), SCMP_A3_64(SCMP_CMP_EQ, 0));
	RULE(ctx, SCMP_ACT_ERRNO(EPERM), prlimit64, 3, SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, RLIMIT_CORE),
	     SCMP_A2_64(SCMP_CMP_NE, 0), SCMP_A3_64(SCMP_CMP_NE, 0));

	/* No direct I/O: a write of up to 2 GiB a call goes on after SIGKILL,
	 * past the disk watch (a run left 4 GiB against a 128 MiB limit), and
	 * a reader in it holds the run past its timeout (review s37 lifecycle
	 * H1, H2).  EINVAL is what a file system without direct I/O answers,
	 * so programs fall back to buffered I/O; the flag can be set after
	 * the open too.  ERRNO outranks the actor's NOTIFY for write opens. */
	RULE(ctx, SCMP_ACT_ERRNO(EINVAL), open, 1, SCMP_A1_64(SCMP_CMP_MASKED_EQ, O_DIRECT, O_DIRECT));
	RULE(ctx, SCMP_ACT_ERRNO(EINVAL), openat, 1, SCMP_A2_64(SCMP_CMP_MASKED_EQ, O_DIRECT, O_DIRECT));
	RULE(ctx, SCMP_ACT_ERRNO(EINVAL), fcntl, 2, SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, F_SETFL),
	     SCMP_A2_64(SCMP_CMP_MASKED_EQ, O_DIRECT, O_DIRECT));
	return 0;
}

static int add_sugid_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	/* No setuid or setgid file: a run's files in an idmapped workspace
	 * belong to the person, so a setuid one left there would give any
	 * local account the person's uid once run outside.  Every way to set
	 * the bits - chmod family, open/creat with O_CREAT or O_TMPFILE, mknod
	 * (the mode, a register) - goes to the run's actor (add_git_rules),
	 * which refuses them (actor.c): libseccomp cannot hold a mode rule
	 * beside an unconditional one for the same call.  openat2 hides its
	 * mode in a struct seccomp cannot read, so it is ENOSYS, as under
	 * systemd's RestrictSUIDSGID= (glibc never calls it on its own;
	 * callers fall back to openat). */
	RULE(ctx, SCMP_ACT_ERRNO(ENOSYS), openat2, 0);
	return 0;
}

/*
 * No world-writable mode, no ACL or xattr (SPEC §15.2, issue 12).  A run's
 * files in an idmapped workspace belong to the person, so "others may
 * write" left on them or on the person's directories opens the tree to
 * every local account, outside the sandbox and after it.
 *
 * chmod family: any mode with S_IWOTH is EPERM.  Creation (open, openat,
 * creat, mkdir, mknod, bind of a socket file, O_TMPFILE) takes
 * `mode & ~umask`, and programs pass 0666/0777 and rely on the umask, so
 * the lock is on the umask instead: the init sets it to 022 (sandbox.c) and
 * a umask() whose mask clears S_IWOTH never reaches the kernel.  One rule
 * covers every creating call, including those whose mode seccomp cannot
 * read (openat2 is ENOSYS anyway).  An errno would not do: `old = umask(0);
 * umask(old)` is how tar, pip and Python read the umask, and umask() cannot
 * fail (tar took (mode_t)-1 as the mask and made every file mode 000; pip
 * raised "[Errno 0]").  So the call goes to the supervisor (user
 * notification), which answers with the current umask and leaves it as it
 * is: the program reads 022 back, and its "restore" passes natively.  A directory's default ACL overrides the
 * umask, but a run cannot set one (below): only the person's own ACL can
 * apply, which grants nobody more than before.
 *
 * xattrs: seccomp cannot read the name string, so setting and removing any
 * xattr is EOPNOTSUPP: "this file system has no xattr support", which cp -a,
 * tar --xattrs, rsync and Python's shutil.copystat treat as a reason to
 * go on.  This also stops POSIX ACLs (system.posix_acl_*), file
 * capabilities (security.capability) and a removexattr that would drop a
 * restriction.  Reading (getxattr, listxattr) stays.
 *
 * fallocate is EOPNOTSUPP too: it reserves gigabytes in one call, faster
 * than the supervisor's disk watch can see (asrun/watch.c); without it a run
 * consumes space only at the speed it writes, and glibc's posix_fallocate
 * falls back to writing.
 */
/*
 * No .git made or changed anywhere in a workspace (SPEC §15.2, issue 12):
 * every call that creates, changes or removes a directory entry, and every
 * open for writing, goes to the supervisor's actor, which checks where it
 * lands and makes it (actor.c).  Opens for reading only stay native (the
 * flags are a register: no race); so do calls on descriptors already open
 * for writing (write, ftruncate), whose open was checked.  Rules with ERRNO
 * above (setuid modes, o+w) still win: ERRNO outranks NOTIFY.
 */
static int add_git_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	static const uint64_t write_flags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC};
	for (size_t i = 0; i < sizeof(write_flags) / sizeof(write_flags[0]); i++) {
		RULE(ctx, SCMP_ACT_NOTIFY, open, 1, SCMP_A1_64(SCMP_CMP_MASKED_EQ, write_flags[i], write_flags[i]));
		RULE(ctx, SCMP_ACT_NOTIFY, openat, 1, SCMP_A2_64(SCMP_CMP_MASKED_EQ, write_flags[i], write_flags[i]));
	}
	static const char *const entry_calls[] = {
		"creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat",
		"rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "truncate",
		"chmod", "fchmodat", "fchmod"};
	for (size_t i = 0; i < sizeof(entry_calls) / sizeof(entry_calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(entry_calls[i]);
		int rc = nr < 0 ? -EINVAL : seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
		if (rc < 0) {
			errmsg_set(err, errlen, "seccomp: cannot add the .git rule for '%s': %s", entry_calls[i],
			           strerror(-rc));
			errno = -rc;
			return -1;
		}
	}
#if defined(__x86_64__)
	/* fchmodat2 (Linux 6.6), by number: newer than libseccomp 2.5.4. */
	int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, 452, 0);
	if (rc < 0) {
		errmsg_set(err, errlen, "seccomp: cannot add the .git rule for fchmodat2: %s", strerror(-rc));
		errno = -rc;
		return -1;
	}
#endif
	return 0;
}

static int add_mode_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	/* chmod family with S_IWOTH: refused by the run's actor (actor.c). */
	RULE(ctx, SCMP_ACT_NOTIFY, umask, 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, S_IWOTH, 0));
	/* Every connect goes to the supervisor, which makes it itself: only
	 * a listener of the run's own uid is reachable by a unix path
	 * (notify.c).  Datagram unix sockets name their peer on every sendto,
	 * in memory seccomp cannot read, so they cannot be made at all (a
	 * raw one is a datagram one, af_unix.c); socketpair(SOCK_DGRAM) would
	 * be one too once bound.  Stream and seqpacket sockets stay. */
	RULE(ctx, SCMP_ACT_NOTIFY, connect, 0);
	/* And every bind: a socket file is a new directory entry, which the
	 * actor makes like every other (never named .git, never in a git
	 * directory); other addresses are bound by the supervisor. */
	RULE(ctx, SCMP_ACT_NOTIFY, bind, 0);
	if (add_git_rules(ctx, err, errlen) < 0)
		return -1;
	static const int dgram_types[] = {SOCK_DGRAM, SOCK_RAW};
	for (size_t i = 0; i < 2; i++) {
		RULE(ctx, SCMP_ACT_ERRNO(EACCES), socket, 2, SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX),
		     SCMP_A1_64(SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK, (uint64_t)dgram_types[i]));
		RULE(ctx, SCMP_ACT_ERRNO(EACCES), socketpair, 2, SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, AF_UNIX),
		     SCMP_A1_64(SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK, (uint64_t)dgram_types[i]));
	}
	/* A run's own filter could claim umask for a listener of its own and
	 * let it through (USER_NOTIF_FLAG_CONTINUE): between equal actions
	 * the newest filter wins (seccomp(2)).  So no listener for the run. */
	RULE(ctx, SCMP_ACT_ERRNO(EPERM), seccomp, 1,
	     SCMP_A1_64(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_FILTER_FLAG_NEW_LISTENER));
	static const char *const xattr_set[] = {"setxattr", "lsetxattr", "fsetxattr",
	                                        "removexattr", "lremovexattr", "fremovexattr", "fallocate"};
	if (add_names(ctx, xattr_set, sizeof(xattr_set) / sizeof(xattr_set[0]), EOPNOTSUPP, err, errlen) < 0)
		return -1;
#if defined(__x86_64__)
	/* Newer than libseccomp 2.5.4: setxattrat and removexattrat (6.13),
	 * by native number. */
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), 463, 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), 466, 0);
	if (rc < 0) {
		errmsg_set(err, errlen, "seccomp: cannot add the setxattrat/removexattrat rules: %s",
		           strerror(-rc));
		errno = -rc;
		return -1;
	}
#endif
	return 0;
}

/*
 * libseccomp 2.5.4 exports only to an fd: export into a memfd, read it back
 * into a malloc'd array the caller owns.
 */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *out, char *err, size_t errlen)
{
	struct sock_filter *insns = NULL;
	struct stat st;
	size_t n;
	ssize_t got;
	int fd, rc, saved;

	fd = memfd_create("sharness-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		errmsg_set(err, errlen, "seccomp: memfd_create for the BPF export failed: %s", strerror(errno));
		return -1;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		errmsg_set(err, errlen, "seccomp: exporting the BPF failed: %s", strerror(-rc));
		errno = -rc;
		goto err_close;
	}
	if (fstat(fd, &st) < 0) {
		errmsg_set(err, errlen, "seccomp: fstat of the BPF export failed: %s", strerror(errno));
		goto err_close;
	}
	/* The kernel takes at most BPF_MAXINSNS instructions (and len is a
	 * short); a larger or ragged export is a bug, not something to load. */
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    (size_t)st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		errmsg_set(err, errlen, "seccomp: the exported BPF has an invalid size (%lld bytes)",
		     (long long)st.st_size);
		errno = EINVAL;
		goto err_close;
	}
	n = (size_t)st.st_size / sizeof(struct sock_filter);
	insns = malloc((size_t)st.st_size);
	if (!insns) {
		errmsg_set(err, errlen, "seccomp: out of memory for the BPF program");
		goto err_close;
	}
	got = pread(fd, insns, (size_t)st.st_size, 0);
	if (got != st.st_size) {
		errmsg_set(err, errlen, "seccomp: reading the BPF export back failed");
		if (got >= 0)
			errno = EIO;
		goto err_free;
	}
	close(fd);
	out->len = (unsigned short)n;
	out->filter = insns;
	return 0;

err_free:
	saved = errno;
	free(insns);
	errno = saved;
err_close:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

/* Before Linux 6.3 there is no vm.memfd_noexec: an executable memfd run by
 * execve("/proc/self/fd/N") would pass both Landlock (a memfd has no path
 * beneath any rule) and every noexec mount.  There the run may not create a
 * memfd at all (EPERM); the few programs that need one fail with a clear
 * errno instead of the sandbox having a hole. */
static int add_memfd_rule(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	if (seccomp_kernel_has_memfd_noexec())
		return 0;
	RULE(ctx, SCMP_ACT_ERRNO(EPERM), memfd_create, 0);
	return 0;
}

static int build(struct sock_fprog *out, char *err, size_t errlen)
{
	static const char *const eperm[] = {DENY_EPERM(NAME_STR)};
	static const char *const enosys[] = {DENY_ENOSYS(NAME_STR)};
	scmp_filter_ctx ctx;
	int rc, saved;

	out->len = 0;
	out->filter = NULL;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		errmsg_set(err, errlen, "seccomp: seccomp_init failed (is libseccomp usable?)");
		errno = ENOMEM;
		return -1;
	}
	/* Native arch only (nothing added): i386 and x32 calls get KILL_PROCESS,
	 * so a syscall number from another table can never match "allowed". */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		/* A binary tree over syscall numbers: ~80 rules cost a few
		 * compares per syscall instead of a linear scan. */
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		errmsg_set(err, errlen, "seccomp: cannot set the filter attributes: %s", strerror(-rc));
		errno = -rc;
		goto err_release;
	}
	if (add_names(ctx, eperm, sizeof(eperm) / sizeof(eperm[0]), EPERM, err, errlen) < 0 ||
	    add_names(ctx, enosys, sizeof(enosys) / sizeof(enosys[0]), ENOSYS, err, errlen) < 0 ||
	    add_arg_rules(ctx, err, errlen) < 0 || add_memfd_rule(ctx, err, errlen) < 0 ||
	    add_sugid_rules(ctx, err, errlen) < 0 || add_mode_rules(ctx, err, errlen) < 0)
		goto err_release;
	if (export_prog(ctx, out, err, errlen) < 0)
		goto err_release;
	seccomp_release(ctx);
	return 0;

err_release:
	saved = errno;
	seccomp_release(ctx);
	errno = saved;
	return -1;
}

int seccomp_build_sandbox(struct sock_fprog *out, char *err, size_t errlen)
{
	return build(out, err, errlen);
}

void seccomp_prog_free(struct sock_fprog *prog)
{
	if (!prog)
		return;
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}
