/*
 * hook.c - rewrite an agent's shell tool call to `sharness-client run`.
 *
 * Trust: the hook JSON comes from the agent, and the command text is written
 * by a model that may be steered by hostile input.  The text is never
 * interpreted here; it is single-quoted whole, which bash undoes exactly.
 * The hook fails closed: input that is not a tool call in the agent's own
 * hook format (unparsable, another agent's payload, another event, a field
 * missing or of the wrong type) gets the agent's deny answer, because "no
 * output, exit 0" or any other failure makes the agent run the command
 * unchanged, outside the sandbox.  Only a well-formed call of one of the
 * agent's other tools passes.  The formats are in docs/agents.md.
 */
#include "hook.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "run.h"

#define HOOK_MAX_INPUT (16u << 20)

int hook_agent_parse(const char *name, enum hook_agent *a)
{
	static const struct {
		const char *name;
		enum hook_agent a;
	} t[] = {
	    {"claude", HOOK_CLAUDE},
	    {"codex", HOOK_CODEX},
	    {"gemini", HOOK_GEMINI},
	    {"cursor", HOOK_CURSOR},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		if (strcmp(name, t[i].name) == 0) {
			*a = t[i].a;
			return 0;
		}
	}
	return -1;
}

/* A word that the shell keeps literally when unquoted (zsh expands a
 * leading '=' to a command's path). */
static int is_plain(const char *s)
{
	if (!*s || *s == '=')
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *s))
			return 0;
	return 1;
}

static int add_word(struct buf *b, const char *w)
{
	if (buf_puts(b, " ") < 0)
		return -1;
	return is_plain(w) ? buf_puts(b, w) : buf_shquote(b, w, strlen(w));
}

char *hook_rewrite(const char *self, const char *cmd, size_t len, long timeout_s, const struct hook_opts *o)
{
	struct buf b = {0};
	char num[32];
	int bad = is_plain(self) ? buf_puts(&b, self) : buf_shquote(&b, self, strlen(self));
	bad |= buf_puts(&b, " run");
	const struct {
		const char *flag, *val;
	} pass[] = {
	    {"--url", o->conf ? o->conf->flag_url : NULL},
	    {"--cert", o->conf ? o->conf->flag_cert : NULL},
	    {"--key", o->conf ? o->conf->flag_key : NULL},
	    {"--ca", o->conf ? o->conf->flag_ca : NULL},
	    {"--profile", o->profile},
	};
	for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++)
		if (pass[i].val)
			bad |= add_word(&b, pass[i].flag) | add_word(&b, pass[i].val);
	if (timeout_s > 0) {
		snprintf(num, sizeof num, "%ld", timeout_s);
		bad |= add_word(&b, "--timeout") | add_word(&b, num);
	}
	bad |= buf_puts(&b, " -- ") | buf_shquote(&b, cmd, len);
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* Splits s into words if it is nothing but literal words: plain characters,
 * '...' quotes and backslash escapes, separated by blanks.  Any other shell
 * syntax ($, `, ;, |, &, <, >, (, ), newline, globs, ~, #, ", ...) -> -1,
 * because then the text could run something besides the client. */
static int literal_words(const char *s, size_t n, char ***out)
{
	struct buf cur = {0};
	char **w = NULL;
	size_t nw = 0;
	int inword = 0;
	for (size_t i = 0; i <= n; i++) {
		char ch = i < n ? s[i] : ' ';
		if (ch == ' ' || ch == '\t') {
			if (inword) {
				char **nwv = realloc(w, (nw + 2) * sizeof *w);
				if (!nwv)
					goto fail;
				w = nwv;
				w[nw++] = cur.data ? cur.data : strdup("");
				w[nw] = NULL;
				cur.data = NULL;
				cur.len = cur.cap = 0;
				inword = 0;
			}
			continue;
		}
		inword = 1;
		if (ch == '\'') {
			const char *q = memchr(s + i + 1, '\'', n - i - 1);
			if (!q || buf_append(&cur, s + i + 1, (size_t)(q - s - i - 1)) < 0)
				goto fail;
			i = (size_t)(q - s);
		} else if (ch == '\\' && i + 1 < n && s[i + 1] != '\n') {
			if (buf_append(&cur, s + i + 1, 1) < 0)
				goto fail;
			i++;
		} else if (ch &&
			   strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-",
				  ch)) {
			if (buf_append(&cur, &ch, 1) < 0)
				goto fail;
		} else {
			goto fail;
		}
	}
	*out = w;
	return (int)nw;
fail:
	buf_free(&cur);
	for (size_t i = 0; i < nw; i++)
		free(w[i]);
	free(w);
	return -1;
}

/* Already routed: cmd is, byte for byte, what hook_rewrite makes of some
 * command with this hook's own flags (and any --timeout).  Nothing looser:
 * a first word that merely resolves to this binary here may be another
 * program in the agent's shell (/proc/self/exe is the shell there; an empty
 * or relative PATH entry is its working directory), and other flags could
 * pick another profile or daemon.  The rewrite quotes for every shell the
 * agents use (buf_shquote), so a text equal to it runs only the client. */
int hook_is_routed(const char *self, const char *cmd, size_t len, const struct hook_opts *o)
{
	char **w = NULL;
	int n = literal_words(cmd, len, &w), routed = 0;
	long timeout_s = 0;
	for (int i = 0; i + 1 < n - 1 && strcmp(w[i], "--") != 0; i++)
		if (strcmp(w[i], "--timeout") == 0)
			timeout_s = strtol(w[i + 1], NULL, 10); /* exact digits: compared below */
	if (n >= 4 && strcmp(w[n - 2], "--") == 0) {
		char *canonical = hook_rewrite(self, w[n - 1], strlen(w[n - 1]), timeout_s, o);
		routed = canonical && strlen(canonical) == len && memcmp(canonical, cmd, len) == 0;
		free(canonical);
	}
	for (int i = 0; i < n; i++)
		free(w[i]);
	free(w);
	return routed;
}

/* The hook event each agent sends for a tool call, and the names its shell
 * tool has carried.  Codex presents every shell-like tool as "Bash" to hooks
 * (codex-rs/core/src/tools/hook_names.rs); the older names stay in the list
 * so that a Codex that still sends them is rewritten, not passed. */
static const char *tool_event(enum hook_agent a)
{
	return a == HOOK_GEMINI ? "BeforeTool" : a == HOOK_CURSOR ? "preToolUse" : "PreToolUse";
}

static int is_shell_tool(enum hook_agent a, const char *tool)
{
	/* Claude Code's Monitor runs a command in the background and streams
	 * its lines (tools reference, v2.1.98): a shell call like Bash's. */
	static const char *const claude[] = {"Bash", "Monitor", NULL};
	static const char *const codex[] = {"Bash",	    "shell",	      "shell_command", "local_shell",
					    "exec_command", "container.exec", "unified_exec",  NULL};
	static const char *const gemini[] = {"run_shell_command", NULL};
	static const char *const cursor[] = {"Shell", "run_terminal_cmd", "run_terminal_command", NULL};
	const char *const *t = a == HOOK_CLAUDE	  ? claude
			       : a == HOOK_CODEX  ? codex
			       : a == HOOK_GEMINI ? gemini
						  : cursor;
	for (; *t; t++)
		if (strcmp(*t, tool) == 0)
			return 1;
	return 0;
}

static const char *const agent_name[] = {
    [HOOK_CLAUDE] = "claude", [HOOK_CODEX] = "codex", [HOOK_GEMINI] = "gemini", [HOOK_CURSOR] = "cursor"};

/* One shell command the agent is about to run. */
struct call {
	int top;	 /* Cursor beforeShellExecution: command at the top level, no rewrite */
	json_t *ti;	 /* tool_input (borrowed from the root), NULL when top */
	const char *cmd; /* borrowed */
	size_t len;
};

enum { CALL_BAD = -1, CALL_OTHER = 0, CALL_SHELL = 1 };

/* Checks that root is a tool call in the agent's own hook format.  Anything
 * else - another agent's payload, another event, a field missing or of the
 * wrong type - is CALL_BAD with why filled: the caller denies it, because
 * "no opinion" would let the agent run the command outside the sandbox. */
static int parse_call(enum hook_agent a, json_t *root, struct call *c, char *why, size_t n)
{
	const char *ev = json_string_value(json_object_get(root, "hook_event_name"));
	if (!ev) {
		snprintf(why, n, "the hook input has no string hook_event_name, so it is not a %s hook call",
			 agent_name[a]);
		return CALL_BAD;
	}
	if (a == HOOK_CURSOR && strcmp(ev, "beforeShellExecution") == 0) {
		json_t *jc = json_object_get(root, "command");
		if (!json_is_string(jc) || json_string_length(jc) == 0) {
			snprintf(why, n, "the beforeShellExecution input has no non-empty string command");
			return CALL_BAD;
		}
		*c = (struct call){.top = 1, .cmd = json_string_value(jc), .len = json_string_length(jc)};
		return CALL_SHELL;
	}
	if (strcmp(ev, tool_event(a)) != 0) {
		snprintf(why, n,
			 "hook_event_name is \"%.40s\", not the \"%s\" event that 'hook %s' handles%s", ev,
			 tool_event(a), agent_name[a],
			 a == HOOK_CURSOR ? " (or beforeShellExecution)"
					  : " (is it installed for another agent?)");
		return CALL_BAD;
	}
	const char *tool = json_string_value(json_object_get(root, "tool_name"));
	if (!tool || !*tool) {
		snprintf(why, n, "the %s input has no non-empty string tool_name", ev);
		return CALL_BAD;
	}
	json_t *ti = json_object_get(root, "tool_input");
	if (!json_is_object(ti)) {
		snprintf(why, n, "the %s input for tool %.40s has no tool_input object", ev, tool);
		return CALL_BAD;
	}
	/* Claude Code's PowerShell tool runs pwsh, whose quoting the rewrite's
	 * POSIX quotes do not hold in: denied, never passed (review s36). */
	if (a == HOOK_CLAUDE && strcmp(tool, "PowerShell") == 0) {
		snprintf(why, n,
			 "the PowerShell tool runs commands outside the sandbox and sharness cannot route them: "
			 "use the Bash tool, which it does");
		return CALL_BAD;
	}
	if (!is_shell_tool(a, tool))
		return CALL_OTHER;
	json_t *jc = json_object_get(ti, "command");
	if (!json_is_string(jc) || json_string_length(jc) == 0) {
		snprintf(why, n, "the %s call has no non-empty string tool_input.command", tool);
		return CALL_BAD;
	}
	json_t *jt = json_object_get(ti, "timeout");
	if (jt && !json_is_null(jt) && !json_is_number(jt)) {
		snprintf(why, n, "the %s call's tool_input.timeout is not a number", tool);
		return CALL_BAD;
	}
	*c = (struct call){.ti = ti, .cmd = json_string_value(jc), .len = json_string_length(jc)};
	return CALL_SHELL;
}

/* Prints one JSON reply line; only the JSON may reach stdout, anything else
 * corrupts the protocol.  Takes the reference to out. */
static int reply(json_t *out)
{
	char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;
	int rc = text && printf("%s\n", text) >= 0 && fflush(stdout) == 0 ? 0 : -1;
	free(text);
	json_decref(out);
	return rc;
}

/* The agent's "do not run this" answer.  Claude Code, Codex and Gemini CLI
 * block on exit 2 and hand stderr to the model (Codex only when stderr is not
 * empty).  Cursor gets permission "deny" as JSON with exit 0: a Cursor that
 * treats a non-zero exit as a failed hook runs the command. */
int hook_deny(enum hook_agent a, const char *why)
{
	char *msg = NULL;
	if (asprintf(
		&msg,
		"sharness-client hook %s: %s; the command was blocked instead of running outside the sandbox",
		agent_name[a], why) < 0)
		msg = NULL;
	fprintf(stderr, "%s\n", msg ? msg : why);
	int rc = 2;
	if (a == HOOK_CURSOR) {
		/* The reason may quote input cut inside a character: as JSON it
		 * must be UTF-8, and without JSON Cursor may run the command. */
		if (msg)
			buf_utf8_clean(msg, strlen(msg));
		json_t *out = msg ? json_pack("{s:b, s:s, s:s, s:s}", "continue", 1, "permission", "deny",
					      "user_message", msg, "agent_message", msg)
				  : NULL;
		rc = out ? reply(out)
			 : printf("{\"continue\":true,\"permission\":\"deny\",\"user_message\":\"sharness-client: "
				  "hook call refused\",\"agent_message\":\"sharness-client: hook call refused\"}\n") < 0 ||
				   fflush(stdout) != 0;
		rc = rc == 0 ? 0 : 2;
	}
	free(msg);
	return rc;
}

/* The login shell's name: /etc/passwd read as a file (no NSS: a static
 * binary's getpwuid would load the host's glibc modules), else $SHELL. */
static const char *login_shell(char *out, size_t n)
{
	struct passwd *pw = NULL;
	FILE *f = fopen("/etc/passwd", "re");
	while (f && (pw = fgetpwent(f)) != NULL && pw->pw_uid != getuid())
		;
	const char *env = getenv("SHELL");
	snprintf(out, n, "%s", pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : env && *env ? env : "/bin/sh");
	if (f)
		fclose(f);
	const char *base = strrchr(out, '/');
	return base ? base + 1 : out;
}

/* Whether PowerShell can be run here: in $PATH or where Microsoft's
 * packages put it. */
static bool have_pwsh(void)
{
	static const char *const fixed[] = {"/usr/bin/pwsh", "/usr/local/bin/pwsh", "/opt/microsoft/powershell/7/pwsh",
					    "/snap/bin/pwsh"};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		if (access(fixed[i], X_OK) == 0)
			return true;
	return hook_on_path("pwsh") || hook_on_path("powershell");
}

bool hook_on_path(const char *name)
{
	const char *path = getenv("PATH");
	char dirs[4096], cand[PATH_MAX], *save = NULL;
	snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if (snprintf(cand, sizeof cand, "%s/%s", d, name) < (int)sizeof cand &&
		    access(cand, X_OK) == 0)
			return true;
	return false;
}

/* Codex and Cursor may run a command in a shell the rewrite's quotes ('…',
 * ' as '\'') do not hold in: PowerShell ends a '…' at the first ', csh and
 * tcsh end it at a newline, and what follows runs on the host (reviews
 * s36).  NULL, or why not.
 *   Codex runs the login shell when it is bash, zsh, sh, pwsh or
 *   powershell, else bash; and its exec_command lets the model name the
 *   shell per call, which the hook does not see: so PowerShell installed
 *   at all is enough.
 *   Cursor runs the user's own shell: only those whose quoting holds. */
static const char *unquotable_shell(enum hook_agent a, char *why, size_t n)
{
	static const char *const posix[] = {"sh", "dash", "bash", "rbash", "zsh", "ksh", "ksh93", "mksh", "pdksh",
					    "ash", "busybox", "fish"};
	char shell[256];
	const char *base = login_shell(shell, sizeof shell);
	if (a == HOOK_CODEX) {
		if (strcmp(base, "pwsh") == 0 || strcmp(base, "powershell") == 0 || have_pwsh()) {
			snprintf(why, n,
				 "PowerShell is installed (or the login shell), and Codex may run a command in it (its "
				 "exec_command takes a shell), where the routed command's quotes do not hold: use Codex "
				 "through sharness's MCP server instead, or on a machine without pwsh");
			return why;
		}
		return NULL;
	}
	if (a != HOOK_CURSOR)
		return NULL; /* Claude Code's Bash and Gemini CLI's shell tool run bash or zsh */
	for (size_t i = 0; i < sizeof posix / sizeof *posix; i++)
		if (strcmp(base, posix[i]) == 0)
			return NULL;
	snprintf(why, n,
		 "the login shell %.200s is not one whose quoting the routed command holds in (sh, bash, zsh, ksh, "
		 "fish): cursor would run it there; make one of them the login shell",
		 shell);
	return why;
}

/* The agent's allow (or, with --ask, ask) for a shell call, with `ui` (taken)
 * as the new tool input, or none (NULL: the call is already routed). */
static json_t *decision(const struct hook_opts *o, json_t *ui)
{
	char reason[200];
	snprintf(reason, sizeof reason, "routed through sharnessd (profile %s)", o->profile ? o->profile : "default");
	switch (o->agent) {
	case HOOK_CLAUDE:
	case HOOK_CODEX: {
		json_t *hso = json_pack("{s:s}", "hookEventName", "PreToolUse");
		/* Codex accepts updatedInput only together with "allow", and its
		 * "allow" does not skip its own approval flow.  Claude Code
		 * documents updatedInput with "allow" or "ask": without a decision
		 * some builds drop the rewrite and run the original (review s36). */
		json_object_set_new(hso, "permissionDecision",
				    json_string(o->ask && o->agent == HOOK_CLAUDE ? "ask" : "allow"));
		json_object_set_new(hso, "permissionDecisionReason", json_string(reason));
		if (ui)
			json_object_set_new(hso, "updatedInput", ui);
		return json_pack("{s:o}", "hookSpecificOutput", hso);
	}
	case HOOK_GEMINI:
		/* Gemini merges tool_input over the model's arguments. */
		return ui ? json_pack("{s:s, s:s, s:{s:s, s:o}}", "decision", o->ask ? "ask" : "allow", "reason", reason,
				      "hookSpecificOutput", "hookEventName", "BeforeTool", "tool_input", ui)
			  : json_pack("{s:s, s:s}", "decision", o->ask ? "ask" : "allow", "reason", reason);
	case HOOK_CURSOR:
		return ui ? json_pack("{s:b, s:s, s:o}", "continue", 1, "permission", o->ask ? "ask" : "allow",
				      "updated_input", ui)
			  : json_pack("{s:b, s:s}", "continue", 1, "permission", o->ask ? "ask" : "allow");
	}
	json_decref(ui);
	return NULL;
}

int hook_main(const struct hook_opts *o)
{
	struct buf in = {.max = HOOK_MAX_INPUT};
	char self[PATH_MAX], why[400];
	json_error_t je;
	json_t *root = NULL, *out = NULL;
	char *routed = NULL;
	struct call c;
	int rc;

	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0) {
		rc = hook_deny(o->agent, "cannot find this binary's own path in /proc/self/exe");
		goto done;
	}
	self[sl] = '\0';
	if (buf_read_fd(&in, 0) < 0) {
		snprintf(why, sizeof why, "cannot read the hook input: %s", strerror(errno));
		rc = hook_deny(o->agent, why);
		goto done;
	}
	root = json_loadb(in.data ? in.data : "", in.len, 0, &je);
	if (!json_is_object(root)) {
		snprintf(why, sizeof why, "the hook input is not a JSON object (%s)",
			 root ? "wrong type" : je.text);
		rc = hook_deny(o->agent, why);
		goto done;
	}
	int kind = parse_call(o->agent, root, &c, why, sizeof why);
	if (kind == CALL_BAD) {
		rc = hook_deny(o->agent, why);
		goto done;
	}
	if (kind == CALL_OTHER) {
		rc = 0; /* another tool of this agent: no output, no change */
		goto done;
	}
	/* before the routed check: the routed text itself would not hold */
	if (unquotable_shell(o->agent, why, sizeof why)) {
		rc = hook_deny(o->agent, why);
		goto done;
	}
	/* Deny with the routed form instead of rewriting (the model sends that
	 * next): no answer of ours can then let the original run.  Asked for,
	 * and hook claude's default: Claude Code builds have dropped
	 * updatedInput and kept the allow, which skips the prompt in every mode
	 * (reviews s36; docs/agents.md).  --rewrite: one turn, on trust. */
	bool deny_unrouted = o->deny_unrouted || (o->agent == HOOK_CLAUDE && !o->rewrite);
	if (hook_is_routed(self, c.cmd, c.len, o)) {
		rc = 0;	   /* idempotent: already goes through the client */
		if (c.top) /* Cursor asks again before the rewritten command runs */
			rc = reply(json_pack("{s:b, s:s}", "continue", 1, "permission",
					     o->ask ? "ask" : "allow")) == 0
				 ? 0
				 : hook_deny(o->agent, "cannot write the hook reply");
		else if (deny_unrouted) /* what a rewrite would have decided, with nothing to drop */
			rc = reply(decision(o, NULL)) == 0 ? 0 : hook_deny(o->agent, "cannot write the hook reply");
		goto done;
	}
	long timeout_s = 0;
	json_t *jt = c.ti && (o->agent == HOOK_CLAUDE || o->agent == HOOK_CODEX)
			 ? json_object_get(c.ti, "timeout")
			 : NULL;
	if (json_is_number(jt) && json_number_value(jt) > 0) {
		double ms = json_number_value(jt);
		/* rounded up; past run's limit, that limit */
		timeout_s =
		    ms >= RUN_TIMEOUT_MAX_S * 1000.0 ? RUN_TIMEOUT_MAX_S : (long)((ms + 999.0) / 1000.0);
	}
	routed = hook_rewrite(self, c.cmd, c.len, timeout_s, o);
	if (!routed) {
		rc = hook_deny(o->agent, "out of memory");
		goto done;
	}
	if (c.top || deny_unrouted) {
		/* beforeShellExecution can allow, ask or deny, not rewrite: deny,
		 * and hand the model the command that goes through the sandbox. */
		char *msg = NULL;
		if (asprintf(&msg, "%s; run it as: %s",
			     c.top ? "beforeShellExecution cannot rewrite a command"
				   : "this hook routes a command only as the model sends it",
			     routed) < 0)
			msg = NULL;
		rc = hook_deny(o->agent, msg ? msg : "the command is not routed through sharnessd");
		free(msg);
		goto done;
	}
	/* updatedInput / updated_input replaces the whole tool_input in Claude
	 * Code: keep the siblings (description, timeout, run_in_background, ...). */
	json_t *ui = json_deep_copy(c.ti);
	/* json_string refuses text that is not UTF-8 (this binary's path or a
	 * flag): the reply would then allow the original command. */
	if (!ui || json_object_set_new(ui, "command", json_string(routed)) < 0) {
		json_decref(ui);
		rc = hook_deny(o->agent, "the rewritten command is not valid UTF-8 (this binary's path, or a "
					 "--url, --cert, --key, --ca or --profile value, has other bytes): install it "
					 "under a UTF-8 path");
		goto done;
	}
	out = decision(o, ui);
	rc = reply(out) == 0 ? 0 : hook_deny(o->agent, "cannot encode or write the hook reply");
	out = NULL;
done:
	free(routed);
	json_decref(out);
	json_decref(root);
	buf_free(&in);
	return rc;
}
