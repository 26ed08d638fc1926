/*
 * sandbox_filter.h - the run's seccomp deny list (SPEC §6), compiled once
 * at start with libseccomp and kept as raw BPF; each run loads it with
 * root/seccomp.h.
 *
 * Trust: privileged, at start; reads no input.
 */
#ifndef SHARNESS_SANDBOX_FILTER_H
#define SHARNESS_SANDBOX_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/filter.h>

/* Compile the sandbox filter (native arch only, bad arch kills). */
int seccomp_build_sandbox(struct sock_fprog *out, char *err, size_t errlen);
/* Frees what seccomp_build_sandbox made; a NULL or freed prog is a no-op. */
void seccomp_prog_free(struct sock_fprog *prog);

/* Names of the denied syscalls, NULL-terminated, for /v0/policy. */
const char *const *seccomp_denied_names(void);

#endif
