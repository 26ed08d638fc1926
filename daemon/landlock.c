/*
 * landlock.c - the run's Landlock ruleset (SPEC §6, research/sandbox.md §A.6)
 * through the raw syscalls: every access right the running kernel's ABI knows
 * is handled, so anything not granted by a path rule is denied.
 *
 * Trust: the paths come from the launcher's own profile table (validated at
 * load), never from the network.  Runs in the sandbox child after the mount
 * namespace is built and before seccomp and execve; it only makes syscalls
 * (no allocation), so it is safe after fork in a threaded parent.
 *
 * Fail closed: no Landlock (ENOSYS: not built; EOPNOTSUPP: disabled at boot)
 * is an error, never a silent skip.  A path that cannot be opened (ENOENT, ...)
 * is also an error, so the caller decides whether a missing path is fine.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

#define FS_ABI1                                                                          \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                    \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |                    \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |                    \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |                    \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |                  \
	 LANDLOCK_ACCESS_FS_MAKE_SYM)

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

/* Every FS right this ABI knows: the fall-through list from the kernel doc
 * ("Defining and enforcing a security policy"), inverted to add rather than
 * clear.  ABI 7/8 add audit and TSYNC flags, no new rights. */
static __u64 fs_rights(int abi)
{
	__u64 r = FS_ABI1;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
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
		return -1;
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
	return -1;
}

int landlock_apply(const struct landlock_path *paths, size_t n, uint16_t tcp_connect_port)
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
	attr.handled_access_fs = fs_rights(abi);
	/* ABI 4: handling both TCP rights with no bind rule denies every TCP
	 * bind (port 0 included) and every connect but the proxy's port. */
	if (abi >= 4)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	/* ABI 6: no connecting to abstract unix sockets or signalling
	 * processes outside this domain (the daemon, other runs). */
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;

	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!paths[i].path) {
			errno = EINVAL;
			goto err_close;
		}
		if (add_path(ruleset, &paths[i], attr.handled_access_fs) < 0)
			goto err_close;
	}
	if (abi >= 4 && tcp_connect_port != 0) {
		struct net_port_attr np = {
			.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
			.port = tcp_connect_port,
		};
		if (syscall(__NR_landlock_add_rule, ruleset, RULE_NET_PORT, &np, 0) < 0)
			goto err_close;
	}
	/* The kernel requires no_new_privs (or CAP_SYS_ADMIN) here: EPERM
	 * otherwise, which we pass up rather than set NNP behind the caller. */
	if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
		goto err_close;
	close(ruleset);
	return 0;

err_close:
	saved = errno;
	close(ruleset);
	errno = saved;
	return -1;
}
