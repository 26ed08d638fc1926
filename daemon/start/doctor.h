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

/* Run every check on the configuration at `config_path` (NULL: the embedded
 * development defaults).  Prints to stdout; returns the exit code: 1 when a
 * line is ✘, else 0. */
int doctor_main(const char *config_path);

#endif
