/*
 * directexec.h - a command that is one program and plain words, exec'd as
 * `bash -c` would exec it, without starting bash.
 *
 * SPEC §3 runs every command as `/bin/bash -c CMD`.  When CMD is a single
 * simple command, bash does not fork: it execs the program in its own
 * process, with the words as argv and its environment plus PWD, SHLVL=0
 * and `_`.  For the commands whose meaning needs no shell at all (words of
 * plain characters and quotes, a first word that is not a keyword or a
 * builtin, no variable bash treats specially) this module does exactly
 * that, and saves the run bash's start-up.  Anything else, and any doubt
 * on the way (not found, not executable, not a binary), goes to bash,
 * which then behaves and reports as it always did.
 *
 * Trust: runs in the sandbox's init and its command's process, as the
 * run's uid, after every lock; the command is the caller's own.  Nothing
 * here allocates (the init shares the supervisor's heap: root/initclone.c).
 */
#ifndef SHARNESS_DIRECTEXEC_H
#define SHARNESS_DIRECTEXEC_H

#include <stdbool.h>
#include <stddef.h>

/* More words than this go to bash (it takes any number). */
#define DIRECTEXEC_ARGV_MAX 1024

/* Splits CMD into ARGV (at most ARGV_MAX words, then NULL), the words
 * written to WORDS, which has room for strlen(CMD) + 1 bytes.  Returns the
 * number of words, or 0 when bash must read CMD: it has a character that
 * means something to the shell, or its first word is empty, an assignment,
 * a keyword or a builtin. */
size_t directexec_split(const char *cmd, char *words, char **argv, size_t argv_max);

/* False when ENVP holds a variable bash sets, changes or drops at start-up
 * or warns about (PWD, SHLVL, OPTIND, RANDOM, LC_ALL, BASH*, ...): bash must
 * pass that one on. */
bool directexec_env_plain(char *const envp[]);

/* In the command's process, its cwd entered: execs ARGV as bash would,
 * searching ENVP's PATH, the environment ENVP plus PWD, SHLVL and `_`
 * (built in ENV_OUT, which has room for ENVP's entries + 4).  Returns only
 * when it could not, for bash to try and to say why. */
void directexec_try(char *const argv[], char *const envp[], char **env_out);

#endif
