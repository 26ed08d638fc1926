/*
 * test_actor.c - the names and paths the run's actor refuses (actor.c): what
 * git would take for a repository, and where it guards.  The actor itself,
 * in a real sandbox, is tested end to end (tests/e2e/sandbox.sh ".git: ...").
 */
#include "actor_serve.h"
#include "guardnames.h"
#include "harness.h"

#include <string.h>

static bool name(const char *n)
{
	return guard_name_is_git(n, strlen(n));
}

TEST(git_names)
{
	CHECK(name(".git"));
	CHECK(name(".GIT"));
	CHECK(name(".Git"));
	CHECK(name(".git."));
	CHECK(name(".git "));
	CHECK(name(".git. ."));
	CHECK(name("git~1"));
	CHECK(name("GIT~1"));
	/* Code points HFS+ (git's own list) and older casefolding ext4 (every
	 * Default_Ignorable_Code_Point: review s37 fixes M5) ignore. */
	CHECK(name(".g\xe2\x80\x8cit"));
	CHECK(name(".\xef\xbb\xbfgit"));
	CHECK(name(".gi\xe2\x81\xaft"));
	CHECK(name(".GIT\xe2\x80\xae"));
	CHECK(name(".g\xe2\x80\x8bit"));     /* U+200B */
	CHECK(name(".g\xc2\xadit"));          /* U+00AD soft hyphen */
	CHECK(name(".gi\xe2\x81\xa0t"));     /* U+2060 */
	CHECK(name(".git\xef\xb8\x8f"));     /* U+FE0F */
	CHECK(name(".g\xf3\xa0\x80\x81it")); /* U+E0001, four bytes */
	CHECK(!name(".g\xc2\xaeit"));         /* U+00AE is a character */
	CHECK(!name(".g\xe2\x80it"));         /* a broken sequence is not skipped */
	CHECK(!name(".g\xe0\x82\xadit"));     /* nor an overlong U+00AD: another name */
	CHECK(!name(".gitx\xe2\x80\x8c"));
	CHECK(!name(".gitignore"));
	CHECK(!name(".gitmodules"));
	CHECK(!name(".github"));
	CHECK(!name("git"));
	CHECK(!name(".gi"));
	CHECK(!name("x.git"));
	CHECK(!name("git~2"));
	CHECK(!name(""));
}

TEST(guarded_paths)
{
	const char *const trees[] = {"/home/p/ws", "/srv/out/"};
	CHECK(actor_path_in_git("/home/p/ws/vendor/x/.git", trees, 2));
	CHECK(actor_path_in_git("/home/p/ws/vendor/x/.git/config", trees, 2));
	CHECK(actor_path_in_git("/home/p/ws/.GIT/hooks/pre-commit", trees, 2));
	CHECK(actor_path_in_git("/srv/out/a/git~1/x", trees, 2));
	CHECK(!actor_path_in_git("/home/p/ws/vendor/x/.gitignore", trees, 2));
	CHECK(!actor_path_in_git("/home/p/ws/src/main.c", trees, 2));
	/* Outside the guarded trees (the run's /tmp): throw-away repositories. */
	CHECK(!actor_path_in_git("/tmp/r/.git/config", trees, 2));
	/* A .git above the workspace is not the run's to judge (the person's
	 * workspace may itself sit in a repository's .git/modules). */
	const char *const inside[] = {"/home/p/repo/.git/modules/ws"};
	CHECK(!actor_path_in_git("/home/p/repo/.git/modules/ws/src/a.c", inside, 1));
	CHECK(actor_path_in_git("/home/p/repo/.git/modules/ws/sub/.git/x", inside, 1));
	/* A tree that is only a prefix of the name is not the tree. */
	CHECK(!actor_path_in_git("/home/p/wsx/.git/config", trees, 2));
}

/* The AI agents' project configuration (review s36): compared as .git is. */
TEST(agent_config)
{
	const char *const trees[] = {"/home/p/ws"};
	static const char *const yes[] = {".claude", ".CLAUDE", ".mcp.json", ".Mcp.Json", ".cursor", ".gemini",
	                                  ".codex", ".vscode", ".claude.", ".c\xe2\x80\x8claude", ".cla\xe2\x80\x8bude",
	                                  ".vs\xe2\x81\xa0" "code", ".zed", ".Roo",
	                                  ".kiro", "opencode.json", "opencode.jsonc", ".aider.conf.yml",
	                                  /* as a casefolding ext4 or f2fs directory folds them */
	                                  ".cur\xc5\xbfor", ".\xe2\x84\xaaIRO", ".mcp.j\xc5\xbfon", ".v\xc5\xbf" "code"};
	static const char *const no[] = {"claude", ".claudex", ".mcp.json5", "mcp.json", ".cursorrules", ".github",
	                                 ".git", "CLAUDE.md", ".vscodeignore", ".c\xc5\xbflaude", ".cur\xc5or", ""};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		CHECK(guard_name_is_agent_config(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		CHECK(!guard_name_is_agent_config(no[i], strlen(no[i])));
	CHECK(actor_path_in_agent_config("/home/p/ws/.claude/settings.local.json", trees, 1));
	CHECK(actor_path_in_agent_config("/home/p/ws/sub/.vscode/tasks.json", trees, 1));
	CHECK(actor_path_in_agent_config("/home/p/ws/.mcp.json", trees, 1));
	CHECK(!actor_path_in_agent_config("/home/p/ws/src/claude.c", trees, 1));
	/* A .vscode itself and its extensions.json: what scaffolds ship, which runs nothing. */
	CHECK(!actor_path_in_agent_config("/home/p/ws/app/.vscode", trees, 1));
	CHECK(!actor_path_in_agent_config("/home/p/ws/app/.VSCode/Extensions.json", trees, 1));
	CHECK(actor_path_in_agent_config("/home/p/ws/app/.vscode/settings.json", trees, 1));
	CHECK(actor_path_in_agent_config("/home/p/ws/app/.vscode/extensions.json/x", trees, 1));
	CHECK(actor_path_in_agent_config("/home/p/ws/app/.vscode/sub/extensions.json", trees, 1));
	CHECK(actor_path_in_agent_config("/home/p/ws/.claude", trees, 1));
	/* the run's /tmp, and the person's home above the workspace, are not judged */
	CHECK(!actor_path_in_agent_config("/tmp/x/.claude/settings.json", trees, 1));
	CHECK(!actor_path_in_agent_config("/home/p/.claude/settings.json", trees, 1));
}

int main(void)
{
	RUN(git_names);
	RUN(guarded_paths);
	RUN(agent_config);
	return harness_done();
}
