/*
 * seccomp.c - see seccomp.h: loading the sandbox's filter (compiled once at
 * start by start/sandbox_filter.c) into a run, in the sandbox child right
 * before execve.  Async-signal-safe: one syscall each, no allocation.
 */
#include "seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

int seccomp_apply_listener(const struct sock_fprog *prog)
{
	if (!prog || !prog->filter || prog->len == 0) {
		errno = EINVAL;
		return -1;
	}
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	return fd < 0 ? -1 : (int)fd;
}

bool seccomp_kernel_has_memfd_noexec(void)
{
	return access("/proc/sys/vm/memfd_noexec", F_OK) == 0;
}
