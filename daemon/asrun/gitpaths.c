/*
 * gitpaths.c - which paths of a working tree the person's git runs or
 * reads as config (see gitpaths.h), read by the run's file actor.
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
 *                             credential helpers, hook.*.command, aliases,
 *                             tools (the table below): every path-like piece
 *   symlinks                in the git dir, its hooks/ and info/ and the
 *                             hooks directory (`hooks/pre-commit -> ../../x`)
 *
 * Relative paths are where git takes them: an include's from the file
 * that names it, the rest from the top of the working tree.  Each is kept
 * as named and as it resolves now, so neither a symlink the run plants on
 * the way nor one that is there already leads around it.
 *
 * Each repository is read the first time a write passes through its
 * working tree (the actor notes every .git on the way: actor_serve.c), so
 * what a nested repository names inside its own tree is guarded before
 * any write there, and read again at a later write when a file or
 * directory it read has changed (the person's own edits during a run).
 * Not read: what the run cannot see (the person's ~/.gitconfig and
 * /etc/gitconfig; a repository above the workspace).  What a command then
 * loads from the tree (a hook manager's config, `python -m`'s modules) is
 * the project's code, not git's.
 *
 * Fail closed: a config the actor cannot read in full (unreadable, over
 * 1 MiB, a line it cannot parse where git would die too, includes deeper
 * than git's 10, more paths than GITPATHS_MAX), an include it cannot see
 * (outside the view, in a home directory, in the run's own /tmp, behind a
 * dangling symlink), a gitfile or commondir it cannot read, a command
 * path after a `cd` it cannot follow, or a git dir outside the run's view
 * closes its working tree instead (`closed`), with the reason.
 *
 * The same for what an AI agent's or editor's project configuration at
 * the top of the tree runs (agentpaths.h: a hook's script, an MCP
 * server's): read once when the tree is first written (no run may change
 * that configuration), kept as a git command's pieces, and denied as the
 * agent's (`agent`).  The top of a guarded tree is read without a .git too.
 *
 * Trust: the config is the person's; the working tree's files may be a
 * past run's.  Every size is bounded.
 */
#include "gitpaths.h"
#include "agentpaths.h"
#include "fdpath.h"
#include "gitdir.h"
#include "path.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_BYTES_MAX  (1 << 20)
#define INCLUDE_DEPTH_MAX 10 /* as git's */
#define GIT_OUTSIDE(what)                                                                          \
	"the repository's " what " is outside the run's view (a linked worktree or a submodule "   \
	"nested in the workspace, one made after sharnessd started, or not the workspace owner's), " \
	"so the file actor cannot read its config"

struct ctx {
	struct gitpaths *g;
	int hostproc;
	const char *worktree;
	const char *const *trees; /* where a run may write */
	size_t n_trees;
	int link_depth; /* hooks directories met through symlinks, now */
	const char *gitdir, *common; /* the repository's git directories, in view */
	bool agent;		     /* keeping what an AI agent's configuration runs (agentpaths.h) */
};

#define AGENT_UNCHECKED                                                                                \
	"an AI agent's project configuration runs a path the file actor cannot check (too long, after " \
	"a cd it cannot follow, or more paths than it tracks)"

static void close_all(struct ctx *c, const char *why)
{
	if (!c->g->closed) {
		c->g->closed = c->agent ? AGENT_UNCHECKED : why; /* why speaks of git's config */
		c->g->closed_agent = c->agent;
	}
}

/* Note `path` as it is now, read or looked for (gitpaths_changed). */
static void note_seen(struct ctx *c, const char *path)
{
	struct gitpaths *g = c->g;
	struct stat st;
	for (size_t i = 0; i < g->n_seen; i++)
		if (strcmp(g->seen[i].path, path) == 0)
			return;
	char *copy = g->n_seen < GITPATHS_SEEN_MAX ? strdup(path) : NULL;
	if (!copy) {
		g->seen_all = false;
		return;
	}
	struct gitseen *s = &g->seen[g->n_seen++];
	*s = (struct gitseen){.path = copy, .exists = stat(path, &st) == 0};
	if (s->exists) {
		s->dev = st.st_dev;
		s->ino = st.st_ino;
		s->size = st.st_size;
		s->mtime = st.st_mtim;
		s->ctime = st.st_ctim;
	}
}

bool gitpaths_changed(const struct gitpaths *g)
{
	struct stat st;
	if (!g->seen_all)
		return true;
	for (size_t i = 0; i < g->n_seen; i++) {
		const struct gitseen *s = &g->seen[i];
		bool exists = stat(s->path, &st) == 0;
		if (exists != s->exists ||
		    (exists && (st.st_dev != s->dev || st.st_ino != s->ino || st.st_size != s->size ||
				st.st_mtim.tv_sec != s->mtime.tv_sec || st.st_mtim.tv_nsec != s->mtime.tv_nsec ||
				st.st_ctim.tv_sec != s->ctime.tv_sec || st.st_ctim.tv_nsec != s->ctime.tv_nsec)))
			return true;
	}
	return false;
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
	g->agent[g->n++] = c->agent;
}

/* Could a run write `path`: is it in one of the trees? */
static bool writable_by_run(const struct ctx *c, const char *path)
{
	for (size_t i = 0; i < c->n_trees; i++)
		if (path_under(path, c->trees[i]))
			return true;
	return false;
}

static void keep_links(struct ctx *c, const char *dir);

/* Keep `rel` (from `base`) as named and as it resolves now.  A file
 * (`file`: a command's word, an include) is never a directory that exists,
 * nor the working tree or above it: git runs and reads files, and the
 * `src/` of `prettier --write src/` is data.  A hooks directory is kept
 * whole, with where the symlinks in it lead. */
static void keep(struct ctx *c, const char *base, const char *rel, const char *why, bool file)
{
	char named[PATH_MAX], real[PATH_MAX];
	struct stat st;
	if (rel[0] == '\0' || rel[0] == '~')
		return; /* a home directory: not in the run's view */
	if (!path_join(named, sizeof(named), base, rel)) {
		close_all(c, "a path in the repository's git config is too long to check");
		return;
	}
	if (file && (path_under(c->worktree, named) || (stat(named, &st) == 0 && S_ISDIR(st.st_mode))))
		return;
	bool moved = fdpath_resolve(c->hostproc, named, real, sizeof(real)) && strcmp(real, named) != 0;
	if (!writable_by_run(c, named) && !(moved && writable_by_run(c, real)))
		return;
	/* An agent's PATH directory that leads to the top (`bin -> .`): kept
	 * whole it would close the whole tree (review s38 L2); one that leads
	 * above it cannot be kept by the actor. */
	if (!file && c->agent && moved && path_under(c->worktree, real)) {
		if (strcmp(real, c->worktree) != 0)
			close_all(c, "an AI agent's project configuration puts a directory on PATH that leads above "
				     "the top of the tree, which the file actor cannot keep");
		return;
	}
	add(c, named, why);
	if (moved)
		add(c, real, why);
	if (!file)
		keep_links(c, moved ? real : named);
}

/* `piece` from each directory the command may be in: the top of the
 * working tree, and where each `cd` in it went (kept for the rest of the
 * command: over-keeping only refuses more). */
static void keep_from(struct ctx *c, char bases[][PATH_MAX], size_t n_bases, const char *piece,
		      const char *why)
{
	for (size_t b = 0; b < n_bases; b++)
		keep(c, bases[b], piece, why, true);
}

/* For an AI agent's command: `piece`, a bare name with no slash, where
 * it is a file (`node server.js`, `python3 hook.py`): the agent runs its
 * commands from the top, or where a `cd` went (review s37 fixes H2).  A
 * name that is no file there is a word (`run`, `-y`). */
static void keep_bare(struct ctx *c, char bases[][PATH_MAX], size_t n_bases, const char *piece, const char *why)
{
	char path[PATH_MAX];
	struct stat st;
	if (!c->agent || !piece[0] || piece[0] == '-' || strpbrk(piece, "/$"))
		return;
	for (size_t b = 0; b < n_bases; b++)
		if (path_join(path, sizeof(path), bases[b], piece) && lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
			keep(c, bases[b], piece, why, true);
}

#define TOPLEVEL "$(git rev-parse --show-toplevel)"

/* How long the expression at the start of `s` is when it names the top of
 * the tree: `${workspaceFolder}` (also `${workspaceFolder:name}`),
 * `$CLAUDE_PROJECT_DIR` (also `${CLAUDE_PROJECT_DIR:-.}`), `$PWD`,
 * `$(pwd)`, `$(git rev-parse --show-toplevel)`; 0 for anything else. */
static size_t top_expr_len(const char *s)
{
	static const char *const names[] = {"workspaceFolder", "workspaceRoot", "PWD", "CLAUDE_PROJECT_DIR",
					    "ZED_WORKTREE_ROOT"};
	static const char *const commands[] = {"$(pwd)", "$(pwd -P)", "`pwd`", TOPLEVEL};
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strncmp(s, commands[i], strlen(commands[i])) == 0)
			return strlen(commands[i]);
	if (s[0] != '$')
		return 0;
	bool braced = s[1] == '{';
	const char *name = s + 1 + braced;
	size_t n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	bool known = false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		known |= n == strlen(names[i]) && strncmp(name, names[i], n) == 0;
	if (!known)
		return 0;
	if (!braced)
		return 1 + n;
	const char *end = strchr(name + n, '}'); /* `:name`, `:-.`: still the top */
	return end ? (size_t)(end + 1 - s) : 0;
}

/* Is `s` a home directory, `~/x` or after $HOME, ${HOME}, ${env:HOME},
 * ${userHome} (not $HOMEBREW_PREFIX)? */
static bool names_home(const char *s)
{
	static const char *const homes[] = {"$HOME", "${HOME}", "${env:HOME}", "${userHome}"};
	if (s[0] == '~')
		return true;
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++)
		for (const char *h = strstr(s, homes[i]); h; h = strstr(h + 1, homes[i])) {
			char next = h[strlen(homes[i])];
			if (!isalnum((unsigned char)next) && next != '_')
				return true;
		}
	return false;
}

/* A directory of a PATH an AI agent's configuration sets (agentpaths.h),
 * kept whole, as a hooks directory: from each base (the top, and where a
 * `cd` before it in a command went), or after an expression that names the
 * top (`${workspaceFolder}/bin`, `"$(pwd)/bin"`); up to a later variable
 * (`tools/${env:ARCH}`: `tools` whole, `bin${PATH:+:$PATH}`: `bin`).  Not
 * a home directory, not after another variable (`${env:PATH}`), and not
 * the top itself (`.`: that would keep the whole tree, so a bare name a
 * command runs from there is not kept: README, agent config). */
struct dir_bases {
	char (*dir)[PATH_MAX];
	size_t n;
	bool lost; /* after a cd the actor cannot follow */
};

static void keep_agent_dir_from(struct ctx *c, const char *s, const char *why, const struct dir_bases *b)
{
	char rel[PATH_MAX], named[PATH_MAX];
	if (names_home(s))
		return; /* not in the run's view */
	size_t top = top_expr_len(s);
	if (s[0] == '$' && !top)
		return;
	const char *from = s + top + (top && s[top] == '/');
	if (snprintf(rel, sizeof(rel), "%s", from) >= (int)sizeof(rel)) {
		close_all(c, AGENT_UNCHECKED);
		return;
	}
	rel[strcspn(rel, "$`")] = '\0';
	if (!rel[0])
		return;
	if (b->lost && rel[0] != '/') {
		close_all(c, "an AI agent's project configuration sets a PATH after a cd the file actor cannot "
			     "follow");
		return;
	}
	for (size_t i = 0; i < b->n; i++)
		if (!path_join(named, sizeof(named), b->dir[i], rel) || !path_under(c->worktree, named))
			keep(c, b->dir[i], rel, why, false);
}

static void keep_agent_dir(void *arg, const char *s, const char *why, enum agentpaths_what what)
{
	struct ctx *c = arg;
	char top[1][PATH_MAX];
	(void)what;
	snprintf(top[0], sizeof(top[0]), "%s", c->worktree);
	keep_agent_dir_from(c, s, why, &(struct dir_bases){.dir = top, .n = 1});
}

/* A PATH set in an AI agent's command (`PATH=./bin:$PATH mytool`,
 * `export PATH=...`, `PATH+=:./bin`): its directories, as one the
 * configuration sets, from where the command's `cd`s went. */
struct assigned {
	struct ctx *c;
	const struct dir_bases *bases;
};

static void keep_assigned_dir(void *arg, const char *s, const char *why, enum agentpaths_what what)
{
	const struct assigned *a = arg;
	(void)what;
	keep_agent_dir_from(a->c, s, why, a->bases);
}

static void keep_assigned_dirs(struct ctx *c, const char *word, const char *why, const struct dir_bases *b)
{
	const char *eq = strchr(word, '=');
	char list[PATH_MAX];
	if (!c->agent || !eq || eq == word)
		return;
	size_t n = (size_t)(eq - word) - (eq[-1] == '+');
	if (!agentpaths_is_dir_list(word, n))
		return;
	snprintf(list, sizeof(list), "%s", eq + 1); /* the word is shorter */
	agentpaths_dirs(list, why, keep_assigned_dir, &(struct assigned){.c = c, .bases = b});
}

/* Every path-like piece of a command: words split as a shell splits them
 * (blanks and operators, quotes honoured), each split again at '=' and
 * ':' (`--require=./x.js`, `ProxyCommand=./p`), a leading '!' dropped;
 * a piece with a slash that is not a long option or a URL's host part.
 * Taken from the top of the working tree and from where a `cd` in the
 * command went; the path after a variable or a command substitution
 * (`$(git rev-parse --show-toplevel)/x`, `"$TOP"/x`) from there too, and
 * the path glued to a short option (`-F./x`). */
static void keep_words(struct ctx *c, const char *cmd, const char *why, int depth)
{
	char word[PATH_MAX], bases[4][PATH_MAX];
	size_t n_bases = 1;
	bool after_cd = false, lost = false; /* lost: after a cd the actor cannot follow */
	snprintf(bases[0], sizeof(bases[0]), "%s", c->worktree);
	for (const char *p = cmd; *p;) {
		size_t n = 0;
		char quote = 0;
		bool quoted_blank = false, cut = false;
		const char *sep = p;
		while (*p && strchr(" \t\n;|&<>()", *p))
			p++;
		/* `cd && ./x`: an operator ends cd's words (no operand: home) */
		bool op_before = strcspn(sep, ";|&()") < (size_t)(p - sep);
		/* `$(...)/x` split at ')': the rest is a path from the command's output */
		bool after_paren = p > cmd && p[-1] == ')';
		const char *start = p + (*p == '"');
		for (; *p && (quote || !strchr(" \t\n;|&<>()", *p)); p++)
			if (quote ? *p == quote : (*p == '"' || *p == '\''))
				quote = quote ? 0 : *p;
			else if (n < sizeof(word) - 1) {
				quoted_blank |= quote && strchr(" \t\n;|&", *p);
				word[n++] = *p;
			} else
				cut = true;
		word[n] = '\0';
		if (cut && strpbrk(word, "/=:")) { /* a path, or pieces of one, cut */
			close_all(c, "a path in the repository's git config is too long to check");
			return;
		}
		if (n == 0)
			continue;
		/* `sh -c './x --fix'`: a quoted command is split in its turn. */
		if (quoted_blank && depth < 2)
			keep_words(c, word, why, depth + 1);
		const char *name = word + (word[0] == '!'); /* an alias's `!cd` */
		if (after_cd && op_before) { /* a bare `cd`: home */
			after_cd = false;
			lost = true;
		}
		if (after_cd && word[0] == '-' && word[1]) /* `cd -P dir`: an option */
			continue;
		if (after_cd) {
			/* The directory is where later paths are, not a program.
			 * `cd "${GIT_PREFIX:-.}"` (git's own idiom), `cd ~/x`,
			 * `cd -` or a fourth cd leave the actor not knowing where
			 * that is; `cd "$(git rev-parse --show-toplevel)"` is the
			 * top, where paths are taken from anyway. */
			after_cd = false;
			if (strncmp(start, TOPLEVEL, sizeof(TOPLEVEL) - 1) == 0)
				continue;
			if (strchr(word, '$') || word[0] == '~' || strcmp(word, "-") == 0 || n_bases == 4 ||
			    !path_join(bases[n_bases], sizeof(bases[n_bases]), bases[n_bases - 1], word))
				lost = true;
			else
				n_bases++;
			continue;
		}
		/* "$GIT_PREFIX"/x: under the directory the person typed the
		 * alias in, which may be anywhere in the tree. */
		const char *prefix_var = strstr(word, "GIT_PREFIX");
		if (prefix_var && strchr(prefix_var, '/')) {
			close_all(c, "the repository's git config runs a path under $GIT_PREFIX, the "
				     "directory an alias is typed in, which the file actor cannot follow");
			return;
		}
		after_cd = strcmp(name, "cd") == 0 || strcmp(name, "pushd") == 0;
		if (after_paren && word[0] == '/' && lost) {
			close_all(c, "the repository's git config runs a path after a cd the file actor "
				     "cannot follow");
			return;
		}
		if (after_paren && word[0] == '/')
			keep_from(c, bases, n_bases, word + 1, why);
		char *save = NULL;
		keep_bare(c, bases, n_bases, name, why);
		keep_assigned_dirs(c, name, why, &(struct dir_bases){.dir = bases, .n = n_bases, .lost = lost});
		for (char *piece = strtok_r(word, "=:", &save); piece; piece = strtok_r(NULL, "=:", &save)) {
			piece += piece[0] == '!';
			keep_bare(c, bases, n_bases, piece, why);
			const char *var = strrchr(piece, '$'), *rest = var ? strchr(var, '/') : NULL, *rel = NULL;
			if (var && (strncmp(var, "$HOME/", 6) == 0 || strncmp(var, "${HOME}/", 8) == 0))
				continue; /* a home directory, as `~/`: not in the run's view */
			if (rest && rest[1])
				rel = rest + 1;
			else if (piece[0] == '-' && piece[1] != '-' && piece[1] && strchr(piece + 2, '/'))
				rel = piece + 2;
			else if (strchr(piece, '/') && piece[0] != '-' && !var && strncmp(piece, "//", 2) != 0)
				rel = piece;
			if (rel && lost && rel[0] != '/' && rel[0] != '~' && !strpbrk(rel, "%*?")) {
				close_all(c, "the repository's git config runs a path after a cd the file actor "
					     "cannot follow");
				return;
			}
			if (rel)
				keep_from(c, bases, n_bases, rel, why);
		}
	}
}

/* Config keys whose value git runs as a command (the subsection, where
 * there is one, is any driver's, tool's or helper's name; key NULL: every
 * key of the section). */
static const struct {
	const char *section, *key, *name;
} commands[] = {
    {"alias", NULL, "an alias"},
    {"pager", NULL, "a pager"},
    {"hook", "command", "hook.*.command"},
    {"diff", "external", "diff.external"},
    {"interactive", "difffilter", "interactive.diffFilter"},
    {"gpg", "defaultkeycommand", "gpg.ssh.defaultKeyCommand"},
    {"core", "gitproxy", "core.gitProxy"},
    {"submodule", "update", "submodule.*.update"},
    {"remote", "uploadpack", "remote.*.uploadpack"},
    {"remote", "receivepack", "remote.*.receivepack"},
    {"trailer", "cmd", "trailer.*.cmd"},
    {"trailer", "command", "trailer.*.command"},
    {"difftool", "cmd", "difftool.*.cmd"},
    {"difftool", "path", "difftool.*.path"},
    {"mergetool", "cmd", "mergetool.*.cmd"},
    {"mergetool", "path", "mergetool.*.path"},
    {"sendemail", "sendmailcmd", "sendemail.sendmailCmd"},
    {"sendemail", "tocmd", "sendemail.toCmd"},
    {"sendemail", "cccmd", "sendemail.ccCmd"},
    {"sendemail", "headercmd", "sendemail.headerCmd"},
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
    {"core", "alternaterefscommand", "core.alternateRefsCommand"},
    {"sendemail", "smtpserver", "sendemail.smtpServer"},
    {"lfs", "path", "lfs.customtransfer.*.path"},
    {"lfs", "clean", "lfs.extension.*.clean"},
    {"lfs", "smudge", "lfs.extension.*.smudge"},
    {"tar", "command", "tar.*.command"},
    {"guitool", "cmd", "guitool.*.cmd"},
    {"gui", "editor", "gui.editor"},
    {"man", "cmd", "man.*.cmd"},
    {"man", "path", "man.*.path"},
    {"browser", "cmd", "browser.*.cmd"},
    {"browser", "path", "browser.*.path"},
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
		keep(c, dir, value, "the person's git reads it as config (include.path)", true);
		if (value[0] == '~')
			close_all(c, "the repository's git config includes a file in a home directory, "
				     "outside the run's view");
		else if (path_join(path, sizeof(path), dir, value))
			read_config(c, path, depth + 1);
		return;
	}
	if (strcmp(section, "core") == 0 && strcmp(key, "hookspath") == 0) {
		/* A pathname value: git 2.52 strips an ":(optional)" prefix. */
		const char *dir_value = strncmp(value, ":(optional)", 11) == 0 ? value + 11 : value;
		keep(c, c->worktree, dir_value, "the person's git runs the hooks there (core.hooksPath)",
		     false);
		return;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(section, commands[i].section) == 0 &&
		    (!commands[i].key || strcmp(key, commands[i].key) == 0)) {
			snprintf(why, sizeof(why), "the person's git runs it (%s)", commands[i].name);
			keep_words(c, value, why, 0);
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
			/* A line continuation, in a CRLF file too; at the end of the
			 * file git reads a newline. */
			if (p >= end)
				break;
			if (*p == '\r' && p + 1 < end && p[1] == '\n')
				p++;
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

/* Git dies on a config it cannot parse; where we cannot parse one, the
 * working tree is closed (what we and git read differently then refuses
 * writes rather than letting one through). */
static void parse(struct ctx *c, const char *file, const char *p, const char *end, char *value, int depth)
{
	char section[64] = "", key[64];
	bool bad = false;
	while (p < end && !bad) {
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
			const char *next = header(p + 1, end, section, sizeof(section));
			bad = !next;
			p = next;
			continue;
		}
		if (!isalpha((unsigned char)*p)) {
			bad = true;
			break;
		}
		size_t k = 0;
		for (; p < end && (isalnum((unsigned char)*p) || *p == '-'); p++)
			if (k < sizeof(key) - 1)
				key[k++] = (char)tolower((unsigned char)*p);
		key[k] = '\0';
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p < end && *p == '=') {
			const char *next = value_of(p + 1, end, value, (size_t)(end - p) + 1);
			if (!next) {
				bad = true;
				break;
			}
			p = next;
			entry(c, file, section, key, value, depth);
		} else if (p < end && *p != '\n' && *p != '#' && *p != ';') {
			bad = true;
			break;
		} else
			entry(c, file, section, key, NULL, depth);
		if (c->g->closed)
			return; /* no need to read on */
	}
	if (bad)
		close_all(c, "the repository's git config has a line the file actor cannot parse");
}

/* Is `path` where the actor sees all there is: the repository's git
 * directories and the trees a run writes? */
static bool in_view(const struct ctx *c, const char *path)
{
	return path_under(path, c->gitdir) || path_under(path, c->common) || writable_by_run(c, path);
}

static void read_config(struct ctx *c, const char *file, int depth)
{
	if (depth > INCLUDE_DEPTH_MAX) {
		/* git dies on it; and k includes of itself would cost k^10 reads */
		close_all(c, "the repository's git config includes deeper than git's limit of 10");
		return;
	}
	note_seen(c, file);
	if (c->g->closed)
		return;
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		/* A file that is not there is read as nothing, as git does; but
		 * only where the actor sees all there is: the view holds the
		 * repository's git directories and the trees a run writes, not
		 * the main checkout of a linked worktree (`../.gitconfig` from
		 * its .git) or a path elsewhere on the host. */
		char real[PATH_MAX];
		if (errno != ENOENT && errno != ENOTDIR)
			close_all(c, "the file actor cannot read the repository's git config");
		else if (!in_view(c, file) || fdpath_behind_link(file) ||
			 !fdpath_resolve(c->hostproc, file, real, sizeof(real)) || !in_view(c, real))
			/* outside, a dangling symlink, or behind a symlink that
			 * leads outside: git on the host may read what it names */
			close_all(c, "the repository's git config includes a file outside the run's view");
		return;
	}
	struct stat st;
	char *buf = NULL, *value = NULL, real[PATH_MAX];
	ssize_t n = 0;
	if (fstat(fd, &st) < 0 || fdpath_of(c->hostproc, fd, real, sizeof(real)) < 0) {
		close_all(c, "the file actor cannot read the repository's git config");
		goto out;
	}
	if ((path_under(real, "/tmp") || path_under(real, "/dev/shm")) && !in_view(c, real)) {
		/* the run's own there, named or reached through a symlink, not
		 * the host's that git reads (a workspace below /tmp is the
		 * host's, moved in on top) */
		close_all(c, "the repository's git config includes a file in /tmp, which the run's view "
			     "replaces");
		goto out;
	}
	if (!S_ISREG(st.st_mode))
		goto out; /* git reads nothing from a FIFO or a directory either */
	if (st.st_size > CONFIG_BYTES_MAX) {
		close_all(c, "the repository's git config is over 1 MiB: the file actor does not read it");
		goto out;
	}
	if (!(buf = malloc((size_t)st.st_size + 1)) || !(value = malloc((size_t)st.st_size + 1))) {
		close_all(c, "the file actor ran out of memory reading the repository's git config");
		goto out;
	}
	for (ssize_t got = 1; got > 0 && n <= st.st_size; n += got)
		if ((got = read(fd, buf + n, (size_t)(st.st_size + 1 - n))) < 0)
			break;
	if (n != st.st_size) {
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

/* Each symlink directly in `dir` (of the git dir, or a hooks directory):
 * where it leads, from where `dir` really is.  A directory reached so is
 * kept whole (`.git/hooks -> ../githooks`), two levels deep at most. */
static void keep_links(struct ctx *c, const char *dir)
{
	note_seen(c, dir);
	DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR)
			close_all(c, "the file actor cannot read the repository's hooks");
		return;
	}
	char real[PATH_MAX], target[PATH_MAX], why[128];
	if (c->link_depth >= 2) {
		closedir(d);
		return;
	}
	if (fdpath_of(c->hostproc, dirfd(d), real, sizeof(real)) < 0) {
		close_all(c, "the file actor cannot tell where the repository's hooks are");
		closedir(d);
		return;
	}
	c->link_depth++;
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d))) {
		if (e->d_type != DT_LNK &&
		    !(e->d_type == DT_UNKNOWN &&
		      fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)))
			continue;
		ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		snprintf(why, sizeof(why),
			 "a symlink in the repository's git directory or hooks leads here (%.60s)",
			 e->d_name);
		bool is_dir = fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
		keep(c, real, target, why, !is_dir);
	}
	c->link_depth--;
	closedir(d);
}

/* A string an AI agent's configuration runs: its path-like pieces, as a
 * git command's. */
static void keep_agent_command(void *arg, const char *s, const char *why, enum agentpaths_what what)
{
	if (what == AGENTPATHS_COMMAND)
		keep_words(arg, s, why, 0);
	else
		keep_agent_dir(arg, s, why, what);
}

void gitpaths_find(int hostproc, const char *worktree, const char *const *trees, size_t n_trees,
		   struct gitpaths *g)
{
	struct ctx c = {
	    .g = g, .hostproc = hostproc, .worktree = worktree, .trees = trees, .n_trees = n_trees};
	char dotgit[PATH_MAX], gitdir[PATH_MAX], common[PATH_MAX], path[PATH_MAX];
	struct stat st;
	if (!(g->root = strdup(worktree))) {
		close_all(&c, "the file actor ran out of memory reading the repository's git config");
		return;
	}
	g->seen_all = true;
	/* What the agents' configuration at the top runs, read once: no run
	 * changes it (the agent-config lock). */
	c.agent = true;
	const char *agent_err = agentpaths_read(worktree, keep_agent_command, &c);
	if (agent_err && !g->closed) {
		g->closed = agent_err;
		g->closed_agent = true;
	}
	c.agent = false;
	if (!path_join(dotgit, sizeof(dotgit), worktree, ".git"))
		return;
	note_seen(&c, dotgit); /* a .git gone for a moment is looked for again */
	if (lstat(dotgit, &st) < 0)
		return;
	if (S_ISREG(st.st_mode) && gitdir_gitfile(worktree, gitdir, sizeof(gitdir)) != 1) {
		/* git dies on it too, but the person's git may read what we cannot */
		close_all(&c, "the file actor cannot read the repository's gitfile (.git)");
		return;
	}
	if (!S_ISREG(st.st_mode) && !fdpath_resolve(hostproc, dotgit, gitdir, sizeof(gitdir))) {
		close_all(&c, "the file actor cannot tell where the repository's git directory is");
		return;
	}
	/* A linked worktree's or a submodule's git dir is in the view when it
	 * is the workspace's (root binds its shared one: gitdir.h) or lies in
	 * the workspace; otherwise what its config names is unknown. */
	if (stat(gitdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close_all(&c, GIT_OUTSIDE("git directory"));
		return;
	}
	if (path_join(path, sizeof(path), gitdir, "commondir"))
		note_seen(&c, path);
	if (gitdir_common(gitdir, common, sizeof(common)) != 1) {
		close_all(&c, "the file actor cannot read the repository's commondir");
		return;
	}
	if (stat(common, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close_all(&c, GIT_OUTSIDE("shared git directory (git rev-parse --git-common-dir)"));
		return;
	}
	c.gitdir = gitdir;
	c.common = common;
	if (path_join(path, sizeof(path), common, "config"))
		read_config(&c, path, 0);
	if (path_join(path, sizeof(path), gitdir, "config.worktree"))
		read_config(&c, path, 0);
	keep_links(&c, gitdir);
	if (strcmp(common, gitdir) != 0)
		keep_links(&c, common);
	if (path_join(path, sizeof(path), common, "hooks"))
		keep_links(&c, path);
	if (path_join(path, sizeof(path), common, "info"))
		keep_links(&c, path);
}

void gitpaths_free(struct gitpaths *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->path[i]);
		free(g->why[i]);
	}
	for (size_t i = 0; i < g->n_seen; i++)
		free(g->seen[i].path);
	free(g->root);
	*g = (struct gitpaths){0};
}

void gitrepos_visit(struct gitrepos *rs, int hostproc, const char *worktree, dev_t dev, ino_t ino)
{
	struct gitpaths *g = NULL;
	for (size_t i = 0; i < rs->n && !g; i++)
		if (rs->repo[i].root && strcmp(rs->repo[i].root, worktree) == 0)
			g = &rs->repo[i];
	if (g && g->dev == dev && g->ino == ino && !gitpaths_changed(g)) {
		g->used = ++rs->tick;
		return;
	}
	if (!g && rs->n < GITREPOS_MAX)
		g = &rs->repo[rs->n++];
	if (!g) { /* forget the one longest unused: not one this write met */
		g = &rs->repo[0];
		for (size_t i = 1; i < GITREPOS_MAX; i++)
			if (rs->repo[i].used < g->used)
				g = &rs->repo[i];
	}
	gitpaths_free(g);
	gitpaths_find(hostproc, worktree, rs->trees, rs->n_trees, g);
	g->dev = dev;
	g->ino = ino;
	g->used = ++rs->tick;
}

const char *gitrepos_why(const struct gitrepos *rs, const char *path, bool making, bool *agent)
{
	for (size_t i = 0; i < rs->n; i++) {
		const char *why = gitpaths_why(&rs->repo[i], path, making, agent);
		if (why)
			return why;
	}
	return NULL;
}

const char *gitpaths_why(const struct gitpaths *g, const char *path, bool making, bool *agent)
{
	size_t m = strlen(path);
	*agent = g->closed_agent;
	if (g->closed && (!g->root || path_under(path, g->root)))
		return g->closed;
	for (size_t i = 0; i < g->n; i++) {
		const char *p = g->path[i];
		size_t n = strlen(p);
		/* Without case: a casefolded directory (chattr +F, vfat) finds
		 * .githooks by .GITHOOKS. */
		*agent = g->agent[i];
		if (n == 1 || (strncasecmp(path, p, n) == 0 && (path[n] == '/' || path[n] == '\0')))
			return g->why[i]; /* it, or under it */
		if (making && m < n && strncasecmp(p, path, m) == 0 && p[m] == '/')
			return g->why[i]; /* on the way to it */
	}
	return NULL;
}
