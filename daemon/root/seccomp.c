/*
 * seccomp.c - see seccomp.h: loading the sandbox's filter (compiled once at
 * start by start/sandbox_filter.c) into a run, in the sandbox child right
 * before execve.  Async-signal-safe: one syscall each, no allocation.
 */
#include "seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int seccomp_apply(const struct sock_fprog *prog)
{
	if (!prog || !prog->filter || prog->len == 0) {
		errno = EINVAL;
		return -1;
	}
	/* The kernel refuses (EACCES) without no_new_privs unless the caller
	 * has CAP_SYS_ADMIN; the sandbox sets NNP first, so this cannot turn
	 * a setuid exec into a confused deputy. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) < 0)
		return -1;
	return 0;
}

int seccomp_apply_listener(const struct sock_fprog *prog)
{
	if (!prog || !prog->filter || prog->len == 0) {
		errno = EINVAL;
		return -1;
	}
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	return fd < 0 ? -1 : (int)fd;
}

void seccomp_prog_free(struct sock_fprog *prog)
{
	if (!prog)
		return;
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}

bool seccomp_kernel_has_memfd_noexec(void)
{
	return access("/proc/sys/vm/memfd_noexec", F_OK) == 0;
}
