/*
 * seccomp.h - loading the run's seccomp filter (compiled once at start:
 * start/sandbox_filter.h) into the sandbox child, with one syscall.
 *
 * Trust: runs in the sandbox child after no_new_privs, right before execve.
 */
#ifndef SHARNESS_SECCOMP_H
#define SHARNESS_SECCOMP_H

#include <stdbool.h>
#include <linux/filter.h>

/* Load a compiled filter on the calling thread (requires no_new_privs;
 * async-signal-safe), umask() without S_IWOTH and every connect() and bind() go to
 * a user-notification listener (seccomp_unotify(2)); returns its fd
 * (close-on-exec), for the supervisor to take with pidfd_getfd and answer
 * with notify_answer (notify.c).  Without a listener those calls are ENOSYS. */
int seccomp_apply_listener(const struct sock_fprog *prog);

/* Linux >= 6.3: vm.memfd_noexec exists.  Without it the sandbox filter
 * denies memfd_create (start/sandbox_filter.c). */
bool seccomp_kernel_has_memfd_noexec(void);

#endif
