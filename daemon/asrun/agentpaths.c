/*
 * agentpaths.c - the strings an AI agent's or editor's project
 * configuration runs (see agentpaths.h), read for gitpaths.c.
 *
 * The files, at the top of a tree (where the person starts the agent or
 * opens the editor: the workspace's top and each repository's):
 *
 *   Claude Code   .claude/settings.json, .claude/settings.local.json, .mcp.json
 *   Cursor        .cursor/hooks.json, .cursor/mcp.json
 *   Gemini CLI    .gemini/settings.json
 *   Codex         .codex/config.toml, .codex/hooks.json
 *   VS Code       .vscode/settings.json, tasks.json, launch.json, mcp.json
 *   others        .zed/settings.json, .zed/tasks.json, .roo/mcp.json,
 *                 .kiro/settings/mcp.json, .amazonq/mcp.json, opencode.json,
 *                 opencode.jsonc, .continue/config.json, .continue/config.yaml,
 *                 .aider.conf.yml
 *
 * Which strings: every string value whose key, or the key of an object or
 * list it lies in, names a command or what is handed to one: a
 * dot-separated part (VS Code's keys are dotted) ending in `command`, `cmd`,
 * `args`, `argv`, `env`, `helper`, `refresh`, `export`, `notify`, `shell`
 * or `binary`, without case.  So a hook's `command`, Claude Code's
 * `statusLine.command` and `apiKeyHelper`, an MCP server's `command`,
 * `args` and `env` (NODE_OPTIONS with `--require ./x.js`), a task's
 * `command`, a terminal's `env`, aider's `lint-cmd`, Codex's `notify`,
 * Zed's `binary` of a language server.  Inside those, a key exactly `path`
 * names the executable itself (Zed's `command.path`, `binary.path`), and
 * one exactly `PATH`, `LD_LIBRARY_PATH` or `GCONV_PATH` the directories a
 * bare command name or a library is found in: each directory is kept
 * whole (review s37 fixes M1; but not those a launch sets: `launched`
 * below).  Neither is kept where
 * the run's own installs write (`.venv`, `venv`, `node_modules`, `.tox`):
 * `python -m venv` and `npm install` would stop in the sandbox, and what
 * a tool there loads is the project's environment anyway, as a `.pth`
 * file is.
 *
 * Not taken: any other key whose last part ends in `path` or `paths`, nor
 * what lies in it (PYTHONPATH, NODE_PATH, `python.defaultInterpreterPath`,
 * `eslint.nodePath`): these name where a tool finds its modules, which is
 * the project's own source or its installs, as a command's own imports
 * are (agentpaths.h: only what the configuration names is kept).  Nor a
 * launch's `program`, which the person runs by a deliberate act (a build's
 * output, written by runs), nor a permission rule (`Edit(./src/a.ts)`):
 * what the agent may touch.  A PATH set inside a command's words
 * (`PATH=./bin:$PATH lint`) is gitpaths.c's to find.
 */
#include "agentpaths.h"
#include "fdpath.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_BYTES_MAX (1 << 20)
#define NEST_MAX	 64
#define TOO_DEEP	 "an AI agent's or editor's project configuration is nested deeper than the file actor reads"

/* `launched`: what the file sets is for a program the person launches by
 * a deliberate act (a launch's `program`, not kept), so its PATH-like lists
 * are not kept either: they would close a build's output (`target/debug`,
 * `build/lib`) and keep nothing the run could not change anyway. */
static const struct {
	const char *file;
	enum agentpaths_syntax syntax;
	bool launched;
} files[] = {
    {".claude/settings.json", AGENTPATHS_JSON, false},
    {".claude/settings.local.json", AGENTPATHS_JSON, false},
    {".mcp.json", AGENTPATHS_JSON, false},
    {".cursor/hooks.json", AGENTPATHS_JSON, false},
    {".cursor/mcp.json", AGENTPATHS_JSON, false},
    {".gemini/settings.json", AGENTPATHS_JSON, false},
    {".codex/config.toml", AGENTPATHS_TOML, false},
    {".codex/hooks.json", AGENTPATHS_JSON, false},
    {".vscode/settings.json", AGENTPATHS_JSON, false},
    {".vscode/tasks.json", AGENTPATHS_JSON, false},
    {".vscode/launch.json", AGENTPATHS_JSON, true},
    {".vscode/mcp.json", AGENTPATHS_JSON, false},
    {".zed/settings.json", AGENTPATHS_JSON, false},
    {".zed/tasks.json", AGENTPATHS_JSON, false},
    {".roo/mcp.json", AGENTPATHS_JSON, false},
    {".kiro/settings/mcp.json", AGENTPATHS_JSON, false},
    {".amazonq/mcp.json", AGENTPATHS_JSON, false},
    {"opencode.json", AGENTPATHS_JSON, false},
    {"opencode.jsonc", AGENTPATHS_JSON, false},
    {".continue/config.json", AGENTPATHS_JSON, false},
    {".continue/config.yaml", AGENTPATHS_YAML, false},
    {".aider.conf.yml", AGENTPATHS_YAML, false},
};

static const char *const run_suffixes[] = {"command", "cmd",    "args",   "argv",  "env",   "helper",
					   "refresh", "export", "notify", "shell", "binary"};

/* How a value is taken: not, as a command's words, as the executable a
 * command names (Zed's `command.path`, `binary.path`), or as a PATH (its
 * directories, each kept whole: a bare command name is found there). */
enum take { TAKE_NONE, TAKE_WORDS, TAKE_EXE, TAKE_DIRS };

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

static bool is_run_part(const char *part, size_t n)
{
	for (size_t i = 0; i < sizeof(run_suffixes) / sizeof(run_suffixes[0]); i++)
		if (ends_with(part, n, run_suffixes[i]))
			return true;
	return false;
}

bool agentpaths_is_dir_list(const char *name, size_t len)
{
	static const char *const lists[] = {"PATH", "LD_LIBRARY_PATH", "GCONV_PATH"};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (len == strlen(lists[i]) && memcmp(name, lists[i], len) == 0)
			return true;
	return false;
}

/* How the value of `key` is taken, inside a container taken or not: each
 * dot-separated part but the last may make it inside one. */
static enum take key_take(const char *key, size_t len, bool inside)
{
	for (size_t start = 0; start < len;) {
		size_t n = 0;
		while (start + n < len && key[start + n] != '.')
			n++;
		const char *part = key + start;
		if (start + n < len) {
			inside |= is_run_part(part, n);
			start += n + 1;
			continue;
		}
		if (n == 4 && memcmp(part, "path", 4) == 0)
			return inside ? TAKE_EXE : TAKE_NONE;
		if (agentpaths_is_dir_list(part, n))
			return inside ? TAKE_DIRS : TAKE_NONE;
		if (ends_with(part, n, "path") || ends_with(part, n, "paths"))
			return TAKE_NONE;
		return inside || is_run_part(part, n) ? TAKE_WORDS : TAKE_NONE;
	}
	return inside ? TAKE_WORDS : TAKE_NONE;
}

/* Emit a string taken: `s` holds it, NUL-terminated. */
struct out {
	agentpaths_each *each;
	void *arg;
	const char *why;
	bool launched; /* files[].launched */
	char *s;       /* as long as the text: no string is longer */
};

/* Where the run's own installs write (`python -m venv`, `npm install`):
 * an executable or a PATH directory there is not kept, or those would
 * stop in the sandbox; what a tool there loads is the project's
 * environment anyway, as a `.pth` file is. */
static bool in_install_dir(const char *s, size_t n)
{
	static const char *const dirs[] = {".venv", "venv", "node_modules", ".tox"};
	for (size_t start = 0; start < n;) {
		size_t k = strcspn(s + start, "/");
		k = k < n - start ? k : n - start;
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
			if (k == strlen(dirs[i]) && memcmp(s + start, dirs[i], k) == 0)
				return true;
		start += k + 1;
	}
	return false;
}

/* VS Code's `${pathSeparator}` and `${/}`, in place, as what they are. */
static void vscode_separators(char *s)
{
	static const struct {
		const char *var, *is;
	} seps[] = {{"${pathSeparator}", ":"}, {"${/}", "/"}};
	for (size_t i = 0; i < sizeof(seps) / sizeof(seps[0]); i++)
		for (char *v; (v = strstr(s, seps[i].var));) {
			size_t n = strlen(seps[i].var);
			v[0] = seps[i].is[0];
			memmove(v + 1, v + n, strlen(v + n) + 1);
		}
}

void agentpaths_dirs(char *list, const char *why, agentpaths_each *each, void *arg)
{
	int braces = 0;
	vscode_separators(list);
	for (char *dir = list, *c = list;; c++) {
		braces += (*c == '{') - (*c == '}' && braces > 0);
		if (*c && (*c != ':' || braces))
			continue;
		bool last = !*c;
		*c = '\0';
		if (c > dir && !in_install_dir(dir, (size_t)(c - dir)))
			each(arg, dir, why, AGENTPATHS_DIRECTORY);
		if (last)
			return;
		dir = c + 1;
	}
}

/* `s` (o->s: changed), taken as `take` says. */
static void emit(struct out *o, char *s, enum take take)
{
	if (take == TAKE_WORDS || (take == TAKE_EXE && !in_install_dir(s, strlen(s))))
		o->each(o->arg, s, o->why, AGENTPATHS_COMMAND);
	else if (take == TAKE_DIRS && !o->launched)
		agentpaths_dirs(s, o->why, o->each, o->arg);
}

/* A code point as UTF-8 (a lone surrogate too: only its shape matters). */
static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	o[0] = (char)(0xe0 | (cp >> 12));
	o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[2] = (char)(0x80 | (cp & 0x3f));
	return 3;
}

/* A double-quoted string from after its quote, escapes as JSON's (TOML's
 * basic strings share them), into o->s; past its closing quote. */
static const char *quoted(const char *p, const char *end, struct out *o)
{
	size_t n = 0;
	while (p < end && *p != '"') {
		char ch = *p++;
		if (ch == '\\' && p < end) {
			ch = *p++;
			if (ch == 'u' && end - p >= 4) {
				char hex[5] = {p[0], p[1], p[2], p[3], 0};
				unsigned cp = (unsigned)strtoul(hex, NULL, 16);
				p += 4;
				if (cp)
					n += put_utf8(o->s + n, cp);
				continue;
			}
			ch = ch == 'n'	 ? '\n'
			     : ch == 't' ? '\t'
			     : ch == 'r' ? '\r'
			     : ch == 'b' ? '\b'
			     : ch == 'f' ? '\f'
					 : ch;
		}
		if (ch)
			o->s[n++] = ch;
	}
	o->s[n] = '\0';
	return p < end ? p + 1 : p;
}

static const char *json_blank(const char *p, const char *end)
{
	while (p < end) {
		if (isspace((unsigned char)*p))
			p++;
		else if (*p == '/' && p + 1 < end && p[1] == '/')
			while (p < end && *p != '\n')
				p++;
		else if (*p == '/' && p + 1 < end && p[1] == '*') {
			const char *close = NULL;
			for (const char *q = p + 2; q + 1 < end && !close; q++)
				if (q[0] == '*' && q[1] == '/')
					close = q + 2;
			p = close ? close : end;
		} else
			break;
	}
	return p;
}

/* JSON as VS Code reads it too: comments and trailing commas. */
static const char *scan_json(const char *p, const char *end, struct out *o)
{
	bool taken[NEST_MAX + 1] = {false};
	bool keyed = false; /* the next value has a key: `take` says how it is taken */
	enum take take = TAKE_NONE;
	int depth = 0;
	while ((p = json_blank(p, end)) < end) {
		char ch = *p++;
		if (!keyed)
			take = taken[depth] ? TAKE_WORDS : TAKE_NONE; /* a list's item */
		if (ch == '"') {
			char *s = o->s;
			p = quoted(p, end, o);
			const char *after = json_blank(p, end);
			if (after < end && *after == ':') { /* a key */
				take = key_take(s, strlen(s), taken[depth]);
				keyed = true;
				p = after + 1;
				continue;
			}
			emit(o, s, take);
		} else if (ch == '{' || ch == '[') {
			if (depth == NEST_MAX)
				return TOO_DEEP;
			taken[++depth] = take != TAKE_NONE;
		} else if (ch == '}' || ch == ']')
			depth -= depth > 0;
		keyed = false;
	}
	return NULL;
}

/* TOML (Codex): a table header's parts, a key's parts and inline tables
 * decide, as JSON's keys do. */
static const char *toml_blank(const char *p, const char *end, bool newlines)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '#' || (newlines && *p == '\n')))
		if (*p == '#')
			while (p < end && *p != '\n')
				p++;
		else
			p++;
	return p;
}

/* A key (bare or quoted parts, dotted) up to `stop`, and how its value is
 * taken inside a container taken or not. */
static const char *toml_key(const char *p, const char *end, const char *stop, bool inside, enum take *take)
{
	char key[256];
	size_t n = 0;
	while (p < end && !strchr(stop, *p) && *p != '\n') {
		const char *start = p;
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			for (start = p; p < end && *p != q && *p != '\n'; p++)
				;
		} else
			while (p < end && !strchr(stop, *p) && !strchr(".\"' \t\n", *p))
				p++;
		if (p > start && n + (size_t)(p - start) + 1 < sizeof(key)) {
			if (n)
				key[n++] = '.';
			memcpy(key + n, start, (size_t)(p - start));
			n += (size_t)(p - start);
		}
		p += p < end && (*p == '"' || *p == '\'' || *p == '.' || *p == ' ' || *p == '\t');
	}
	*take = key_take(key, n, inside);
	return p;
}

static const char *toml_value(const char *p, const char *end, enum take take, int depth, struct out *o,
			      const char **err);

/* `{ k = v, ... }` from after the brace. */
static const char *toml_inline(const char *p, const char *end, bool taken, int depth, struct out *o,
			       const char **err)
{
	while ((p = toml_blank(p, end, true)) < end && *p != '}') {
		enum take take;
		if (*p == ',') {
			p++;
			continue;
		}
		const char *next = toml_key(p, end, "=}", taken, &take);
		if (next == p || next >= end || *next != '=')
			return next == p ? next + 1 : next;
		p = toml_value(next + 1, end, take, depth + 1, o, err);
	}
	return p < end ? p + 1 : p;
}

static const char *toml_value(const char *p, const char *end, enum take take, int depth, struct out *o,
			      const char **err)
{
	bool taken = take != TAKE_NONE;
	if (depth > NEST_MAX) {
		*err = TOO_DEEP;
		return end;
	}
	p = toml_blank(p, end, depth > 0);
	if (p >= end)
		return p;
	if (*p == '"' || *p == '\'') {
		char q = *p;
		bool triple = end - p >= 3 && p[1] == q && p[2] == q;
		size_t n = 0;
		p += triple ? 3 : 1;
		if (q == '"' && !triple)
			p = quoted(p, end, o);
		else {
			for (; p < end &&
			       !(triple ? end - p >= 3 && p[0] == q && p[1] == q && p[2] == q : *p == q);
			     p++)
				o->s[n++] = *p; /* literal, or multi-line: escapes left as they are */
			o->s[n] = '\0';
			p = p < end ? p + (triple ? 3 : 1) : p;
		}
		emit(o, o->s, take);
		return p;
	}
	if (*p == '[') {
		p++;
		while ((p = toml_blank(p, end, true)) < end && *p != ']') {
			const char *next = *p == ',' ? p + 1 : toml_value(p, end, take, depth + 1, o, err);
			p = next > p ? next : p + 1; /* what is not TOML: on */
		}
		return p < end ? p + 1 : p;
	}
	if (*p == '{')
		return toml_inline(p + 1, end, taken, depth, o, err);
	while (p < end && !strchr(",]}\n#", *p)) /* a number, a date, true */
		p++;
	return p;
}

static const char *scan_toml(const char *p, const char *end, struct out *o)
{
	enum take table = TAKE_NONE;
	const char *err = NULL;
	while ((p = toml_blank(p, end, true)) < end && !err) {
		enum take take;
		if (*p == '[') { /* [table] or [[array of tables]] */
			p += 1 + (p + 1 < end && p[1] == '[');
			p = toml_key(p, end, "]", false, &table);
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		const char *next = toml_key(p, end, "=", table != TAKE_NONE, &take);
		if (next >= end || *next != '=') { /* not TOML: on to the next line */
			while (next < end && *next != '\n')
				next++;
			p = next;
			continue;
		}
		p = toml_value(next + 1, end, take, 0, o, &err);
	}
	return err;
}

/* YAML (aider, Continue) by lines and indentation: `key: value`, list
 * items, flow lists and block scalars, as far as these files use them. */
static void yaml_emit(const char *v, size_t n, struct out *o, enum take take)
{
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v++;
		n -= 2;
	}
	memcpy(o->s, v, n);
	o->s[n] = '\0';
	/* a flow list `[a, "./x"]`: its brackets, commas and quotes as blanks */
	if (n && o->s[0] == '[')
		for (char *c = o->s; *c; c++)
			if (strchr("[],\"'", *c))
				*c = ' ';
	if (n)
		emit(o, o->s, take);
}

static const char *scan_yaml(const char *p, const char *end, struct out *o)
{
	struct {
		size_t indent;
		enum take take;
	} stack[NEST_MAX];
	size_t depth = 0, block_indent = 0;
	bool in_block = false;
	enum take block_take = TAKE_NONE;
	while (p < end) {
		const char *line = p, *eol = memchr(p, '\n', (size_t)(end - p));
		eol = eol ? eol : end;
		p = eol + (eol < end);
		size_t indent = 0;
		while (line + indent < eol && line[indent] == ' ')
			indent++;
		const char *s = line + indent;
		if (s >= eol || *s == '#' || (s[0] == '\r' && s + 1 == eol))
			continue;
		if (in_block && indent > block_indent) { /* a `|` or `>` scalar's line */
			yaml_emit(s, (size_t)(eol - s), o, block_take);
			continue;
		}
		in_block = false;
		while (s < eol && *s == '-' && (s + 1 == eol || s[1] == ' ')) { /* list items: deeper */
			s += s + 1 < eol ? 2 : 1;
			while (s < eol && *s == ' ')
				s++;
			indent = (size_t)(s - line);
		}
		while (depth && stack[depth - 1].indent >= indent)
			depth--;
		enum take parent = depth ? stack[depth - 1].take : TAKE_NONE;
		/* `key: value`: the first ': ' (or ':' at the end) outside quotes;
		 * ` #` outside quotes starts a comment */
		const char *colon = NULL;
		char q = 0;
		for (const char *c = s; c < eol; c++)
			if (q)
				q = *c == q ? 0 : q;
			else if (*c == '"' || *c == '\'')
				q = *c;
			else if (*c == ':' && !colon && (c + 1 == eol || c[1] == ' ' || c[1] == '\r'))
				colon = c;
			else if (*c == '#' && c > s && c[-1] == ' ')
				eol = c;
		if (!colon) {
			if (s < eol) /* a list's item: taken as its key's value */
				yaml_emit(s, (size_t)(eol - s), o, parent);
			continue;
		}
		const char *key = s, *key_end = colon;
		if (key_end - key >= 2 && (*key == '"' || *key == '\'')) {
			key++;
			key_end--;
		}
		enum take take = key_take(key, (size_t)(key_end - key), parent != TAKE_NONE);
		const char *v = colon + 1;
		while (v < eol && (*v == ' ' || *v == '\r'))
			v++;
		if (v < eol && (*v == '|' || *v == '>')) {
			in_block = true;
			block_indent = indent;
			block_take = take;
		} else if (v < eol)
			yaml_emit(v, (size_t)(eol - v), o, take);
		if (depth == NEST_MAX)
			return TOO_DEEP;
		stack[depth].indent = indent;
		stack[depth++].take = take;
	}
	return NULL;
}

static const char *scan(const char *text, size_t len, enum agentpaths_syntax syntax, bool launched,
			const char *why, agentpaths_each *each, void *arg)
{
	struct out o = {.each = each, .arg = arg, .why = why, .launched = launched, .s = calloc(1, len + 1)};
	if (!o.s)
		return "the file actor ran out of memory reading an AI agent's project configuration";
	size_t bom = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	const char *p = text + bom, *end = text + len;
	const char *err = syntax == AGENTPATHS_JSON   ? scan_json(p, end, &o)
			  : syntax == AGENTPATHS_TOML ? scan_toml(p, end, &o)
						      : scan_yaml(p, end, &o);
	free(o.s);
	return err;
}

const char *agentpaths_scan(const char *text, size_t len, enum agentpaths_syntax syntax, const char *why,
			    agentpaths_each *each, void *arg)
{
	return scan(text, len, syntax, false, why, each, arg);
}

const char *agentpaths_read(const char *top, agentpaths_each *each, void *arg)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX], why[96];
		if (snprintf(path, sizeof(path), "%s/%s", top, files[i].file) >= (int)sizeof(path))
			return "an AI agent's project configuration lies at a path too long to read";
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			if ((errno != ENOENT && errno != ENOTDIR) || fdpath_behind_link(path))
				return "the file actor cannot read an AI agent's project configuration (it "
				       "may lie "
				       "outside the run's view)";
			continue;
		}
		struct stat st;
		char *buf = NULL;
		const char *err = NULL;
		ssize_t n = 0;
		if (fstat(fd, &st) < 0)
			err = "the file actor cannot read an AI agent's project configuration";
		else if (!S_ISREG(st.st_mode))
			; /* the agent reads nothing from a FIFO or a directory either */
		else if (st.st_size > CONFIG_BYTES_MAX)
			err = "an AI agent's project configuration is over 1 MiB: the file actor does not "
			      "read it";
		else if (!(buf = calloc(1, (size_t)st.st_size + 1)))
			err = "the file actor ran out of memory reading an AI agent's project configuration";
		else {
			for (ssize_t got = 1; got > 0 && n <= st.st_size; n += got)
				if ((got = read(fd, buf + n, (size_t)(st.st_size + 1 - n))) < 0)
					break;
			if (n != st.st_size)
				err = "the file actor cannot read an AI agent's project configuration";
			else {
				snprintf(why, sizeof(why), "the person's AI agent or editor runs it (%s)",
					 files[i].file);
				err = scan(buf, (size_t)n, files[i].syntax, files[i].launched, why, each, arg);
			}
		}
		free(buf);
		close(fd);
		if (err)
			return err;
	}
	return NULL;
}
