/*
 * doctor.h - `sharnessd --doctor`: every check the start-up makes, and more
 * (certificates, workspaces, delegation, reachability), each as one line
 * "✔ what" or "✘ what: the fix for this system", without starting the
 * daemon and without changing anything on the system: no cgroup, no claim,
 * no file is created or kept.
 *
 * Trust: root, start-up; the configuration is operator input.
 */
#ifndef SHARNESS_DOCTOR_H
#define SHARNESS_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

/* Run every check on the configuration at `config_path` (NULL: the embedded
 * development defaults).  Prints to stdout; returns the exit code: 1 when a
 * line is ✘, else 0. */
int doctor_main(const char *config_path);

/* Does this process have CAP_SYS_PTRACE and CAP_SYS_CHROOT, which starting
 * a run's file actor needs (the chroot into the run's root)?  Without them
 * every write and unix connect of a run fails closed. */
bool doctor_can_connect(void);

/* kernel.yama.ptrace_scope, 0 without Yama.  Above 1, a run's supervisor,
 * which runs as the run's uid, could not read its own run's calls. */
int doctor_ptrace_scope(void);

/* When kernel.core_pattern (read into pattern) is a socket (`@`, Linux
 * 6.16+), which no core limit stops: the sentence saying so and what to
 * do; else NULL. */
const char *doctor_core_socket(char *pattern, size_t size);

#endif
