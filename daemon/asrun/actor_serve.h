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

/* The name tests, exported for the unit tests. */
bool actor_name_is_git(const char *name, size_t len);
bool actor_path_in_git(const char *path, const char *const *trees, size_t n_trees);
/* The same for the AI agents' project configuration: .claude, .cursor,
 * .gemini, .codex, .vscode, .mcp.json and the other agents' and editors'
 * (actor_serve.c lists them), compared as .git is (case,
 * ignorable code points, trailing dots and spaces).  An agent on the host
 * runs the hooks, MCP servers and commands these name: a run may not
 * create, change or remove them in a guarded tree (review s36). */
bool actor_name_is_agent_config(const char *name, size_t len);
bool actor_path_in_agent_config(const char *path, const char *const *trees, size_t n_trees);

#endif
