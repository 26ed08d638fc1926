/*
 * gitpaths.c - which paths of a workspace the person's git runs or reads
 * as config (see gitpaths.h), read by the run's file actor at its start.
 *
 * The actor already closes every .git and git directory; but a
 * repository's config may name files in the working tree, which a run
 * could write like any other file there, and the person's git would run
 * them outside the sandbox:
 *
 *   core.hooksPath          the hooks (husky's `.husky/_`): a commit runs them
 *   include.path,           a config file (`../.gitconfig`): it may set
 *   includeIf.*.path          core.fsmonitor, which `git status` runs, the
 *                             prompt's and the IDE's too
 *   commands                core.fsmonitor, filter drivers (git status and
 *                             add run them), diff textconv, pagers, editors,
 *                             credential helpers, `!` aliases: every word
 *                             with a slash is taken for a path
 *   symlinks in the git dir `.git/hooks/pre-commit -> ../../scripts/x`
 *
 * Relative paths are where git takes them: an include's from the file
 * that names it, the rest from the top of the working tree (the
 * workspace).  Each is kept as named and as it resolves now, so neither a
 * symlink the run plants on the way nor one that is there already leads
 * around it.
 *
 * Not read: what the run cannot see (the person's ~/.gitconfig and
 * /etc/gitconfig; a `~/` path; a repository above the workspace) and
 * nested repositories' configs (their .git is closed already, but not the
 * paths they name).  A config that cannot be read in full closes the
 * workspace instead (`closed`): fail closed, with the reason.
 *
 * Trust: the config is the person's; the working tree's files may be a
 * past run's.  Every size is bounded.
 */
#include "gitpaths.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_BYTES_MAX  (1 << 20)
#define INCLUDE_DEPTH_MAX 10 /* as git's */

struct ctx {
	struct gitpaths *g;
	int hostproc;
	const char *worktree;
};

/* base + "/" + rel (or rel alone, if absolute), with ".", ".." and
 * repeated slashes taken out as git's own normalisation does. */
static bool join_normal(char *out, size_t size, const char *base, const char *rel)
{
	char buf[2 * PATH_MAX];
	int len = rel[0] == '/' ? snprintf(buf, sizeof(buf), "%s", rel)
				: snprintf(buf, sizeof(buf), "%s/%s", base, rel);
	if (len < 0 || (size_t)len >= sizeof(buf) || size < 2)
		return false;
	size_t o = 1;
	out[0] = '/';
	for (const char *p = buf; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (o + n + 2 > size)
				return false;
			if (o > 1)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = '\0';
	return true;
}

/* Where `path` resolves now: its longest existing prefix, through every
 * symlink (as the kernel prints it), with the rest appended. */
static bool resolve(int hostproc, const char *path, char *out, size_t size)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof(prefix))
		return false;
	memcpy(prefix, path, len + 1);
	for (;;) {
		int fd = open(prefix[0] ? prefix : "/", O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			char link[32];
			snprintf(link, sizeof(link), "self/fd/%d", fd);
			ssize_t n = readlinkat(hostproc, link, out, size - 1);
			close(fd);
			if (n <= 0)
				return false;
			const char *rest = path + strlen(prefix);
			if (n == 1 && rest[0] == '/')
				n = 0; /* "/" + "/a" */
			size_t r = strlen(rest);
			if ((size_t)n + r >= size)
				return false;
			memcpy(out + n, rest, r + 1);
			return true;
		}
		char *slash = strrchr(prefix, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

static void close_all(struct ctx *c, const char *why)
{
	if (!c->g->closed)
		c->g->closed = why;
}

static void add(struct ctx *c, const char *path, const char *why)
{
	struct gitpaths *g = c->g;
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->path[i], path) == 0)
			return;
	if (g->n == GITPATHS_MAX) {
		close_all(
		    c, "the repository's git config names more paths in the tree than the file actor tracks");
		return;
	}
	if (!(g->path[g->n] = strdup(path)) || !(g->why[g->n] = strdup(why))) {
		close_all(c, "the file actor ran out of memory reading the repository's git config");
		return;
	}
	g->n++;
}

/* Keep `rel` (from `base`) as named and as it resolves now. */
static void keep(struct ctx *c, const char *base, const char *rel, const char *why)
{
	char named[PATH_MAX], real[PATH_MAX];
	if (rel[0] == '\0' || rel[0] == '~')
		return; /* a home directory: not in the run's view */
	if (!join_normal(named, sizeof(named), base, rel)) {
		close_all(c, "a path in the repository's git config is too long to check");
		return;
	}
	add(c, named, why);
	if (resolve(c->hostproc, named, real, sizeof(real)) && strcmp(real, named) != 0)
		add(c, real, why);
}

/* Every word of a command with a slash in it (quotes taken off): a path
 * the command runs or reads, from the top of the working tree. */
static void keep_words(struct ctx *c, const char *cmd, const char *why)
{
	char word[PATH_MAX];
	for (const char *p = cmd; *p;) {
		size_t n = 0;
		while (*p && strchr(" \t\n;|&<>()", *p))
			p++;
		while (*p && !strchr(" \t\n;|&<>()", *p)) {
			if (*p != '"' && *p != '\'' && n < sizeof(word) - 1)
				word[n++] = *p;
			p++;
		}
		word[n] = '\0';
		if (strchr(word, '/') && !strchr(word, '$') && !strstr(word, "://") && word[0] != '-')
			keep(c, c->worktree, word, why);
	}
}

/* Config keys whose value git runs as a command (the subsection, where
 * there is one, is any driver's or helper's name). */
static const struct {
	const char *section, *key, *name;
} commands[] = {
    {"core", "fsmonitor", "core.fsmonitor"},
    {"core", "pager", "core.pager"},
    {"core", "editor", "core.editor"},
    {"core", "sshcommand", "core.sshCommand"},
    {"core", "askpass", "core.askPass"},
    {"sequence", "editor", "sequence.editor"},
    {"filter", "clean", "a filter's clean"},
    {"filter", "smudge", "a filter's smudge"},
    {"filter", "process", "a filter's process"},
    {"diff", "textconv", "a diff textconv"},
    {"diff", "command", "a diff command"},
    {"merge", "driver", "a merge driver"},
    {"credential", "helper", "credential.helper"},
    {"gpg", "program", "gpg.program"},
};

static void read_config(struct ctx *c, const char *file, int depth);

/* One `section[.sub].key = value` of `file` (value NULL: a bare key). */
static void entry(struct ctx *c, const char *file, const char *section, const char *key, const char *value,
		  int depth)
{
	char why[128], dir[PATH_MAX];
	if (!value)
		return;
	if ((strcmp(section, "include") == 0 || strcmp(section, "includeif") == 0) &&
	    strcmp(key, "path") == 0) {
		/* Taken whatever its condition: the run could meet it. */
		char path[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", file);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = '\0';
		keep(c, dir, value, "the person's git reads it as config (include.path)");
		if (value[0] != '~' && join_normal(path, sizeof(path), dir, value))
			read_config(c, path, depth + 1);
		return;
	}
	if (strcmp(section, "core") == 0 && strcmp(key, "hookspath") == 0) {
		keep(c, c->worktree, value, "the person's git runs the hooks there (core.hooksPath)");
		return;
	}
	if (strcmp(section, "alias") == 0 && value[0] == '!') {
		keep_words(c, value + 1, "the person's git runs it (an alias)");
		return;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(section, commands[i].section) == 0 && strcmp(key, commands[i].key) == 0) {
			snprintf(why, sizeof(why), "the person's git runs it (%s)", commands[i].name);
			keep_words(c, value, why);
			return;
		}
}

/* `[section]`, `[section "sub"]` or `[section.sub]`, from after the '[':
 * the section, lower-cased.  NULL on a malformed header. */
static const char *header(const char *p, const char *end, char *section, size_t size)
{
	size_t k = 0;
	for (; p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '.'); p++)
		if (k < size - 1)
			section[k++] = (char)tolower((unsigned char)*p);
	section[k] = '\0';
	char *dot = strchr(section, '.');
	if (dot)
		*dot = '\0';
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '"') {
		for (p++; p < end && *p != '"' && *p != '\n'; p++)
			if (*p == '\\' && p + 1 < end)
				p++;
		if (p >= end || *p != '"')
			return NULL;
		p++;
	}
	return p < end && *p == ']' ? p + 1 : NULL;
}

/* A value, from after the '=', as git reads it: quotes, escapes, line
 * continuations, comments and outer blanks taken off, into `out` (as
 * large as the file).  NULL on a malformed value. */
static const char *value_of(const char *p, const char *end, char *out, size_t size)
{
	size_t o = 0, keep_to = 0;
	bool quoted = false, started = false;
	while (p < end) {
		char ch = *p++;
		if (ch == '\n') {
			if (quoted)
				return NULL;
			break;
		}
		if (!quoted && (ch == ';' || ch == '#')) {
			while (p < end && *p != '\n')
				p++;
			break;
		}
		if (!started && (ch == ' ' || ch == '\t' || ch == '\r'))
			continue;
		started = true;
		if (ch == '"') {
			quoted = !quoted;
			continue;
		}
		if (ch == '\\') {
			if (p >= end)
				return NULL;
			ch = *p++;
			if (ch == '\n')
				continue;
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'b' ? '\b' : ch;
			if (ch != '\n' && ch != '\t' && ch != '\b' && ch != '\\' && ch != '"')
				return NULL;
		} else if (!quoted && (ch == ' ' || ch == '\t' || ch == '\r')) {
			if (o >= size - 1)
				return NULL;
			out[o++] = ch; /* kept only if more follows */
			continue;
		}
		if (o >= size - 1)
			return NULL;
		out[o++] = ch;
		keep_to = o;
	}
	out[keep_to] = '\0';
	return p;
}

/* Git stops at a malformed config and runs nothing; so do we, keeping
 * what was found before it. */
static void parse(struct ctx *c, const char *file, const char *p, const char *end, char *value, int depth)
{
	char section[64] = "", key[64];
	while (p < end) {
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (*p == '#' || *p == ';') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (*p == '[') {
			if (!(p = header(p + 1, end, section, sizeof(section))))
				return;
			continue;
		}
		if (!isalpha((unsigned char)*p))
			return;
		size_t k = 0;
		for (; p < end && (isalnum((unsigned char)*p) || *p == '-'); p++)
			if (k < sizeof(key) - 1)
				key[k++] = (char)tolower((unsigned char)*p);
		key[k] = '\0';
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p < end && *p == '=') {
			if (!(p = value_of(p + 1, end, value, (size_t)(end - p) + 1)))
				return;
			entry(c, file, section, key, value, depth);
		} else if (p < end && *p != '\n' && *p != '#' && *p != ';')
			return;
		else
			entry(c, file, section, key, NULL, depth);
	}
}

static void read_config(struct ctx *c, const char *file, int depth)
{
	if (depth > INCLUDE_DEPTH_MAX)
		return; /* git refuses such a config, and runs nothing */
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			close_all(c, "the file actor cannot read the repository's git config");
		return;
	}
	struct stat st;
	char *buf = NULL, *value = NULL;
	ssize_t n = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out; /* git reads nothing from a FIFO or a directory either */
	if (st.st_size > CONFIG_BYTES_MAX || !(buf = malloc((size_t)st.st_size + 1)) ||
	    !(value = malloc((size_t)st.st_size + 1))) {
		close_all(c, "the repository's git config is over 1 MiB: the file actor does not read it");
		goto out;
	}
	n = read(fd, buf, (size_t)st.st_size + 1);
	if (n < 0 || n > st.st_size) {
		close_all(c, "the file actor cannot read the repository's git config");
		goto out;
	}
	size_t bom = n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* git skips it too */
	parse(c, file, buf + bom, buf + n, value, depth);
out:
	free(value);
	free(buf);
	close(fd);
}

/* The first line of `file` after `prefix` (a gitfile's "gitdir: "), or
 * the whole line if prefix is "" (commondir). */
static bool first_line(const char *file, const char *prefix, char *out, size_t size)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	size_t p = strlen(prefix);
	if (strncmp(out, prefix, p) != 0)
		return false;
	memmove(out, out + p, strlen(out + p) + 1);
	return out[0] != '\0';
}

/* Each symlink directly in `dir` (of the git dir): where it leads. */
static void keep_links(struct ctx *c, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char target[PATH_MAX], why[128];
	while ((e = readdir(d))) {
		if (e->d_type != DT_LNK)
			continue;
		ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		snprintf(why, sizeof(why), "a symlink in the repository's git directory leads here (%.60s)",
			 e->d_name);
		keep(c, dir, target, why);
	}
	closedir(d);
}

void gitpaths_find(int hostproc, const char *workspace, struct gitpaths *g)
{
	struct ctx c = {.g = g, .hostproc = hostproc, .worktree = workspace};
	char dotgit[PATH_MAX], line[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX], path[PATH_MAX];
	struct stat st;
	if (!join_normal(dotgit, sizeof(dotgit), workspace, ".git") || lstat(dotgit, &st) < 0)
		return;
	if (S_ISREG(st.st_mode)) {
		/* A gitfile: "gitdir: PATH", PATH from the workspace. */
		if (!first_line(dotgit, "gitdir: ", line, sizeof(line)) ||
		    !join_normal(gitdir, sizeof(gitdir), workspace, line))
			return;
	} else if (!resolve(hostproc, dotgit, gitdir, sizeof(gitdir)))
		return;
	if (!join_normal(path, sizeof(path), gitdir, "commondir") ||
	    !first_line(path, "", line, sizeof(line)) || !join_normal(common, sizeof(common), gitdir, line))
		memcpy(common, gitdir, sizeof(common));
	if (join_normal(path, sizeof(path), common, "config"))
		read_config(&c, path, 0);
	if (join_normal(path, sizeof(path), gitdir, "config.worktree"))
		read_config(&c, path, 0);
	keep_links(&c, gitdir);
	if (strcmp(common, gitdir) != 0)
		keep_links(&c, common);
	if (join_normal(path, sizeof(path), common, "hooks"))
		keep_links(&c, path);
	if (join_normal(path, sizeof(path), common, "info"))
		keep_links(&c, path);
	g->root = workspace;
}

const char *gitpaths_why(const struct gitpaths *g, const char *path, bool making)
{
	size_t m = strlen(path);
	if (g->closed && g->root) {
		size_t r = strlen(g->root);
		while (r > 1 && g->root[r - 1] == '/')
			r--;
		if (strncmp(path, g->root, r) == 0 && (path[r] == '/' || path[r] == '\0'))
			return g->closed;
	}
	for (size_t i = 0; i < g->n; i++) {
		const char *p = g->path[i];
		size_t n = strlen(p);
		if (n == 1 || (strncmp(path, p, n) == 0 && (path[n] == '/' || path[n] == '\0')))
			return g->why[i]; /* it, or under it */
		if (making && m < n && strncmp(p, path, m) == 0 && p[m] == '/')
			return g->why[i]; /* on the way to it */
	}
	return NULL;
}
