/*
 * denials.c - the reply's `denials`: one entry per lock that refused
 * something during the run, with a hint that says what would work.
 *
 * Authoritative where a lock knows: the timeout, the output cap, the pids
 * limit (pids.events), the memory limit (an OOM kill), the disk watch, the
 * egress proxy's refusals, and the supervisor's (connects, .git, modes:
 * notify.c, actor.c).  Where only the kernel knows and says nothing to us -
 * a write refused by a read-only mount, an exec refused by noexec, a
 * network call in a profile without network - the entry is read from the
 * command's stderr (or stdout: `2>&1` is common) and marked `inferred`: a program's own message can look
 * the same, so the agent is told it is a guess.
 *
 * Trust: front; everything here comes from the supervisor's exit record
 * (bounded strings), the proxy, or the already filtered stderr.  What the
 * run chose - a path, a socket's address, a host name - is hostile text:
 * it goes through the secret filter as the run's output does and comes out
 * valid UTF-8, cut only between characters (a JSON reply with a stray byte
 * is refused whole by strict parsers, the client's jansson among them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "denials.h"
#include "scrub.h"
#include "utf8.h"

__attribute__((format(printf, 4, 5)))
static struct run_denial *add(struct run_denials *d, const char *lock, const char *hint, const char *fmt, ...)
{
	if (d->n >= RUN_DENIALS_MAX)
		return NULL;
	struct run_denial *x = &d->v[d->n++];
	memset(x, 0, sizeof(*x));
	x->lock = lock;
	char full[1024]; /* more than the detail keeps: it is cut below, between characters */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(full, sizeof(full), fmt, ap);
	va_end(ap);
	size_t n = utf8_cut(full, strlen(full), sizeof(x->detail) - 1);
	memcpy(x->detail, full, n);
	x->detail[n] = '\0';
	snprintf(x->hint, sizeof(x->hint), "%s", hint);
	return x;
}

static bool has(const struct run_denials *d, const char *lock)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].lock, lock) == 0)
			return true;
	return false;
}

static const char *network_hint(const struct profile *p)
{
	return p->network == PROFILE_NETWORK_PROXY
	           ? "only the egress proxy is reachable (HTTPS_PROXY is set): use a host on this profile's "
	             "allowlist (GET /v0/profiles), or ask an operator to add one"
	           : "this profile has no network: use the build profile, whose proxy reaches package "
	             "registries and GitHub";
}

/* Text the run chose, as it may go out: filtered like the run's output
 * (what was replaced counts in the reply's `filtered`), then valid UTF-8.
 * malloc'd; NULL when the front is out of memory. */
static char *run_text(struct run_denials *d, const struct denial_facts *f, const char *raw, size_t len)
{
	size_t flen = 0;
	unsigned long n = 0;
	bool replaced;
	char *filtered = scrub_buffer(f->scrub, raw, len, &flen, &n);
	char *clean = filtered ? utf8_clean(filtered, flen, &replaced) : NULL;
	free(filtered);
	d->filtered += n;
	return clean;
}

#define NOT_SHOWN "(not shown: the front is out of memory)"

static void from_supervisor(struct run_denials *d, const struct denial_facts *f)
{
	const struct privsep_exit *ex = f->ex;
	unsigned kept = 0;
	for (size_t i = 0; i < PRIVSEP_DENIALS_MAX && ex && ex->denied[i].kind; i++, kept++) {
		/* Not terminated by a supervisor that is the run's uid already. */
		char *text = run_text(d, f, ex->denied[i].detail,
		                      strnlen(ex->denied[i].detail, sizeof(ex->denied[i].detail)));
		const char *detail = text ? text : NOT_SHOWN;
		switch (ex->denied[i].kind) {
		case PRIVSEP_DENIAL_UNIX:
			add(d, "unix-socket",
			    "a run reaches only the sockets its own processes listen on: start the server in the "
			    "same command, or connect from outside the sandbox",
			    "refused %s", detail);
			break;
		case PRIVSEP_DENIAL_TCP:
			add(d, "network", network_hint(f->profile), "refused %s", detail);
			break;
		case PRIVSEP_DENIAL_GIT:
			add(d, "git",
			    "runs may read repositories but not create or change one (the person's git would run "
			    "its config): commit, clone or init outside the sandbox; a throw-away repository may "
			    "live in /tmp",
			    "refused %s", detail);
			break;
		case PRIVSEP_DENIAL_GIT_RUNS:
			add(d, "git",
			    "the person's git would run or read this path (hooks, an included config, a command git "
			    "runs by itself): change it outside the sandbox; for a repository whose git directory "
			    "lies outside the view, serve that worktree or submodule as a workspace of its own "
			    "(restart sharnessd after making it), or serve the main checkout",
			    "refused %s", detail);
			break;
		case PRIVSEP_DENIAL_AGENT:
			add(d, "agent-config",
			    "runs may not change an AI agent's own configuration (.claude, .mcp.json, .cursor, .gemini, "
			    ".codex, .vscode) nor a file it runs (a hook's script, an MCP server): the agent would run "
			    "them on the host, outside the sandbox; change it outside the sandbox",
			    "refused %s", detail);
			break;
		case PRIVSEP_DENIAL_MODE:
			add(d, "mode", "use a mode without setuid, setgid or write for others (e.g. 755, 644)",
			    "refused %s", detail);
			break;
		default:
			add(d, "daemon", "an operator must fix the daemon: sharnessd --doctor says how", "refused %s",
			    detail);
		}
		free(text);
	}
	if (ex && ex->n_denied > kept && d->n > 0) {
		/* The count stays whole; the detail gives way, between characters. */
		char more[48], *last = d->v[d->n - 1].detail;
		int m = snprintf(more, sizeof(more), " (and %u more refusals)", ex->n_denied - kept);
		size_t keep = utf8_cut(last, strlen(last), sizeof(d->v[0].detail) - 1 - (size_t)m);
		memcpy(last + keep, more, (size_t)m + 1);
	}
}

/* Is `word` in the command's stderr or stdout (`2>&1` is common)? */
static bool said(const struct denial_facts *f, const char *word)
{
	return (f->stderr_text && strstr(f->stderr_text, word)) || (f->stdout_text && strstr(f->stdout_text, word));
}

/* Inferred: the kernel's own words for a refusal in the output. */
static void inferred(struct run_denials *d, const struct denial_facts *f)
{
	const struct profile *p = f->profile;
	struct run_denial *x = NULL;
	if (!has(d, "git") && said(f, "Read-only file system"))
		x = add(d, "read-only",
		        p->workspace_write
		            ? "writes go to the workspace, /tmp or the profile's write paths; the rest of the "
		              "system, the home directory and .git are read-only"
		            : "this profile's workspace is read-only: use build or test to write, or write to /tmp "
		              "(gone with the run)",
		        "a write was refused: Read-only file system");
	if (x)
		x->inferred = true;
	x = NULL;
	if (f->exit_code == 126 && said(f, "Permission denied"))
		x = add(d, "noexec",
		        p->tmp_exec || p->n_workspace_exec
		            ? "files are executable only in this profile's workspace_exec paths and /tmp; "
		              "interpreters work anywhere (bash x.sh, python3 x.py, node x.js)"
		            : "files in the workspace and /tmp cannot be run in this profile: use the test "
		              "profile (exec in build/, target/, node_modules/ and /tmp), or run them through "
		              "their interpreter (bash x.sh, python3 x.py)",
		        "an exec was refused: Permission denied (exit 126)");
	if (x)
		x->inferred = true;
	x = NULL;
	static const char *const net_words[] = {"Could not resolve host", "Temporary failure in name resolution",
	                                        "Network is unreachable", "getaddrinfo ENOTFOUND",
	                                        "Name or service not known"};
	for (size_t i = 0; !x && !has(d, "network") && !has(d, "proxy") && i < 5; i++)
		if (said(f, net_words[i]))
			x = add(d, "network", network_hint(p), "a network call failed: %s", net_words[i]);
	if (x)
		x->inferred = true;
}

void denials_collect(struct run_denials *d, const struct denial_facts *f)
{
	const struct profile *p = f->profile;
	memset(d, 0, sizeof(*d));
	if (f->timed_out)
		add(d, "timeout",
		    f->timeout_s < p->timeout_max_s
		        ? "ask for more time with timeout_s (this profile allows up to its maximum), or split the work"
		        : "this is the profile's longest timeout: split the work into shorter commands",
		    "killed after %u s (timeout_s; the profile's maximum is %u s)", f->timeout_s, p->timeout_max_s);
	if (f->truncated)
		add(d, "output",
		    p->workspace_write ? "write the output to a file in the workspace and read the part you need "
		                         "(grep, head, tail)"
		                       : "narrow the output in the command itself (grep, head, tail, wc)",
		    "stdout or stderr passed output_max_bytes (%zu bytes): the head and the tail are kept",
		    p->output_max);
	if (f->have_pids_limited && f->pids_limited)
		add(d, "pids", "run fewer processes and threads at once (make -j2, a smaller worker pool)",
		    "the run reached pids_max (%u processes and threads); a fork or thread start failed", p->pids_max);
	if (f->have_oom && f->oom_killed)
		add(d, "memory", "use less memory (fewer parallel jobs, smaller inputs)",
		    "the run reached memory_max (%llu MiB) and a process was OOM-killed",
		    (unsigned long long)(p->memory_max >> 20));
	if (f->disk_limited)
		add(d, "disk", "remove what the run wrote, or ask an operator about limits.disk_*", "%s",
		    f->disk_message ? f->disk_message : "the run's disk use hit a limit");
	for (size_t i = 0; i < f->n_proxy; i++) {
		/* The proxy's sentence names the host the run asked for. */
		char *text = run_text(d, f, f->proxy[i], strnlen(f->proxy[i], sizeof(f->proxy[i])));
		add(d, "proxy",
		    "only the hosts on this profile's allowlist are reachable (GET /v0/profiles): use one, or ask "
		    "an operator to add the host",
		    "the egress proxy refused: %s", text ? text : NOT_SHOWN);
		free(text);
	}
	from_supervisor(d, f);
	inferred(d, f);
}
