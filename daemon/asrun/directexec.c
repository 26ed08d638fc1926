/*
 * directexec.c - see directexec.h.
 *
 * What bash does with `bash -c 'ls -l "a b"'` (bash 5.2, execute_cmd.c,
 * the ONESHOT case of a lone simple command): no fork; the words are
 * expanded and their quotes removed; the first is looked up as a function,
 * a builtin, then in PATH (the first directory holding an executable
 * file); SHLVL, raised by one at start-up, is lowered by one again because
 * the program replaces the shell; PWD is set from getcwd() when the
 * environment has none; `_` is set to the program's path; then execve.
 * When the word is not found or execve fails, bash says so itself.
 *
 * The words accepted here are the ones whose expansion is the identity:
 * unquoted characters that no expansion or operator uses, '...' holding
 * anything but ', "..." holding nothing that expands ($, `, \).  No
 * globbing (* ? [), no tilde, no braces, no comments, no redirections, no
 * operators, no newline.  Functions cannot exist (BASH_FUNC_* is refused,
 * common/profile.c), nor aliases (a non-interactive shell expands none).
 */
#include "directexec.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* bash 5.2's `compgen -k` and `compgen -b`: a first word bash itself
 * would run.  Some have a program of the same name (echo, printf, pwd,
 * kill, test, true, false) that differs in corners (`echo --help`, `pwd`
 * through a symlink), so they all go to bash. */
/* clang-format off */
static const char *const shell_words[] = {
	"!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function",
	"if", "in", "select", "then", "time", "until", "while", "{", "}",
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
	"complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec",
	"exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill",
	"let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
	"readonly", "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap",
	"true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait", NULL};

/* Variables bash sets, recomputes or drops when it starts (bash(1), Shell
 * Variables; each checked against bash 5.2 with env -i NAME=x bash -c env),
 * that change its PATH search (EXECIGNORE), or that make it write to
 * stderr at start (LC_ALL naming no installed locale).  BASH* covers BASH,
 * BASH_VERSION, BASHPID, BASH_ARGV0, BASH_COMPAT and the rest. */
static const char *const bash_vars[] = {
	"_", "PWD", "OLDPWD", "SHLVL", "EXECIGNORE", "EPOCHSECONDS", "EPOCHREALTIME", "SECONDS",
	"LINENO", "OPTERR", "OPTIND", "RANDOM", "SRANDOM", "PPID", "HISTCMD", "PS1", "PS2", "LC_ALL", NULL};
/* clang-format on */

static bool listed(const char *const list[], const char *s, size_t len)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return true;
	return false;
}

/* Outside quotes: the characters no expansion, operator or word rule of
 * bash gives a meaning to. */
static bool plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("_@%+=:,./-", c));
}

size_t directexec_split(const char *cmd, char *words, char **argv, size_t argv_max)
{
	size_t argc = 0;
	const char *p = cmd;
	char *o = words;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (argc == argv_max)
			return 0;
		argv[argc++] = o;
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '\'') {
				for (p++; *p && *p != '\''; p++)
					*o++ = *p;
			} else if (*p == '"') {
				for (p++; *p && !strchr("\"$`\\", *p); p++)
					*o++ = *p;
				if (*p && *p != '"')
					return 0;
			} else if (plain(*p)) {
				*o++ = *p++;
				continue;
			} else {
				return 0;
			}
			if (!*p) /* an unclosed quote: bash's syntax error */
				return 0;
			p++;
		}
		*o++ = '\0';
	}
	argv[argc] = NULL;
	if (argc == 0 || !argv[0][0] || strchr(argv[0], '=') || listed(shell_words, argv[0], strlen(argv[0])))
		return 0;
	return argc;
}

bool directexec_env_plain(char *const envp[])
{
	for (size_t i = 0; envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t len = eq ? (size_t)(eq - envp[i]) : strlen(envp[i]);
		if (strncmp(envp[i], "BASH", 4) == 0 || listed(bash_vars, envp[i], len))
			return false;
	}
	return true;
}

/* Writes DIR/NAME (or NAME alone when DIRLEN is 0) to OUT of SIZE bytes;
 * false when it does not fit. */
static bool place(char *out, size_t size, const char *dir, size_t dirlen, const char *name)
{
	size_t namelen = strlen(name);
	if (dirlen + 1 + namelen + 1 > size)
		return false;
	if (dirlen) {
		memcpy(out, dir, dirlen);
		out[dirlen++] = '/';
	}
	memcpy(out + dirlen, name, namelen + 1);
	return true;
}

void directexec_try(char *const argv[], char *const envp[], char **env_out)
{
	/* `_` is the path execve is given: the candidate is built in place. */
	char pwd[PATH_MAX + 4] = "PWD=", under[PATH_MAX + 2] = "_=";
	char *prog = under + 2;
	if (!getcwd(pwd + 4, PATH_MAX))
		return;
	const char *path = NULL;
	size_t n = 0;
	for (; envp[n]; n++) {
		env_out[n] = envp[n];
		if (strncmp(envp[n], "PATH=", 5) == 0)
			path = envp[n] + 5;
	}
	env_out[n++] = pwd;
	env_out[n++] = "SHLVL=0";
	env_out[n++] = under;
	env_out[n] = NULL;

	const char *name = argv[0];
	if (strchr(name, '/')) {
		if (place(prog, sizeof(under) - 2, NULL, 0, name))
			execve(prog, argv, env_out);
		return;
	}
	/* bash searches a default PATH when there is none: leave that to it. */
	while (path) {
		const char *colon = strchr(path, ':');
		size_t dirlen = colon ? (size_t)(colon - path) : strlen(path);
		/* An empty entry is the current directory (bash(1), PATH). */
		if (!place(prog, sizeof(under) - 2, dirlen ? path : ".", dirlen ? dirlen : 1, name))
			return;
		execve(prog, argv, env_out);
		/* Not there: on to the next directory.  Anything else (not
		 * executable, not a binary, a lock's refusal) is bash's to
		 * handle and to report. */
		if (errno != ENOENT && errno != ENOTDIR)
			return;
		path = colon ? colon + 1 : NULL;
	}
}
