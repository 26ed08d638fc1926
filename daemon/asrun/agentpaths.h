/*
 * agentpaths.h - what an AI agent or editor on the host runs by the project
 * configuration at the top of a tree: a Claude Code hook's command, an MCP
 * server's command, arguments and environment, a task's command
 * (agentpaths.c lists the files and keys).  The file actor already refuses
 * every change to that configuration (the agent-config lock); gitpaths.c
 * keeps every path-like piece of what it runs, as it does for what git
 * runs, so a run cannot rewrite `./scripts/format.sh` that a hook runs
 * after the agent's next edit.
 *
 * Only what the configuration names is kept, never what the named tool
 * then runs or loads: the scripts of `package.json` behind `npm run lint`,
 * the Makefile behind `make fmt`, `node_modules/.bin`, a module on
 * PYTHONPATH.  A run may change those, as it may change any source the
 * person later runs (review s37 fixes M4).
 *
 * Trust: the configuration is the person's (no run may change it); its
 * size is bounded, its syntax read leniently (JSON with comments and
 * trailing commas, TOML, YAML), taking more strings rather than fewer.
 */
#ifndef SHARNESS_AGENTPATHS_H
#define SHARNESS_AGENTPATHS_H

#include <stdbool.h>
#include <stddef.h>

/* A string the configuration runs or hands to what it runs (a command, its
 * words, the executable it names), or a directory of a PATH it sets (a bare
 * command name is run from there), and why (for the denial: "the person's
 * AI agent runs it (.claude/settings.json)"). */
enum agentpaths_what { AGENTPATHS_COMMAND, AGENTPATHS_DIRECTORY };
typedef void agentpaths_each(void *arg, const char *s, const char *why, enum agentpaths_what what);

enum agentpaths_syntax { AGENTPATHS_JSON, AGENTPATHS_TOML, AGENTPATHS_YAML };

/* Is `name` (len bytes) a variable whose value is a list of directories
 * programs are found in: PATH, LD_LIBRARY_PATH (a system binary loads a
 * library planted there), GCONV_PATH. */
bool agentpaths_is_dir_list(const char *name, size_t len);

/* Split `list`, such a variable's value (changed in place), at each ':'
 * outside braces (`${workspaceFolder}/bin:${env:PATH}`), and call `each`
 * with AGENTPATHS_DIRECTORY for each directory but those where the run's
 * own installs write (`.venv`, `venv`, `node_modules`, `.tox`). */
void agentpaths_dirs(char *list, const char *why, agentpaths_each *each, void *arg);

/* Read each agent's and editor's project configuration file at the top of
 * `top` and call `each` with every such string.  NULL, or why a file that
 * is there could not be read in full (over 1 MiB, unreadable, nested deeper
 * than the scanner follows): the caller then closes the tree. */
const char *agentpaths_read(const char *top, agentpaths_each *each, void *arg);

/* One file's text (for the unit tests): the same, `why` given to each. */
const char *agentpaths_scan(const char *text, size_t len, enum agentpaths_syntax syntax, const char *why,
			    agentpaths_each *each, void *arg);

#endif
