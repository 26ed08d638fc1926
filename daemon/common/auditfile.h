/*
 * auditfile.h - opening the audit log, which root does (at start and on
 * SIGHUP, for log rotation) and hands the front as a descriptor; the
 * front writes the lines (front/audit.h).
 */
#ifndef SHARNESS_AUDITFILE_H
#define SHARNESS_AUDITFILE_H

/* Open `path` for appending ("-" = stderr), mode 0600, never through a
 * symlink.  Returns an fd (close-on-exec) or -1. */
int audit_open(const char *path);

#endif
