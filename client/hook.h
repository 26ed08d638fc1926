/*
 * hook.h - agent shell-tool hooks that reroute a shell command through
 * `sharness-client run` (SPEC §10; research/ecosystem.md §3).
 *
 * Claude Code PreToolUse is the main target; Codex (same format, decision
 * "allow" required), Gemini CLI BeforeTool and Cursor preToolUse are the
 * same rewrite in their own envelopes; Cursor beforeShellExecution, which
 * cannot rewrite, denies what is not routed yet (docs/agents.md).  A hook is routing, not enforcement:
 * the daemon's certificate roles and profiles are what bind.
 */
#ifndef SHARNESS_CLIENT_HOOK_H
#define SHARNESS_CLIENT_HOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "conf.h"

enum hook_agent { HOOK_CLAUDE, HOOK_CODEX, HOOK_GEMINI, HOOK_CURSOR };

struct hook_opts {
	enum hook_agent agent;
	const char *profile;	 /* NULL: the daemon's default */
	int ask;		 /* 1: leave the permission decision to the agent */
	int deny_unrouted;	 /* 1: deny a shell call with its routed form instead of rewriting it */
	int rewrite;		 /* 1: hook claude rewrites (its default is deny_unrouted) */
	const struct conf *conf; /* explicit --url/--cert/--key/--ca are passed on */
};

/* "claude", "codex", "gemini", "cursor" -> agent; -1 when unknown. */
int hook_agent_parse(const char *name, enum hook_agent *a);

/* The routed form of cmd: SELF run [opts] -- 'cmd'.  sh, bash, zsh and fish
 * turn the quoted word back into exactly cmd (every byte but NUL), so `run`
 * joins one word and sends the original text.  timeout_s 0 = none.
 * malloc'd or NULL. */
char *hook_rewrite(const char *self, const char *cmd, size_t len, long timeout_s, const struct hook_opts *o);

/* 1 when cmd is exactly what hook_rewrite(self, CMD, T, o) gives for some
 * CMD and timeout T, else 0: nothing else counts as already routed. */
int hook_is_routed(const char *self, const char *cmd, size_t len, const struct hook_opts *o);

/* Whether `name` (no slash) is an executable file in a directory of $PATH
 * (unset: /usr/local/bin:/usr/bin:/bin), as a shell would find it (a
 * relative entry from the working directory).  Also doctor.c's. */
bool hook_on_path(const char *name);

/* The agent's deny answer with why (stderr; Cursor also a JSON reply on
 * stdout): the exit code to return, 2, or 0 for Cursor. */
int hook_deny(enum hook_agent a, const char *why);

/* Reads the hook JSON on stdin, prints the agent's reply on stdout.  Returns
 * the exit code: 0 (rewritten, left alone, or - Cursor - a JSON deny), 2
 * (block, reason on stderr: input not understood or not routable). */
int hook_main(const struct hook_opts *o);

#endif
