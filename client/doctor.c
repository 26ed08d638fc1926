/*
 * doctor.c - `sharness-client doctor` (see doctor.h).
 *
 * Where each agent keeps its hooks is docs/agents.md: Claude Code
 * ~/.claude/settings.json (and a project's .claude/settings*.json), Codex
 * ~/.codex/hooks.json or config.toml, Gemini CLI ~/.gemini/settings.json (and
 * a project's .gemini/settings.json), Cursor ~/.cursor/hooks.json (both
 * preToolUse and beforeShellExecution).  A hook that is not installed is a
 * note, not a failure: the person may not use that agent.  A hook that names
 * sharness-client by a path that does not exist, or the wrong agent, is a
 * failure: that agent then runs shell commands outside the sandbox or not at
 * all.
 *
 * Trust: the files are the person's own; they are parsed, never run.
 */
#include "doctor.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "api.h"
#include "hook.h"
#include "relay.h"
#include "tls.h"

#define EXPIRY_WARN_DAYS 30
#define HOOK_FILE_MAX	 (4u << 20)
#define CMDS_MAX	 32

struct doctor {
	int failed;
	char self[PATH_MAX]; /* this binary, for the fixes */
};

static void pass(struct doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pass(struct doctor *d, const char *fmt, ...)
{
	va_list ap;
	(void)d;
	fputs("✔ ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

static void fail(struct doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct doctor *d, const char *fmt, ...)
{
	va_list ap;
	d->failed = 1;
	fputs("✘ ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* ---- certificates ------------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rw, void *u)
{
	(void)buf, (void)size, (void)rw, (void)u;
	return 0;
}

static X509 *load_cert(const char *path, char *why, size_t n)
{
	BIO *b = BIO_new_file(path, "r");
	if (!b) {
		snprintf(why, n, "cannot read it (%s)", strerror(errno ? errno : EIO));
		return NULL;
	}
	X509 *x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL);
	BIO_free(b);
	if (!x)
		snprintf(why, n, "it holds no PEM certificate");
	return x;
}

static void fmt_time(const ASN1_TIME *t, char *out, size_t n)
{
	struct tm tm;
	if (!t || ASN1_TIME_to_tm(t, &tm) != 1 || strftime(out, n, "%Y-%m-%d %H:%M UTC", &tm) == 0)
		snprintf(out, n, "(unknown)");
}

static void ou_of(X509 *x, char *out, size_t n)
{
	out[0] = '\0';
	X509_NAME *name = X509_get_subject_name(x);
	int i = X509_NAME_get_index_by_NID(name, NID_organizationalUnitName, -1);
	ASN1_STRING *s = i >= 0 ? X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)) : NULL;
	if (s)
		snprintf(out, n, "%.*s", ASN1_STRING_length(s), (const char *)ASN1_STRING_get0_data(s));
}

static void check_certs(struct doctor *d, const struct conf *c)
{
	char why[128], when[64], ou[64];
	X509 *ca = load_cert(c->ca, why, sizeof(why));
	if (!ca)
		fail(d, "CA %s: %s: set SHARNESS_CA (or --ca) to the daemon's ca.pem", c->ca, why);
	else
		pass(d, "CA %s readable", c->ca);
	X509 *cert = load_cert(c->cert, why, sizeof(why));
	if (!cert)
		fail(d,
		     "certificate %s: %s: set SHARNESS_CERT (or --cert) to your client certificate (the "
		     "operator "
		     "issues it: certs/mkcerts DIR --client NAME ROLE)",
		     c->cert, why);
	EVP_PKEY *key = NULL;
	struct stat st;
	BIO *b = BIO_new_file(c->key, "r");
	if (!b) {
		fail(
		    d,
		    "key %s: cannot read it (%s): set SHARNESS_KEY (or --key) to the key of your certificate",
		    c->key, strerror(errno ? errno : EIO));
	} else {
		key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
		BIO_free(b);
		if (!key)
			fail(d,
			     "key %s holds no PEM private key (or it is encrypted): use the unencrypted key",
			     c->key);
		else if (stat(c->key, &st) == 0 && (st.st_mode & 077))
			fail(d, "key %s is readable by others (mode %04o): chmod 600 %s", c->key,
			     (unsigned)(st.st_mode & 07777), c->key);
		else
			pass(d, "key %s readable (mode 0600 or stricter)", c->key);
	}
	if (cert) {
		ou_of(cert, ou, sizeof(ou));
		if (key && X509_check_private_key(cert, key) != 1)
			fail(d,
			     "key %s does not belong to certificate %s: point SHARNESS_KEY at that "
			     "certificate's key",
			     c->key, c->cert);
		if (ca && X509_verify(cert, X509_get0_pubkey(ca)) != 1)
			fail(d,
			     "certificate %s is not signed by the CA %s: ask for a certificate from that CA, "
			     "or set "
			     "SHARNESS_CA to the CA that signed it",
			     c->cert, c->ca);
		if (!ou[0])
			fail(d,
			     "certificate %s has no role (OU): ask for one with the role app, orchestrator "
			     "or person",
			     c->cert);
		if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
			fmt_time(X509_get0_notBefore(cert), when, sizeof(when));
			fail(d,
			     "certificate %s is not valid before %s: fix the clock or ask for a new "
			     "certificate",
			     c->cert, when);
		} else if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
			fmt_time(X509_get0_notAfter(cert), when, sizeof(when));
			fail(d,
			     "certificate %s expired on %s: ask for a new one (certs/mkcerts DIR --client "
			     "NAME %s --force)",
			     c->cert, when, ou[0] ? ou : "ROLE");
		} else {
			int days = 0, secs = 0;
			fmt_time(X509_get0_notAfter(cert), when, sizeof(when));
			ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(cert));
			pass(d, "certificate %s: role %s, valid until %s (%d days%s)", c->cert,
			     ou[0] ? ou : "(none)", when, days,
			     days < EXPIRY_WARN_DAYS ? "; renew it soon" : "");
		}
	}
	EVP_PKEY_free(key);
	X509_free(cert);
	X509_free(ca);
}

static void check_daemon(struct doctor *d, const struct conf *c)
{
	char err[1024];
	json_t *r = NULL;
	int status = 0;
	if (api_call(c, "GET", "/v0/policy", NULL, &r, &status, err, sizeof(err)) < 0) {
		fail(d,
		     "sharnessd at %s: %s: is it running (sudo sharnessd --doctor)? Are SHARNESS_URL, "
		     "SHARNESS_CA and "
		     "the certificate the daemon's?",
		     c->url, err);
		return;
	}
	json_t *k = json_object_get(r, "kernel");
	json_t *ll = json_object_get(k, "landlock");
	const char *ver = json_string_value(json_object_get(r, "version"));
	const char *hash = json_string_value(json_object_get(r, "policy_hash"));
	const char *cg = json_string_value(json_object_get(k, "cgroup"));
	char profiles[256] = "";
	const char *name;
	json_t *v;
	json_object_foreach(json_object_get(r, "profiles"), name, v)
	{
		size_t n = strlen(profiles);
		snprintf(profiles + n, sizeof(profiles) - n, "%s%s", n ? ", " : "", name);
	}
	pass(d,
	     "sharnessd at %s answers GET /v0/policy over mutual TLS: version %s, policy %s, Landlock ABI "
	     "%lld, "
	     "cgroups %s, profiles %s",
	     c->url, ver ? ver : "(not reported)", hash ? hash : "?",
	     (long long)json_integer_value(json_object_get(ll, "abi")), cg ? cg : "?",
	     profiles[0] ? profiles : "none");
	json_decref(r);
}

/* ---- the relay ---------------------------------------------------------- */

/* A note either way: without a relay every fresh client (each hook call)
 * sets up its own TLS, slower but as safe.  Asking costs the relay one
 * ready connection (the client closes it unused). */
static void check_relay(struct doctor *d, const struct conf *c)
{
	const char *v = getenv("SHARNESS_RELAY");
	int start;
	if (v && *v && strcmp(v, "on") != 0) {
		pass(d, "relay: off (SHARNESS_RELAY=%s): each fresh client sets up its own TLS", v);
		return;
	}
	int fd = relay_connect(c, &start);
	if (fd >= 0) {
		close(fd);
		pass(d, "relay: one serves this identity: fresh clients set up no TLS of their own");
		return;
	}
	pass(d,
	     "relay: none serves this identity: each fresh client (each hook call) sets up its own TLS; "
	     "'systemctl --user enable --now sharness-relay' keeps one (docs/client.md)");
}

/* ---- hooks -------------------------------------------------------------- */

struct hook_cmd {
	char event[48];
	char cmd[1024];
};

struct agent {
	const char *name, *label;
	const char *files[3];  /* relative to $HOME, or ./ for a project's */
	const char *events[2]; /* the events the hook must be installed for */
};

static const struct agent agents[] = {
    {"claude",
     "Claude Code",
     {"~/.claude/settings.json", "./.claude/settings.json", "./.claude/settings.local.json"},
     {"PreToolUse", NULL}},
    {"codex", "Codex CLI", {"~/.codex/hooks.json", "~/.codex/config.toml", NULL}, {"PreToolUse", NULL}},
    {"gemini",
     "Gemini CLI",
     {"~/.gemini/settings.json", "./.gemini/settings.json", NULL},
     {"BeforeTool", NULL}},
    {"cursor",
     "Cursor",
     {"~/.cursor/hooks.json", "./.cursor/hooks.json", NULL},
     {"preToolUse", "beforeShellExecution"}},
};

static void collect(json_t *j, const char *event, struct hook_cmd *out, size_t *n)
{
	const char *k;
	json_t *v;
	size_t i;
	if (json_is_object(j)) {
		json_object_foreach(j, k, v)
		{
			if (strcmp(k, "command") == 0 && json_is_string(v) &&
			    strstr(json_string_value(v), "sharness-client")) {
				if (*n < CMDS_MAX) {
					snprintf(out[*n].event, sizeof(out[*n].event), "%s", event);
					snprintf(out[*n].cmd, sizeof(out[*n].cmd), "%s",
						 json_string_value(v));
					(*n)++;
				}
			} else {
				collect(v, event, out, n);
			}
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) collect(v, event, out, n);
	}
}

/* config.toml: `command = "..."` lines naming sharness-client. */
static void collect_toml(const char *text, struct hook_cmd *out, size_t *n)
{
	const char *p = text;
	while (p && *p && *n < CMDS_MAX) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[1024];
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
		char *q1, *q2;
		if (strncmp(line + strspn(line, " \t"), "command", 7) == 0 &&
		    strstr(line, "sharness-client") && (q1 = strchr(line, '"')) &&
		    (q2 = strrchr(line, '"')) && q2 > q1) {
			*q2 = '\0';
			snprintf(out[*n].event, sizeof(out[*n].event), "PreToolUse");
			snprintf(out[*n].cmd, sizeof(out[*n].cmd), "%s", q1 + 1);
			(*n)++;
		}
		p = eol ? eol + 1 : NULL;
	}
}

/* Whether a Claude Code matcher selects the tool `tool`.  None, "" and "*"
 * select every tool; a list of names ("Bash", "Edit | Write") selects those;
 * anything else is a JavaScript regular expression, which is not compiled
 * here (a project's settings are the checkout's, and a pattern can take a
 * regex engine minutes).  `surely`: whether it surely does (a pattern or a
 * part of the name may not), else whether it may (a pattern may; so may a
 * part of the name, which Claude Code may match anywhere in it). */
static int selects(json_t *matcher, const char *tool, bool surely)
{
	const char *m = json_string_value(matcher);
	if (!m || !*m || strcmp(m, "*") == 0)
		return 1;
	if (m[strspn(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_| ")] != '\0')
		return !surely;
	for (const char *p = m; *p;) {
		p += strspn(p, " |");
		size_t n = strcspn(p, " |");
		char name[16];
		if (n && n <= strlen(tool) && (snprintf(name, sizeof(name), "%.*s", (int)n, p), strstr(tool, name)) &&
		    (!surely || n == strlen(tool)))
			return 1;
		p += n;
	}
	return 0;
}

/* Claude Code's tools that run a command (docs/agents.md): the hook
 * rewrites Bash and Monitor and denies PowerShell, so its matcher must
 * select all three. */
static int matches_shell(json_t *matcher)
{
	return selects(matcher, "Bash", false) || selects(matcher, "Monitor", false);
}

/* Claude Code: another PreToolUse hook that runs for Bash, besides ours.
 * Some builds then drop a hook's updatedInput and keep its
 * permissionDecision, so our "allow" would let the original command run
 * unsandboxed (docs/agents.md).  Fills `other` with its matcher and
 * command, sets `ask` when our hook sends no allow with a rewrite (it
 * asks, or it denies unrouted calls, hook claude's default), and
 * `narrow` when our hook's matcher leaves out one of the shell tools. */
static void claude_other_bash_hook(json_t *root, char *other, size_t n, int *ask, int *narrow)
{
	size_t i, k;
	json_t *group, *h;
	json_array_foreach(json_object_get(json_object_get(root, "hooks"), "PreToolUse"), i, group)
	{
		json_t *m = json_object_get(group, "matcher");
		if (!matches_shell(m))
			continue;
		json_array_foreach(json_object_get(group, "hooks"), k, h)
		{
			const char *cmd = json_string_value(json_object_get(h, "command"));
			if (!cmd)
				continue;
			if (strstr(cmd, "sharness-client")) {
				/* only a --rewrite hook sends an updatedInput to drop */
				*ask |= strstr(cmd, "--ask") != NULL || strstr(cmd, "--rewrite") == NULL;
				*narrow |= !selects(m, "Bash", true) || !selects(m, "Monitor", true) ||
					   !selects(m, "PowerShell", true);
			} else if (!other[0])
				snprintf(other, n, "matcher '%.60s': '%.150s'",
				         json_string_value(json_object_get(group, "matcher")) ?: "", cmd);
		}
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = malloc(HOOK_FILE_MAX + 1);
	size_t n = buf ? fread(buf, 1, HOOK_FILE_MAX, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* The program a hook command runs, resolved like a shell without quoting
 * tricks: 0 and the path when it exists and is executable. */
static int hook_program(const char *cmd, char *prog, size_t n)
{
	const char *p = cmd + strspn(cmd, " \t");
	char q = (*p == '"' || *p == '\'') ? *p++ : 0;
	size_t len = q ? strcspn(p, q == '"' ? "\"" : "'") : strcspn(p, " \t");
	snprintf(prog, n, "%.*s", (int)len, p);
	if (strchr(prog, '/'))
		return access(prog, X_OK);
	return hook_on_path(prog) ? 0 : -1;
}

static bool already_read(const struct stat *before, size_t n, const struct stat *st)
{
	for (size_t i = 0; i < n; i++)
		if (before[i].st_dev == st->st_dev && before[i].st_ino == st->st_ino)
			return true;
	return false;
}

static void check_agent(struct doctor *d, const struct agent *a)
{
	const char *home = getenv("HOME");
	struct hook_cmd cmds[CMDS_MAX];
	char path[PATH_MAX], found_in[PATH_MAX * 2] = "", other[256] = "", other_in[PATH_MAX] = "";
	int ask = 0, narrow = 0;
	size_t n = 0;
	int bad = 0;

	struct stat read_before[3];
	size_t n_read = 0;
	for (size_t f = 0; f < 3 && a->files[f]; f++) {
		if (a->files[f][0] == '~') {
			if (!home || !*home)
				continue;
			snprintf(path, sizeof(path), "%.2000s%s", home, a->files[f] + 1);
		} else {
			snprintf(path, sizeof(path), "%s", a->files[f] + 2);
		}
		/* In $HOME a project's file is the user's: read once. */
		struct stat st;
		if (stat(path, &st) < 0 || already_read(read_before, n_read, &st))
			continue;
		read_before[n_read++] = st;
		char *text = slurp(path);
		if (!text)
			continue;
		size_t before = n;
		if (strstr(path, ".toml")) {
			collect_toml(text, cmds, &n);
		} else {
			json_error_t je;
			json_t *root = json_loads(text, 0, &je);
			if (!root && strstr(text, "sharness-client")) {
				fail(d,
				     "%s hook: %s is not valid JSON (line %d: %s): fix the file, then see "
				     "docs/agents.md",
				     a->label, path, je.line, je.text);
				bad = 1;
			}
			const char *ev;
			json_t *v;
			json_object_foreach(json_object_get(root, "hooks"), ev, v) collect(v, ev, cmds, &n);
			if (strcmp(a->name, "claude") == 0) { /* every file: our --ask may be in another */
				int had = other[0] != '\0';
				claude_other_bash_hook(root, other, sizeof(other), &ask, &narrow);
				if (!had && other[0])
					snprintf(other_in, sizeof(other_in), "%s", path);
			}
			json_decref(root);
		}
		free(text);
		if (n > before) {
			size_t l = strlen(found_in);
			snprintf(found_in + l, sizeof(found_in) - l, "%s%s", l ? ", " : "", path);
		}
	}
	if (n == 0) {
		if (!bad)
			pass(d, "%s hook: not installed (see docs/agents.md)", a->label);
		return;
	}
	int have[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		char prog[PATH_MAX], want[32];
		const char *h = strstr(cmds[i].cmd, " hook ");
		if (hook_program(cmds[i].cmd, prog, sizeof(prog)) < 0) {
			fail(d,
			     "%s hook (%s, %s) runs %s, which does not exist or is not executable: change "
			     "the command to "
			     "'%s hook %s'",
			     a->label, found_in, cmds[i].event, prog, d->self, a->name);
			bad = 1;
			continue;
		}
		if (!h)
			continue; /* sharness-client mcp or run: not a hook */
		snprintf(want, sizeof(want), "%s", h + 6);
		want[strcspn(want, " \t\"'")] = '\0';
		if (strcmp(want, a->name) != 0) {
			fail(d,
			     "%s hook (%s, %s) runs 'hook %s', the hook of another agent: change it to 'hook "
			     "%s'",
			     a->label, found_in, cmds[i].event, want, a->name);
			bad = 1;
			continue;
		}
		for (int e = 0; e < 2; e++)
			if (a->events[e] && strcmp(cmds[i].event, a->events[e]) == 0)
				have[e] = 1;
	}
	if (bad)
		return;
	if (!have[0] || (a->events[1] && !have[1])) {
		const char *missing = !have[0] ? a->events[0] : a->events[1];
		fail(d, "%s hook (%s) is not installed for the %s event: add it there (docs/agents.md)",
		     a->label, found_in, missing);
		return;
	}
	if (narrow) {
		fail(d,
		     "%s hook (%s): its matcher leaves out Monitor or PowerShell, Claude Code's other tools "
		     "that run a command, which would then run on the host: make it "
		     "\"Bash|Monitor|PowerShell\" (docs/agents.md)",
		     a->label, found_in);
		return;
	}
	if (other[0] && !ask) {
		fail(d,
		     "%s hook (%s): another PreToolUse hook may run for Bash too (%s, in %s); Claude Code "
		     "builds that then drop a hook's updatedInput keep sharness's allow, so the agent's "
		     "original command would run unsandboxed: drop --rewrite from sharness's hook (it then "
		     "denies a call with the command to send instead), remove or narrow that hook's matcher, "
		     "or add --ask to sharness's ('%s hook claude --ask') so that such a command is asked about",
		     a->label, found_in, other, other_in, d->self);
		return;
	}
	pass(d, "%s hook installed (%s)", a->label, found_in);
}

int doctor_run(const struct conf *c)
{
	struct doctor d = {0};
	tls_lib_init(); /* it parses the certificates itself (tls.h) */
	ssize_t n = readlink("/proc/self/exe", d.self, sizeof(d.self) - 1);
	if (n <= 0)
		snprintf(d.self, sizeof(d.self), "sharness-client");
	else
		d.self[n] = '\0';
	setvbuf(stdout, NULL, _IOLBF, 0);
	pass(&d, "URL %s", c->url);
	check_certs(&d, c);
	check_daemon(&d, c);
	check_relay(&d, c);
	for (size_t i = 0; i < sizeof(agents) / sizeof(agents[0]); i++)
		check_agent(&d, &agents[i]);
	return d.failed;
}
