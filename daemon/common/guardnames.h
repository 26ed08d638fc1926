/*
 * guardnames.h - the entry names that the person's tools on the host run
 * from, compared as a file system that folds names sees them: git's
 * repositories (.git) and the AI agents' and editors' project settings
 * (.claude, .mcp.json, .vscode, ...).  The run's file actor refuses to make
 * or change them in a guarded tree (asrun/actor_serve.c); start-up refuses
 * a workspace or write path in one (start/keepout.c).
 */
#ifndef SHARNESS_GUARDNAMES_H
#define SHARNESS_GUARDNAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Would git take an entry of this name (len bytes) for a repository, or
 * its 8.3 alias?  In any case, without the code points HFS+ and older
 * casefolding ext4 ignore, with the letters Unicode folds to ASCII (U+017F
 * to s, U+212A to k), and with trailing dots and spaces. */
bool guard_name_is_git(const char *name, size_t len);

/* The same for an AI agent's or editor's project configuration, whose
 * hooks, MCP servers and commands an agent on the host runs (review s36). */
#define GUARD_AGENT_CONFIG_N 16
extern const char *const guard_agent_config[GUARD_AGENT_CONFIG_N];
bool guard_name_is_agent_config(const char *name, size_t len);

/* VS Code's `.vscode`, and the one file a run may make or change in it:
 * `extensions.json`, the extensions the project recommends.  It runs
 * nothing (the person installs what it lists, by a deliberate act), and
 * scaffolds ship it (`npm create vite`); everything else there may run
 * (settings, tasks, launch configurations, MCP servers, extensions' own
 * files such as c_cpp_properties.json's compilerPath). */
bool guard_name_is_vscode(const char *name, size_t len);
bool guard_name_is_vscode_free(const char *name, size_t len);

#endif
