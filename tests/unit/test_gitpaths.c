/*
 * test_gitpaths.c - which paths of a workspace the person's git runs or
 * reads as config (gitpaths.c), read from real files in a temporary
 * workspace.  That the actor refuses writes there, in a real sandbox, is
 * tested end to end (tests/e2e/sandbox.sh "git runs: ..."), and so is the
 * shared git directory start-up binds for a linked worktree (gitdir.c,
 * tests/e2e/worktree.sh); here, which one it picks and which it refuses.
 */
#include "gitdir.h"
#include "gitpaths.h"
#include "harness.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char ws[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* `cmd` run on the workspace, e.g. "rm -rf" or "mkdir -p" and a path in it. */
static void sh(const char *cmd, const char *rel)
{
	char line[2 * PATH_MAX];
	snprintf(line, sizeof(line), "%s '%s/%s'", cmd, ws, rel);
	CHECK(system(line) == 0);
}

/* A fresh workspace with an empty .git/hooks (the last one removed). */
static void workspace(void)
{
	char t[] = "/tmp/test_gitpaths.XXXXXX";
	if (ws[0])
		sh("rm -rf", "");
	if (!mkdtemp(t) || !realpath(t, ws))
		abort();
	sh("mkdir -p", ".git/hooks");
}

static struct gitpaths found(void)
{
	struct gitpaths g = {0};
	int proc = open("/proc", O_PATH | O_DIRECTORY);
	const char *trees[] = {ws};
	gitpaths_find(proc, ws, trees, 1, &g);
	close(proc);
	return g;
}

static const char *why_all(const struct gitrepos *rs, const char *rel)
{
	static char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	bool agent;
	return gitrepos_why(rs, p, false, &agent);
}

static const char *why(const struct gitpaths *g, const char *rel, bool making)
{
	static char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	bool agent;
	return gitpaths_why(g, p, making, &agent);
}

TEST(no_config_no_paths)
{
	workspace();
	struct gitpaths g = found();
	CHECK_EQ_INT(g.n, 0);
	CHECK(!g.closed);
	CHECK(!why(&g, "src/a.c", true));
	gitpaths_free(&g);
}

TEST(hooks_path_includes_and_commands)
{
	workspace();
	put(".git/config", "\xef\xbb\xbf# the person's\n"
			   "[core]\n"
			   "\trepositoryformatversion = 0\n"
			   "\thooksPath = .husky/_   ; husky 9\n"
			   "\tfsmonitor = \"./tools/fsmon.sh\" --watch\n"
			   "[include]\n"
			   "\tpath = ../.gitconfig\n"
			   "[includeIf \"onbranch:main\"]\n"
			   "\tpath = ../branch.gitconfig\n"
			   "[filter \"lfs\"]\n"
			   "\tclean = git-lfs clean -- %f\n"
			   "[diff \"img\"]\n"
			   "\ttextconv = python3 scripts/exif.py\n"
			   "[alias]\n"
			   "\tst = status\n"
			   "\tfix = !sh ./bin/fix \\\n"
			   "\t  --all\n"
			   "[remote \"origin\"]\n"
			   "\turl = ../upstream\n");
	put(".gitconfig", "[core]\n\tpager = ./pager.sh\n");
	struct gitpaths g = found();
	CHECK(!g.closed);
	CHECK_CONTAINS(why(&g, ".husky/_/pre-commit", false), "core.hooksPath");
	CHECK_CONTAINS(why(&g, ".husky/_", false), "core.hooksPath");
	CHECK_CONTAINS(why(&g, "tools/fsmon.sh", false), "core.fsmonitor");
	CHECK_CONTAINS(why(&g, ".gitconfig", false), "include.path");
	CHECK_CONTAINS(why(&g, "pager.sh", false), "core.pager"); /* from the included file */
	CHECK_CONTAINS(why(&g, "scripts/exif.py", false), "textconv");
	CHECK_CONTAINS(why(&g, "bin/fix", false), "alias");
	/* On the way to one: a new entry there (a symlink, a moved directory)
	 * would redirect git; a new directory alone does not. */
	CHECK_CONTAINS(why(&g, ".husky", true), "core.hooksPath");
	CHECK(!why(&g, ".husky", false));
	CHECK(!why(&g, ".husky/pre-commit", true)); /* husky's own script: the project's file */
	/* Not commands, nothing with a slash, not git's: free. */
	CHECK(!why(&g, "upstream", true));
	CHECK(!why(&g, "src/a.c", true));
	CHECK(!why(&g, "tools/other.sh", true));
	CHECK(!why(&g, ".huskyx", true));
	gitpaths_free(&g);
}

TEST(symlinks_in_the_git_dir)
{
	workspace();
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/.git/hooks/pre-commit", ws);
	CHECK(symlink("../../scripts/pre-commit", p) == 0);
	snprintf(p, sizeof(p), "%s/real", ws);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/linked", ws);
	CHECK(symlink("real", p) == 0);
	put(".git/config", "[core]\n\thooksPath = linked/hooks\n");
	struct gitpaths g = found();
	CHECK_CONTAINS(why(&g, "scripts/pre-commit", false), "symlink in the repository's git directory");
	/* As named and as it resolves now. */
	CHECK_CONTAINS(why(&g, "linked/hooks/x", false), "core.hooksPath");
	CHECK_CONTAINS(why(&g, "real/hooks/x", false), "core.hooksPath");
	gitpaths_free(&g);
}

TEST(a_gitfile_and_its_commondir)
{
	workspace();
	/* ws/.git is a gitfile naming ws/wt (a worktree's git dir), whose
	 * commondir is ws/main.git. */
	sh("rm -rf", ".git");
	sh("mkdir -p", "wt");
	sh("mkdir -p", "main.git");
	put(".git", "gitdir: wt\n");
	put("wt/commondir", "../main.git\n");
	put("main.git/config", "[core]\n\thooksPath = hooks-here\n");
	put("wt/config.worktree", "[include]\n\tpath = ../wt.inc\n");
	struct gitpaths g = found();
	CHECK_CONTAINS(why(&g, "hooks-here/pre-push", false), "core.hooksPath");
	CHECK_CONTAINS(why(&g, "wt.inc", false), "include.path");
	gitpaths_free(&g);
}

TEST(fails_closed)
{
	workspace();
	/* A path too long to check closes the workspace; a long value that
	 * names no path does not. */
	char big[PATH_MAX + 200];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char text[sizeof(big) + 64];
	snprintf(text, sizeof(text), "[alias]\n\tlong = !echo %s\n", big);
	put(".git/config", text);
	struct gitpaths g = found();
	CHECK(!g.closed);
	gitpaths_free(&g);
	big[0] = '/';
	snprintf(text, sizeof(text), "[core]\n\thooksPath = h\n\teditor = %s\n", big);
	put(".git/config", text);
	g = found();
	CHECK_CONTAINS(g.closed, "too long");
	CHECK_STR(why(&g, "src/a.c", false), g.closed);
	CHECK(!gitpaths_why(&g, "/elsewhere/x", true, &(bool){false}));
	gitpaths_free(&g);
	/* A line git cannot parse either (git dies on it): the tree is closed. */
	workspace();
	put(".git/config", "[core]\n\thooksPath = h\n\t= x\n[include]\n\tpath = ../later\n");
	g = found();
	CHECK_CONTAINS(g.closed, "cannot parse");
	gitpaths_free(&g);
	/* A git dir outside the run's view (a linked worktree's): closed. */
	workspace();
	sh("rm -rf", ".git");
	put(".git", "gitdir: /nonexistent/main/.git/worktrees/x\n");
	g = found();
	CHECK_CONTAINS(g.closed, "outside the run's view");
	gitpaths_free(&g);
	/* A worktree's own git dir in view, its shared one not: closed. */
	workspace();
	sh("mkdir -p", ".git/worktrees");
	put(".git/commondir", "/nonexistent/main/.git\n");
	g = found();
	CHECK_CONTAINS(g.closed, "git-common-dir");
	gitpaths_free(&g);
	/* A gitfile the actor cannot parse, or a commondir it cannot read. */
	workspace();
	sh("rm -rf", ".git");
	put(".git", "not a gitfile\n");
	g = found();
	CHECK_CONTAINS(g.closed, "cannot read the repository's gitfile");
	gitpaths_free(&g);
	workspace();
	sh("mkdir -p", ".git/commondir");
	g = found();
	CHECK_CONTAINS(g.closed, "cannot read the repository's commondir");
	gitpaths_free(&g);
	/* An include that is not there: nothing, where the actor sees all
	 * (the tree, the git directory); closed elsewhere (the main checkout
	 * of a linked worktree is not in the view). */
	workspace();
	put(".git/config", "[include]\n\tpath = ../later.inc\n\tpath = extra.inc\n");
	g = found();
	CHECK(!g.closed);
	gitpaths_free(&g);
	workspace();
	put(".git/config", "[include]\n\tpath = /nonexistent/shared.inc\n");
	g = found();
	CHECK_CONTAINS(g.closed, "includes a file outside the run's view");
	gitpaths_free(&g);
	/* ... in a home directory, or in /tmp, which the run's view replaces. */
	workspace();
	put(".git/config", "[include]\n\tpath = ~/.gitconfig.local\n");
	g = found();
	CHECK_CONTAINS(g.closed, "home directory");
	gitpaths_free(&g);
	workspace();
	put(".git/config", "[include]\n\tpath = /tmp/shared.inc\n");
	g = found();
	CHECK_CONTAINS(g.closed, "outside the run's view"); /* not there */
	gitpaths_free(&g);
	workspace();
	put(".git/config", "[include]\n\tpath = ../local.inc\n");
	FILE *tf = fopen("/tmp/test_gitpaths-shared.inc", "w");
	if (tf)
		fclose(tf);
	sh("ln -s /tmp/test_gitpaths-shared.inc", "local.inc");
	g = found();
	CHECK_CONTAINS(g.closed, "includes a file in /tmp"); /* there, but the run's own */
	gitpaths_free(&g);
	unlink("/tmp/test_gitpaths-shared.inc");
	/* ... and where a symlink in view leads out of it (dangling here). */
	workspace();
	put(".git/config", "[include]\n\tpath = proj.inc\n");
	sh("ln -s /nonexistent/dotfiles/proj.inc", ".git/proj.inc");
	g = found();
	CHECK_CONTAINS(g.closed, "includes a file outside the run's view");
	gitpaths_free(&g);
	workspace();
	put(".git/config", "[include]\n\tpath = dots/proj.inc\n");
	sh("ln -s /nonexistent/dotfiles", ".git/dots");
	g = found();
	CHECK_CONTAINS(g.closed, "includes a file outside the run's view");
	gitpaths_free(&g);
	/* Includes that include themselves end at git's depth, closed. */
	workspace();
	put(".git/config", "[include]\n\tpath = ../a.inc\n");
	put("a.inc", "[include]\n\tpath = a.inc\n\tpath = a.inc\n[core]\n\thooksPath = h\n");
	g = found();
	CHECK_CONTAINS(g.closed, "deeper than git's limit");
	gitpaths_free(&g);
}

/* What the review of session 33 found, each as git reads it. */
TEST(as_git_reads_it)
{
	workspace();
	sh("mkdir -p", "src");
	sh("mkdir -p", ".githooks");
	sh("mkdir -p", "githooks");
	put("scripts-check", "");
	put(".git/config",
	    "[core]\r\n\thooksPath = \":(optional).githooks\"\r\n"
	    "[alias]\r\n\tl = \"!git log --format='%h / %s'\"\r\n"
	    "\tfmt = !npx prettier --write src/\r\n"
	    "\tlg = -c core.pager=./tools/p log\r\n"
	    "\tci = \"!echo a \\\r\n b\"\r\n"
	    "\tlint = !sh -c './scripts/lint.sh --fix' 2>/dev/null\r\n"
	    "[credential]\r\n\thelper = \"!./tools/cred.sh\"\r\n"
	    "[hook \"lint\"]\r\n\tcommand = node --require=./tools/x.js \\\"./my tools/lint.sh\\\"\r\n"
	    "\tevent = pre-commit\r\n"
	    "[core]\n\tfsmonitor = ./tools/last.sh\\");
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/.githooks/pre-commit", ws);
	CHECK(symlink("../scripts-check", p) == 0);
	sh("rm -rf", ".git/hooks");
	snprintf(p, sizeof(p), "%s/.git/hooks", ws);
	CHECK(symlink("../githooks", p) == 0);
	snprintf(p, sizeof(p), "%s/githooks/pre-push", ws);
	CHECK(symlink("../pushed.sh", p) == 0);
	struct gitpaths g = found();
	CHECK(!g.closed);
	CHECK_CONTAINS(why(&g, ".githooks/x", false), "core.hooksPath");
	CHECK_CONTAINS(why(&g, ".GITHOOKS/x", true), "core.hooksPath"); /* a casefolded directory */
	CHECK_CONTAINS(why(&g, "scripts-check", false), "symlink");	/* from inside hooksPath */
	CHECK_CONTAINS(why(&g, "githooks/x", false), "symlink");	/* .git/hooks is one */
	CHECK_CONTAINS(why(&g, "pushed.sh", false), "symlink");		/* from where githooks is */
	CHECK_CONTAINS(why(&g, "tools/p", false), "alias");
	CHECK_CONTAINS(why(&g, "tools/cred.sh", false), "credential.helper");
	CHECK_CONTAINS(why(&g, "tools/x.js", false), "hook.*.command");
	CHECK_CONTAINS(why(&g, "my tools/lint.sh", false), "hook.*.command");
	CHECK_CONTAINS(why(&g, "tools/last.sh", false), "core.fsmonitor"); /* after a CRLF continuation */
	CHECK_CONTAINS(why(&g, "scripts/lint.sh", false), "an alias");	   /* sh -c '...' */
	CHECK(!gitpaths_why(&g, "/dev/null", false, &(bool){false})); /* 2>/dev/null: not the run's to write */
	/* Data, not a program: a lone "/", an existing directory. */
	CHECK(!why(&g, "src/a.c", true));
	CHECK(!gitpaths_why(&g, "/tmp/x", true, &(bool){false}));
	gitpaths_free(&g);
}

/* Nested repositories are read as writes reach them, each once; past
 * GITREPOS_MAX the oldest is read again. */
TEST(repositories_read_as_met)
{
	workspace();
	put(".git/config", "[core]\n\thooksPath = top-hooks\n");
	sh("mkdir -p", "vendor/dep/.git");
	put("vendor/dep/.git/config", "[core]\n\thooksPath = .githooks\n");
	static struct gitrepos rs;
	const char *trees[] = {ws};
	rs.trees = trees;
	rs.n_trees = 1;
	int proc = open("/proc", O_PATH | O_DIRECTORY);
	char dep[PATH_MAX + 16];
	snprintf(dep, sizeof(dep), "%s/vendor/dep", ws);
	gitrepos_visit(&rs, proc, ws, 1, 1);
	CHECK(!why_all(&rs, "vendor/dep/.githooks/x"));
	gitrepos_visit(&rs, proc, dep, 1, 2);
	gitrepos_visit(&rs, proc, dep, 1, 2);
	CHECK_EQ_INT(rs.n, 2);
	CHECK_CONTAINS(why_all(&rs, "vendor/dep/.githooks/x"), "core.hooksPath");
	CHECK_CONTAINS(why_all(&rs, "top-hooks/x"), "core.hooksPath");
	CHECK(!why_all(&rs, ".githooks/x"));
	char other[PATH_MAX + 16];
	for (int i = 0; i < GITREPOS_MAX; i++) {
		snprintf(other, sizeof(other), "%s/o%d", ws, i);
		gitrepos_visit(&rs, proc, other, 1, 100 + (ino_t)i);
	}
	CHECK_EQ_INT(rs.n, GITREPOS_MAX);
	CHECK(!why_all(&rs, "vendor/dep/.githooks/x"));
	gitrepos_visit(&rs, proc, dep, 1, 2);
	CHECK_CONTAINS(why_all(&rs, "vendor/dep/.githooks/x"), "core.hooksPath");
	/* The person edits the config during the run: read again at the next
	 * write. */
	put("vendor/dep/.git/config", "[core]\n\thooksPath = other-hooks\n");
	gitrepos_visit(&rs, proc, dep, 1, 2);
	CHECK_CONTAINS(why_all(&rs, "vendor/dep/other-hooks/x"), "core.hooksPath");
	CHECK(!why_all(&rs, "vendor/dep/.githooks/x"));
	/* ... and links a hook out of .git. */
	sh("mkdir -p", "vendor/dep/.git/hooks");
	gitrepos_visit(&rs, proc, dep, 1, 2);
	sh("ln -s ../../scripts/pc", "vendor/dep/.git/hooks/pre-commit");
	gitrepos_visit(&rs, proc, dep, 1, 2);
	CHECK_CONTAINS(why_all(&rs, "vendor/dep/scripts/pc"), "symlink");
	/* Another working tree moved in under a name read before (another
	 * .git): read again at once. */
	put("vendor/dep/.git/config", "[core]\n\thooksPath = third-hooks\n");
	gitrepos_visit(&rs, proc, dep, 1, 3);
	CHECK_CONTAINS(why_all(&rs, "vendor/dep/third-hooks/x"), "core.hooksPath");
	CHECK(!why_all(&rs, "vendor/dep/other-hooks/x"));
	for (int i = 0; i < GITREPOS_MAX; i++)
		gitpaths_free(&rs.repo[i]);
	close(proc);
}

/* Start-up binds a workspace's shared git directory only when the
 * workspace's gitfile and that directory are the owner's, the directory is
 * a git directory outside the workspace, and it claims this worktree. */
TEST(the_shared_git_dir_outside)
{
	char wt[PATH_MAX + 8], want[PATH_MAX + 32], line[PATH_MAX + 64];
	struct stat st;
	workspace();
	snprintf(want, sizeof(want), "%s/.git", ws);
	snprintf(wt, sizeof(wt), "%s/wt", ws);
	sh("mkdir -p", ".git/worktrees/wt");
	sh("mkdir -p", ".git/objects");
	sh("mkdir -p", ".git/refs");
	sh("mkdir -p", "wt");
	put(".git/HEAD", "ref: refs/heads/main\n");
	put("wt/.git", "gitdir: ../.git/worktrees/wt\n");
	put(".git/worktrees/wt/commondir", "../..\n");
	snprintf(line, sizeof(line), "%s/.git\n", wt);
	put(".git/worktrees/wt/gitdir", line);
	char *got = gitdir_outside(wt, getuid(), &st);
	CHECK_STR(got, want);
	free(got);
	/* Not another user's. */
	CHECK(!gitdir_outside(wt, getuid() + 1, &st));
	/* Nor one inside the workspace: the workspace's own .git. */
	CHECK(!gitdir_outside(ws, getuid(), &st));
	/* Nor a gitfile others may write. */
	sh("chmod g+w", "wt/.git");
	CHECK(!gitdir_outside(wt, getuid(), &st));
	sh("chmod g-w", "wt/.git");
	/* Nor a git directory that points back at another worktree. */
	put(".git/worktrees/wt/gitdir", "/elsewhere/.git\n");
	CHECK(!gitdir_outside(wt, getuid(), &st));
	put(".git/worktrees/wt/gitdir", line);
	/* Nor a shared directory that is no git directory, or does not hold it. */
	sh("rm -rf", ".git/refs");
	CHECK(!gitdir_outside(wt, getuid(), &st));
	sh("mkdir -p", ".git/refs");
	put(".git/worktrees/wt/commondir", "/tmp\n");
	CHECK(!gitdir_outside(wt, getuid(), &st));
	/* Nor a plain directory a gitfile names. */
	sh("mkdir -p", "plain");
	put("wt/.git", "gitdir: ../plain\n");
	CHECK(!gitdir_outside(wt, getuid(), &st));
	/* Nor a .git symlink. */
	sh("rm -f", "wt/.git");
	sh("ln -s ../.git", "wt/.git");
	CHECK(!gitdir_outside(wt, getuid(), &st));
	/* A submodule's: its git directory is the shared one, under the
	 * superproject's .git/modules, and the superproject holds it. */
	sh("rm -f", "wt/.git");
	sh("mkdir -p", ".git/modules/wt/objects");
	sh("mkdir -p", ".git/modules/wt/refs");
	put(".git/modules/wt/HEAD", "ref: refs/heads/main\n");
	put("wt/.git", "gitdir: ../.git/modules/wt\n");
	snprintf(want, sizeof(want), "%s/.git/modules/wt", ws);
	got = gitdir_outside(wt, getuid(), &st);
	CHECK_STR(got, want);
	free(got);
	/* Reading: a line that does not fit is an error, never cut. */
	char small[8];
	CHECK(gitdir_first_line(want, "", small, sizeof(small)) == -1); /* a directory */
	snprintf(line, sizeof(line), "%s/wt/.git", ws);
	CHECK(gitdir_first_line(line, "gitdir: ", small, sizeof(small)) == -1);
	CHECK(gitdir_first_line("/nonexistent/x", "", small, sizeof(small)) == 0);
	/* No repository at all. */
	sh("rm -f", "wt/.git");
	CHECK(!gitdir_outside(wt, getuid(), &st));
}

/* Command forms the first tokenizer missed (review s33), and keys of
 * tools git or git-lfs run. */
TEST(command_forms_and_tool_keys)
{
	workspace();
	sh("mkdir -p", "tools");
	put(".git/config", "[alias]\n"
			   "\tt = !cd tools && ./run.sh\n"
			   "\ttop = !\"$(git rev-parse --show-toplevel)/scripts/top.sh\" --all\n"
			   "\tbare = !$(git rev-parse --show-toplevel)/scripts/bare.sh\n"
			   "\tvar = !\\\"$TOP\\\"/hack/var.sh\n"
			   "\topt = !tool -F./conf/opt.sh --long=./long.sh\n"
			   "[lfs \"customtransfer.x\"]\n"
			   "\tpath = ./bin/lfs-agent\n"
			   "[tar \"tgz\"]\n"
			   "\tcommand = ./bin/gz\n"
			   "[core]\n"
			   "\talternateRefsCommand = ./bin/refs\n");
	struct gitpaths g = found();
	CHECK(!g.closed);
	CHECK_CONTAINS(why(&g, "tools/run.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "scripts/top.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "scripts/bare.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "hack/var.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "conf/opt.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "long.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "bin/lfs-agent", false), "lfs.customtransfer");
	CHECK_CONTAINS(why(&g, "bin/gz", false), "tar.*.command");
	CHECK_CONTAINS(why(&g, "bin/refs", false), "alternateRefsCommand");
	/* The directory cd goes to is data; the rest of the tree is free. */
	CHECK(!why(&g, "tools", false));
	CHECK(!why(&g, "tools/other.sh", true));
	CHECK(!why(&g, "scripts/other.sh", true));
	gitpaths_free(&g);
	/* A cd's directory is not a program, even when it is not there yet;
	 * a $HOME path is not in the tree. */
	workspace();
	put(".git/config", "[alias]\n\tb = !cd -P build/out && ./run\n\th = !$HOME/bin/tool --fix\n");
	g = found();
	CHECK(!g.closed);
	CHECK(!why(&g, "build/out", false)); /* mkdir may make it */
	CHECK_CONTAINS(why(&g, "build/out/run", false), "alias");
	CHECK(!why(&g, "bin/tool", true));
	gitpaths_free(&g);
	/* After a cd the actor cannot follow (git's own `cd "${GIT_PREFIX:-.}"`
	 * idiom: the directory the person typed the alias in), a relative
	 * path could be anywhere in the tree: closed. */
	workspace();
	put(".git/config", "[alias]\n\tf = !cd \"${GIT_PREFIX:-.}\" && ./fmt.sh\n");
	g = found();
	CHECK_CONTAINS(g.closed, "after a cd the file actor cannot follow");
	gitpaths_free(&g);
	workspace();
	put(".git/config", "[alias]\n\tf = !cd \"${GIT_PREFIX:-.}\" && make\n");
	g = found();
	CHECK(!g.closed); /* no path follows */
	gitpaths_free(&g);
	/* A path under $GIT_PREFIX, a bare cd (home), cd ~/x: closed too. */
	const char *lost[] = {"!\"${GIT_PREFIX:-.}\"/fmt.sh", "!cd && ./x.sh", "!cd ~/src && ./x.sh",
			      "!cd \"$X\" && \"$(pwd)\"/x.sh"};
	for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
		char cfg[256];
		workspace();
		snprintf(cfg, sizeof(cfg), "[alias]\n\tf = %s\n", lost[i]);
		put(".git/config", cfg);
		g = found();
		CHECK(g.closed != NULL);
		gitpaths_free(&g);
	}
	/* The top, named as git names it: nothing lost. */
	workspace();
	put(".git/config", "[alias]\n\tt = !cd $(git rev-parse --show-toplevel) && ./top.sh\n"
			   "\tq = !cd \\\"$(git rev-parse --show-toplevel)\\\" && ./q.sh\n");
	g = found();
	CHECK(!g.closed);
	CHECK_CONTAINS(why(&g, "top.sh", false), "alias");
	CHECK_CONTAINS(why(&g, "q.sh", false), "alias");
	gitpaths_free(&g);
}

/* What the agents' and editors' configuration at the top runs
 * (agentpaths.c), kept as a git command's pieces are, with or without a
 * repository there; the denial is the agent's (`agent`). */
TEST(agents_configuration)
{
	bool agent = false;
	workspace();
	sh("mkdir -p", ".claude");
	sh("mkdir -p", ".vscode");
	sh("mkdir -p", "scripts");
	put(".claude/settings.json", "{\"hooks\": {\"PostToolUse\": [{\"hooks\": [{\"type\": \"command\", "
				     "\"command\": \"\\\"$CLAUDE_PROJECT_DIR\\\"/scripts/fmt.sh\"}]}]},\n"
				     " \"permissions\": {\"allow\": [\"Edit(./src/a.c)\"]}}\n");
	put(".mcp.json", "{\"mcpServers\": {\"x\": {\"command\": \"node\", \"args\": [\"./mcp/server.js\"]},"
			 " \"y\": {\"command\": \"python3 hook.py run\"},"
			 " \"z\": {\"command\": \"cd scripts && python3 lint.py --fix=auto.cfg\"}}}");
	put("hook.py", "");
	put("scripts/lint.py", "");
	put("scripts/auto.cfg", "");
	put(".vscode/settings.json", "{ // JSONC\n \"python.defaultInterpreterPath\": \".venv/bin/python\",\n"
				     " \"terminal.integrated.env.linux\": {\"BASH_ENV\": \"tools/rc\"}, }\n");
	/* Zed: the executable a command names, and its PATH's directories whole
	 * (review s37 fixes M1); not the top, a home or an install's. */
	sh("mkdir -p", ".zed");
	sh("mkdir -p", "bin");
	put(".zed/settings.json", "{\"context_servers\": {\"s\": {\"command\": {\"path\": \"./zbin/srv\","
				  " \"env\": {\"PATH\": \"${workspaceFolder}/bin:.:$HOME/x:node_modules/.bin:${env:PATH}:"
				  "${env:HOME}/hbin:${userHome}/ubin:tools/${env:ARCH}:${unknown}/zz:${workspaceFolder}/lnk\","
				  " \"LD_LIBRARY_PATH\": \"./lib\"}},"
				  " \"t\": {\"command\": \"PATH=./pbin:$PATH mytool\"},"
				  " \"u\": {\"command\": \"PATH=\\\"$(pwd)/qbin:$PATH\\\" a; PATH+=:rbin b; cd sub && PATH=sbin:$PATH c\"},"
				  " \"v\": {\"command\": \"x\", \"env\": {\"PATH\": \"vbin${PATH:+:$PATH}:${workspaceFolder:p}${/}wbin${pathSeparator}$HOMEBREW/h\"}}}}");
	put(".vscode/launch.json", "{\"configurations\": [{\"program\": \"build/app\", \"env\": {\"LD_LIBRARY_PATH\": "
				   "\"build/lib\"}, \"preLaunchTask\": \"x\"}]}");
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/lnk", ws);
	CHECK(symlink(".", p) == 0);
	put(".git/config", "[core]\n\thooksPath = .githooks\n");
	struct gitpaths g = found();
	CHECK(g.closed == NULL);
	snprintf(p, sizeof(p), "%s/scripts/fmt.sh", ws);
	CHECK_CONTAINS(gitpaths_why(&g, p, false, &agent), "AI agent or editor runs it (.claude/settings.json)");
	CHECK(agent);
	CHECK_CONTAINS(why(&g, "mcp/server.js", false), "(.mcp.json)");
	CHECK_CONTAINS(why(&g, "mcp", true), "(.mcp.json)"); /* on the way to it */
	CHECK_CONTAINS(why(&g, "tools/rc", false), "(.vscode/settings.json)");
	CHECK(!why(&g, ".venv/bin/python", false)); /* where a tool is installed: python -m venv writes it */
	CHECK(!why(&g, "src/a.c", false)); /* a permission rule: not run */
	CHECK(!why(&g, "scripts/other.sh", false));
	CHECK_CONTAINS(why(&g, "hook.py", false), "(.mcp.json)"); /* a bare name that is a file at the top */
	CHECK(!why(&g, "run", true));                             /* one that is not: a word */
	CHECK_CONTAINS(why(&g, "zbin/srv", false), "(.zed/settings.json)");
	CHECK_CONTAINS(why(&g, "bin/new-tool", true), "(.zed/settings.json)"); /* in a PATH's directory */
	CHECK(!why(&g, "new.txt", true));                                     /* `.`: not the whole tree */
	CHECK(!why(&g, "x/y", true));
	CHECK(!why(&g, "node_modules/.bin/tsc", true));
	/* review s38: a PATH set in a command, LD_LIBRARY_PATH, VS Code's home
	 * variables, a later variable (the directory before it, whole), an
	 * unknown one, and a directory that leads to the top (not the tree). */
	CHECK_CONTAINS(why(&g, "pbin/mytool", true), "(.zed/settings.json)");
	CHECK_CONTAINS(why(&g, "lib/libc.so.6", true), "(.zed/settings.json)");
	CHECK(!why(&g, "hbin/x", true));
	CHECK(!why(&g, "ubin/x", true));
	CHECK_CONTAINS(why(&g, "tools/x86_64/t", true), "(.zed/settings.json)");
	CHECK(!why(&g, "zz/x", true));
	CHECK(!why(&g, "src/a.c", false));
	/* review s38 second: $(pwd), PATH+=, a cd before it, a variable glued
	 * to a name, VS Code's separators, $HOMEBREW is no home */
	CHECK_CONTAINS(why(&g, "qbin/t", true), "(.zed/settings.json)");
	CHECK_CONTAINS(why(&g, "rbin/t", true), "(.zed/settings.json)");
	CHECK_CONTAINS(why(&g, "sub/sbin/t", true), "(.zed/settings.json)");
	CHECK_CONTAINS(why(&g, "vbin/t", true), "(.zed/settings.json)");
	CHECK_CONTAINS(why(&g, "wbin/t", true), "(.zed/settings.json)");
	CHECK(!why(&g, "build/lib/libx.so", true)); /* a launch's env: a build's output, not kept */
	CHECK_CONTAINS(why(&g, "scripts/lint.py", false), "(.mcp.json)"); /* where a cd went */
	CHECK_CONTAINS(why(&g, "scripts/auto.cfg", false), "(.mcp.json)"); /* a piece after '=' */
	snprintf(p, sizeof(p), "%s/.githooks/x", ws);
	CHECK_CONTAINS(gitpaths_why(&g, p, false, &agent), "core.hooksPath");
	CHECK(!agent);
	gitpaths_free(&g);
	/* No repository at the top: read all the same. */
	sh("rm -rf", ".git");
	g = found();
	CHECK_CONTAINS(why(&g, "scripts/fmt.sh", false), "(.claude/settings.json)");
	gitpaths_free(&g);
	/* Fail closed: a configuration behind a dangling symlink (kept
	 * outside the run's view), or one over 1 MiB. */
	sh("rm -rf", ".claude");
	sh("ln -s /nonexistent/claude-settings", ".claude");
	g = found();
	CHECK_CONTAINS(g.closed, "cannot read an AI agent's project configuration");
	CHECK(g.closed_agent);
	CHECK_STR(gitpaths_why(&g, p, false, &agent), g.closed);
	CHECK(agent);
	gitpaths_free(&g);
	sh("rm -f", ".claude");
	sh("truncate -s 2M", ".mcp.json");
	g = found();
	CHECK_CONTAINS(g.closed, "over 1 MiB");
	gitpaths_free(&g);
}

int main(void)
{
	RUN(no_config_no_paths);
	RUN(hooks_path_includes_and_commands);
	RUN(symlinks_in_the_git_dir);
	RUN(a_gitfile_and_its_commondir);
	RUN(fails_closed);
	RUN(repositories_read_as_met);
	RUN(as_git_reads_it);
	RUN(the_shared_git_dir_outside);
	RUN(command_forms_and_tool_keys);
	RUN(agents_configuration);
	sh("rm -rf", "");
	return harness_done();
}
