/*
 * test_directexec.c - which commands run without bash, split into which
 * words (asrun/directexec.c).  Every command that has anything bash would
 * expand, redirect, or run itself must come back 0 (bash reads it); the
 * exec itself is tested through the real daemon (tests/e2e/directexec.sh).
 */
#include "directexec.h"
#include "harness.h"

static char words[4096];
static char *argv_[DIRECTEXEC_ARGV_MAX + 1];

static size_t split(const char *cmd)
{
	return directexec_split(cmd, words, argv_, DIRECTEXEC_ARGV_MAX);
}

TEST(plain_words)
{
	CHECK_EQ_INT(split("ls -l"), 2);
	CHECK_STR(argv_[0], "ls");
	CHECK_STR(argv_[1], "-l");
	CHECK(argv_[2] == NULL);
	CHECK_EQ_INT(split(" \tgit   status\t"), 2);
	CHECK_STR(argv_[0], "git");
	CHECK_STR(argv_[1], "status");
	CHECK_EQ_INT(split("/usr/bin/true"), 1);
	CHECK_EQ_INT(split("./run.sh --jobs=4 a,b x:y u@h 50% +1 _"), 8);
	CHECK_STR(argv_[2], "a,b");
	CHECK_STR(argv_[7], "_");
}

TEST(quotes_removed_as_bash_does)
{
	CHECK_EQ_INT(split("grep -rn 'a b' \"c d\" src"), 5);
	CHECK_STR(argv_[2], "a b");
	CHECK_STR(argv_[3], "c d");
	CHECK_EQ_INT(split("/usr/bin/printf x'y'\"z\"w '' \"\""), 4);
	CHECK_STR(argv_[1], "xyzw");
	CHECK_STR(argv_[2], "");
	CHECK_STR(argv_[3], "");
	/* Inside quotes the shell's characters are only characters. */
	CHECK_EQ_INT(split("grep '$HOME|*;`x`' \"a|b;c*&>!\""), 3);
	CHECK_STR(argv_[1], "$HOME|*;`x`");
	CHECK_STR(argv_[2], "a|b;c*&>!");
	CHECK_EQ_INT(split("grep 'caf\xc3\xa9\nline'"), 2);
	CHECK_STR(argv_[1], "caf\xc3\xa9\nline");
	CHECK_EQ_INT(split("\"ls\""), 1);
	CHECK_STR(argv_[0], "ls");
}

TEST(anything_the_shell_reads_goes_to_bash)
{
	/* clang-format off */
	static const char *const shell[] = {
		"ls *.c", "ls a?", "ls [ab]", "ls ~", "ls ~/x", "ls {a,b}", "ls # c", "ls $HOME", "ls \"$HOME\"",
		"ls \"`id`\"", "ls \"a\\b\"", "ls a\\ b", "ls && ls", "ls || ls", "ls; ls", "ls\nls", "ls | wc",
		"ls > out", "ls < in", "ls 2>&1", "ls &", "(ls)", "ls $(id)", "ls !", "ls 'open", "ls \"open",
		"ls caf\xc3\xa9", "ls \x01", "FOO=1 ls", "a=b", "'' ls", "\"\"", "", " \t ", NULL};
	/* clang-format on */
	for (size_t i = 0; shell[i]; i++) {
		size_t n = split(shell[i]);
		if (n != 0)
			fprintf(stderr, "# split(\"%s\") == %zu, expected 0\n", shell[i], n);
		CHECK_EQ_INT(n, 0);
	}
}

TEST(keywords_and_builtins_go_to_bash)
{
	/* clang-format off */
	static const char *const own[] = {"true",   "false x", "echo hi", "printf %s x", "pwd",
	                                  "cd /",   "exec ls", "kill 1",  "test -f x",   "if",
	                                  "time ls", "exit 3",  "'cd' /", "source x",    "command ls", NULL};
	/* clang-format on */
	for (size_t i = 0; own[i]; i++)
		CHECK_EQ_INT(split(own[i]), 0);
	/* A program whose name only starts like a builtin is a program. */
	CHECK_EQ_INT(split("truex"), 1);
	CHECK_EQ_INT(split("echoes"), 1);
}

TEST(word_limit)
{
	char *few[3];
	CHECK_EQ_INT(directexec_split("a b", words, few, 2), 2);
	CHECK_EQ_INT(directexec_split("a b c", words, few, 2), 0);
}

TEST(environment_bash_would_change)
{
	char *plain[] = {"PATH=/usr/bin", "HOME=/home/sandbox", "UID_X=1", "PWDX=1", "FOO=a=b", NULL};
	CHECK(directexec_env_plain(plain));
	/* clang-format off */
	static const char *const special[] = {"SHLVL=3",   "PWD=/tmp",      "OLDPWD=/", "_=x",     "OPTIND=2",
	                                      "RANDOM=1",  "BASH=/x",       "BASH_COMPAT=50", "BASHPID=1",
	                                      "EXECIGNORE=*", "SECONDS=9", "PS1=$", "LC_ALL=xx", NULL};
	/* clang-format on */
	for (size_t i = 0; special[i]; i++) {
		char *env[] = {"PATH=/usr/bin", (char *)special[i], NULL};
		CHECK(!directexec_env_plain(env));
	}
}

int main(void)
{
	RUN(plain_words);
	RUN(quotes_removed_as_bash_does);
	RUN(anything_the_shell_reads_goes_to_bash);
	RUN(keywords_and_builtins_go_to_bash);
	RUN(word_limit);
	RUN(environment_bash_would_change);
	return harness_done();
}
