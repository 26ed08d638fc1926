/*
 * log.h - human-readable log lines on stderr (journald picks them up).
 * The only global mutable state besides the signal fds: the prefix and level.
 */
#ifndef SHARNESS_LOG_H
#define SHARNESS_LOG_H

#include <stdnoreturn.h>

void log_set_prefix(const char *prefix); /* "launcher", "front", "run" */
void log_set_verbose(int verbose);
int log_is_verbose(void);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only at start-up: print "sharnessd: <msg>" and exit 1. */
noreturn void log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
