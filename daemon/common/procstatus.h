/*
 * procstatus.h - fields of /proc/PID/status (proc(5)): the capability
 * masks, Seccomp, Umask, NSpid.  One reader for the start-up checks, the
 * front's check of itself and the supervisor's look at a run's process.
 *
 * Trust: the file is the kernel's; a run's process can only be the pid.
 */
#ifndef SHARNESS_PROCSTATUS_H
#define SHARNESS_PROCSTATUS_H

#include <stddef.h>
#include <sys/types.h>

/* Longer than any status file (about 1.5 KB on 6.x kernels). */
#define PROCSTATUS_MAX 4096

/* Read /proc/PID/status (pid 0: our own) into buf, NUL-terminated.
 * 0, or -1 with errno. */
int procstatus_read(pid_t pid, char *buf, size_t size);

/* The value of field `name` ("CapEff", "Umask") in a buffer procstatus_read
 * filled: the text after "name:" and its tab, up to the line's end (not
 * cut).  NULL when there is no such field. */
const char *procstatus_find(const char *buf, const char *name);

#endif
