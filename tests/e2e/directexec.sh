#!/usr/bin/env bash
# A command of plain words runs without bash (asrun/directexec.c), and the
# program sees what `bash -c` would have given it: argv, environment, cwd,
# stdin; its exit and output are the same.  Anything else, and anything
# that fails on the way (not found, not executable, a directory), is bash's
# to run and to report, as before.  A leading backslash (`\env`) is the
# same command for bash but not plain: it is the reference each case is
# compared with.
. "$(dirname "$0")/lib.sh"
e2e_start

same() { # DESC CMD [EXTRA_JSON]: CMD and \CMD give the same stdout, stderr and exit
	local extra=${3:-{\}} direct bash
	run_cmd "$2" analyse "$extra"
	direct=$(jf "[.stdout | $OUT, .stderr, .exit] | tostring")
	run_cmd "\\$2" analyse "$extra"
	bash=$(jf "[.stdout | $OUT, .stderr, .exit] | tostring")
	check_eq "$1" "$direct" "$bash"
}
OUT=. # the output as it is; env's lines come in another order (sorted below)

# The proof that bash did not start: a process's fault count survives
# execve (proc(5), minflt), so a program started through bash carries
# bash's start-up faults, one started directly only its own.
minflt() { run_cmd "$1"; jf .stdout | awk '{print $10}'; }
direct=$(minflt 'cat /proc/self/stat') through_bash=$(minflt '\cat /proc/self/stat')
check "a plain command runs without bash ($direct faults before cat's own read, $through_bash through bash)" \
	test "$direct" -gt 0 -a $((direct + 50)) -lt "$through_bash"

OUT='split("\n") | sort'
same "environment: what bash passes on (PWD, SHLVL=0, _ added)" 'env'
run_cmd 'env'
check_eq "environment: the names" "$(jf .stdout | grep . | cut -d= -f1 | sort | tr '\n' ' ')" "HOME LANG PATH PWD SHELL SHLVL TZ _ "
check_eq "environment: _ is the program's path" "$(jf .stdout | grep '^_=')" "_=/usr/bin/env"
same "environment: the request's variables" 'env' '{"env": {"FOO": "a=b c", "UID": "7", "TERM": "dumb", "HOSTNAME": "h"}}'
same "environment: a program named by its path" '/usr/bin/env'
for var in SHLVL PWD OLDPWD OPTIND RANDOM BASH_COMPAT SECONDS _ LC_ALL; do
	same "environment: $var, which bash changes, goes through bash" 'env' "{\"env\": {\"$var\": \"5\"}}"
done
OUT=.
same "argv: quotes removed as bash removes them" "/usr/bin/printf '[%s]' a 'b c' \"d e\" f'g'\"h\" '' \"\$x|*\""
run_cmd "/usr/bin/printf '[%s]' a 'b c' \"d e\" f'g'\"h\" ''"
check_eq "argv: the words" "$(jf .stdout)" "[a][b c][d e][fgh][]"
run_cmd 'ls' analyse "{\"cwd\": \"$WS/src/..\"}"
check_eq "cwd: the run's" "$(jf .exit)" 0
same "cwd and PWD" '/bin/pwd -L' "{\"cwd\": \"$WS/src\"}"
run_cmd 'cat' analyse '{"stdin": "bytes for stdin\n"}'
check_eq "stdin reaches the program" "$(jf .stdout)" "bytes for stdin"
same "an exit status" '/usr/bin/false'
same "a program's own error" 'ls /nonexistent'
same "a quoted pattern" "grep -c 'hello from' hello.txt"

# Failures are bash's to report, word for word as before.
same "not found" 'no-such-program-here'
run_cmd 'no-such-program-here'
check_eq "not found: bash's message" "$(jf .stderr)/$(jf .exit)" "bash: line 1: no-such-program-here: command not found/127"
same "a file that is not executable" './hello.txt'
same "a directory" './src'
same "a path that does not exist" './nope/x'
printf 'echo from a script without #!\n' >"$WS/noshebang"
chmod 755 "$WS/noshebang"
same "a script without #! (bash runs it, or says why not)" './noshebang'
same "a builtin stays bash's" 'pwd'
run_cmd 'echo $((6 * 7))'
check_eq "the rest is bash's" "$(jf .stdout)" 42
check_settled "nothing left behind"
