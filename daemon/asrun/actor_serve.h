/*
 * actor_serve.h - the file actor's half that runs as the run (see
 * actor_serve.c; root/actor.h has the messages and the root half).
 */
#ifndef SHARNESS_ACTOR_SERVE_H
#define SHARNESS_ACTOR_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdnoreturn.h>

struct sandbox_spec;

/* Serve requests on `sock` until it closes.  The caller (actor_main.c,
 * exec'd as the run by root/actor.c) is chrooted into the run's root and
 * dropped to the run; `host_proc` is the host's /proc, opened before the
 * chroot. */
noreturn void actor_serve(int sock, int host_proc, const struct sandbox_spec *spec);

/* The path tests, exported for the unit tests: is `path` (absolute, as
 * the kernel prints it) in a guarded tree, with a component below that
 * tree that guardnames.h names? */
bool actor_path_in_git(const char *path, const char *const *trees, size_t n_trees);
bool actor_path_in_agent_config(const char *path, const char *const *trees, size_t n_trees);

#endif
