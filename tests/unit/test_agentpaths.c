/*
 * test_agentpaths.c - which strings of an AI agent's or editor's project
 * configuration are taken as what it runs (agentpaths.c): JSON with
 * comments, TOML and YAML as the agents write them.  That the actor keeps
 * their paths is tested in test_gitpaths.c "agents_configuration", and end
 * to end in tests/e2e/sandbox.sh "agent runs: ...".
 */
#include "agentpaths.h"
#include "harness.h"

#include <stdio.h>
#include <string.h>

static char got[8192];

static void collect(void *arg, const char *s, const char *why, enum agentpaths_what what)
{
	(void)arg;
	(void)why;
	size_t n = strlen(got);
	snprintf(got + n, sizeof(got) - n, "%s%s|", what == AGENTPATHS_DIRECTORY ? "dir:" : "", s);
}

/* The strings taken from `text`, each followed by '|'. */
static const char *scan(const char *text, enum agentpaths_syntax syntax)
{
	got[0] = '\0';
	CHECK(agentpaths_scan(text, strlen(text), syntax, "why", collect, NULL) == NULL);
	return got;
}

TEST(claude_settings)
{
	CHECK_STR(
	    scan("{\n"
		 "  // a comment, as VS Code allows\n"
		 "  \"permissions\": {\"allow\": [\"Edit(./src/a.ts)\", \"Bash(npm test)\"]},\n"
		 "  \"hooks\": {\"PostToolUse\": [{\"matcher\": \"Edit|Write\", \"hooks\": [\n"
		 "    {\"type\": \"command\", \"command\": \"./scripts/format.sh \\\"$FILE\\\"\"}]}]},\n"
		 "  \"statusLine\": {\"type\": \"command\", \"command\": \"bin/status\"},\n"
		 "  \"apiKeyHelper\": \"tools/key.sh\", /* trailing comma next */\n"
		 "  \"env\": {\"NODE_OPTIONS\": \"--require ./preload.js\"},\n"
		 "}\n",
		 AGENTPATHS_JSON),
	    "./scripts/format.sh \"$FILE\"|bin/status|tools/key.sh|--require ./preload.js|");
}

TEST(mcp_and_vscode)
{
	CHECK_STR(scan("{\"mcpServers\": {\"local\": {\"command\": \"node\", \"args\": [\"./mcp/server.js\", "
		       "\"--x\"],"
		       " \"cwd\": \".\", \"url\": \"http://x\"}}}",
		       AGENTPATHS_JSON),
		  "node|./mcp/server.js|--x|");
	/* Where tools are installed is not taken (installs in the sandbox
	 * write there), nor anything in it but a command; a terminal's
	 * environment is, its PATH as directories but those of installs. */
	CHECK_STR(scan("{\"python.defaultInterpreterPath\": \".venv/bin/python\", \"files.exclude\": "
		       "{\"**/x\": true},"
		       " \"terminal.integrated.env.linux\": {\"BASH_ENV\": \"./rc\", \"PATH\": "
		       "\"./node_modules/.bin:x\"},"
		       " \"typescript.tsdk\": \"node_modules/typescript/lib\", \"eslint.nodePath\": {\"x\": "
		       "\"./no\", \"command\": \"./yes\"},"
		       " \"editor.fontSize\": 14, \"git.command\": \"\\u002e/esc.sh\"}",
		       AGENTPATHS_JSON),
		  "./rc|dir:x|./yes|./esc.sh|");
	CHECK_STR(scan("{\"version\": \"2.0.0\", \"tasks\": [{\"label\": \"b\", \"type\": \"shell\", "
		       "\"command\": \"./build.sh\","
		       " \"runOptions\": {\"runOn\": \"folderOpen\"}}]}",
		       AGENTPATHS_JSON),
		  "./build.sh|");
	/* opencode: the command is a list */
	CHECK_STR(scan("{\"mcp\": {\"x\": {\"type\": \"local\", \"command\": [\"bun\", \"./srv.ts\"]}}}",
		       AGENTPATHS_JSON),
		  "bun|./srv.ts|");
}

/* Zed: a command's executable is its `path` (review s37 fixes M1), a
 * language server's is `binary.path`; a PATH's directories are taken but
 * those of installs; PYTHONPATH is not (what a tool loads). */
TEST(zed_paths)
{
	CHECK_STR(scan("{\"context_servers\": {\"s\": {\"command\": {\"path\": \"./bin/srv\", \"args\": [\"--x\"],"
		       " \"env\": {\"PATH\": \"./tools:${env:PATH}::.venv/bin\", \"PYTHONPATH\": \"./lib\"}}}},"
		       " \"lsp\": {\"r\": {\"binary\": {\"path\": \"node_modules/.bin/tsserver\", \"arguments\":"
		       " [\"--stdio\"]}}, \"p\": {\"binary\": {\"path\": \"./bin/pyls\"}}},"
		       " \"clangd.path\": \"./not-in-a-command\", \"file_scan_exclusions\": {\"path\": \"./no\"}}",
		       AGENTPATHS_JSON),
		  "./bin/srv|--x|dir:./tools|dir:${env:PATH}|--stdio|./bin/pyls|");
	CHECK_STR(scan("[mcp_servers.x]\ncommand = \"x\"\nenv.PATH = \"bin:${HOME}/y\"\n", AGENTPATHS_TOML),
		  "x|dir:bin|dir:${HOME}/y|");
	CHECK_STR(scan("env:\n  PATH: ./b\n  LD_LIBRARY_PATH: ./l\n  PYTHONPATH: ./p\n", AGENTPATHS_YAML), "dir:./b|dir:./l|");
}

TEST(codex_toml)
{
	CHECK_STR(
	    scan("model = \"o3\"\n"
		 "notify = [\"python3\", \"./notify.py\"]\n"
		 "# a comment with command = \"./no\"\n"
		 "[mcp_servers.docs]\n"
		 "command = 'node'\n"
		 "args = [\n  \"./docs/server.js\", # a comment\n  \"--port\",\n]\n"
		 "startup_timeout_sec = 10\n"
		 "[mcp_servers.docs.env]\n"
		 "NODE_OPTIONS = \"--require ./x.js\"\n"
		 "[mcp_servers.inline]\n"
		 "command = \"\"\"./multi\nline\"\"\"\n"
		 "[profiles.fast]\n"
		 "model = \"./not-run\"\n"
		 "servers = { a = { command = \"./nested.sh\" }, b = \"./no\" }\n",
		 AGENTPATHS_TOML),
	    "python3|./notify.py|node|./docs/server.js|--port|--require ./x.js|./multi\nline|./nested.sh|");
}

TEST(yaml)
{
	CHECK_STR(scan("# aider\n"
		       "model: sonnet\n"
		       "lint-cmd: \"python: ./lint.sh\"\n"
		       "test-cmd: make test # a comment\n"
		       "auto-lint: true\n",
		       AGENTPATHS_YAML),
		  "python: ./lint.sh|make test|");
	CHECK_STR(scan("name: x\n"
		       "mcpServers:\n"
		       "  - name: local\n"
		       "    command: uv\n"
		       "    args:\n"
		       "      - run\n"
		       "      - ./srv.py\n"
		       "    env:\n"
		       "      A: ./a.sh\n"
		       "  - name: other\n"
		       "    args: [\"./flow.py\", x]\n"
		       "rules:\n"
		       "  - ./not-run.md\n"
		       "prompt: |\n"
		       "  not ./run\n"
		       "hook-cmd: |\n"
		       "  ./block.sh\n"
		       "  second\n",
		       AGENTPATHS_YAML),
		  "uv|run|./srv.py|./a.sh|  ./flow.py   x |./block.sh|second|");
}

/* Fail closed on what the scanner does not follow; no input stops it. */
TEST(bounds)
{
	char deep[200];
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	got[0] = '\0';
	CHECK(agentpaths_scan(deep, strlen(deep), AGENTPATHS_JSON, "why", collect, NULL) != NULL);
	const char *odd[] = {"{\"command\": \"unterminated",
			     "{\"a\":",
			     "[[[]",
			     "\"",
			     "/*",
			     "x = [\"a\", }",
			     "a = {",
			     "x = [ \x01 ]",
			     "[tab",
			     "command = \"\\",
			     "k: [\"a",
			     "- - -",
			     "a:\n  - b: |\n",
			     "\xef\xbb\xbf{}"};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		for (int syntax = AGENTPATHS_JSON; syntax <= AGENTPATHS_YAML; syntax++)
			(void)agentpaths_scan(odd[i], strlen(odd[i]), (enum agentpaths_syntax)syntax, "why",
					      collect, NULL);
	char nul[] = "x = [\"a\", \0 ]";
	CHECK(agentpaths_scan(nul, sizeof(nul) - 1, AGENTPATHS_TOML, "why", collect, NULL) == NULL);
}

int main(void)
{
	RUN(claude_settings);
	RUN(mcp_and_vscode);
	RUN(zed_paths);
	RUN(codex_toml);
	RUN(yaml);
	RUN(bounds);
	return harness_done();
}
