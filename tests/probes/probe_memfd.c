/*
 * probe_memfd.c - run inside the sandbox: can code run from an anonymous
 * memory file?  (Landlock does not cover memfds; the sandbox relies on
 * vm.memfd_noexec=2 in its pid namespace and on seccomp's execveat rule.)
 *
 * The probe copies itself (/proc/self/exe, a static binary) into a memfd and
 * tries to execute that copy, which runs with "--ran" and exits 42.
 *
 * Output, one "<check> <result>" line each, in this order:
 *   memfd_noexec <0|1|2|ERRNO>        /proc/sys/vm/memfd_noexec as seen here
 *   memfd_create_exec <r>             with MFD_EXEC (EACCES under =2)
 *   memfd_create_noexec_seal <r>      with MFD_NOEXEC_SEAL
 *   memfd_create <r>                  plain memfd_create(MFD_CLOEXEC), used below
 *   copy <r>                          /proc/self/exe copied into the memfd
 *   fchmod_x <r>                      fchmod 0755 on it (EPERM when sealed)
 *   execveat_empty_path <r>           execveat(fd, "", AT_EMPTY_PATH) (seccomp: EPERM)
 *   execve_proc_fd <r>                execve("/proc/self/fd/N")  (EACCES under =2)
 *   fexecve <r>                       glibc fexecve()
 * <r> is OK (for the exec lines: the copy ran and exited 42), an errno name,
 * SKIP (an earlier step failed), EXIT<n> or SIG<name> for other outcomes.
 * Exit status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

extern char **environ;

static const char *res(int e)
{
	return e ? strerrorname_np(e) : "OK";
}

static int try_memfd(unsigned flags)
{
	long fd = syscall(SYS_memfd_create, "probe", flags | MFD_CLOEXEC);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int copy_self(int out)
{
	char buf[65536];
	ssize_t n;
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (in < 0)
		return errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			close(in);
			return EIO;
		}
	close(in);
	return n < 0 ? EIO : 0;
}

enum how { HOW_EXECVEAT, HOW_PROC, HOW_FEXECVE };

/* Exec the memfd in a child; result text into buf. */
static const char *try_exec(int fd, enum how how, char *buf, size_t len)
{
	int p[2], e = 0, st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return res(errno);
	pid = fork();
	if (pid < 0)
		return res(errno);
	if (pid == 0) {
		char *argv[] = {"probe_memfd", "--ran", NULL};
		char path[64];
		switch (how) {
		case HOW_EXECVEAT:
			syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
			break;
		case HOW_PROC:
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			execve(path, argv, environ);
			break;
		case HOW_FEXECVE:
			fexecve(fd, argv, environ);
			break;
		}
		e = errno;
		if (write(p[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (e)
		return res(e);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
		return "OK";
	if (WIFSIGNALED(st)) {
		const char *s = sigabbrev_np(WTERMSIG(st));
		snprintf(buf, len, "SIG%s", s ? s : "?");
	} else {
		snprintf(buf, len, "EXIT%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return buf;
}

int main(int argc, char **argv)
{
	char val[16] = "", buf[32];
	long fd;
	int e;
	FILE *f;

	if (argc > 1 && strcmp(argv[1], "--ran") == 0)
		return 42;
	setvbuf(stdout, NULL, _IOLBF, 0);
	f = fopen("/proc/sys/vm/memfd_noexec", "re");
	if (f) {
		if (fgets(val, sizeof(val), f))
			val[strcspn(val, "\n")] = '\0';
		fclose(f);
		printf("memfd_noexec %s\n", val[0] ? val : "EMPTY");
	} else {
		printf("memfd_noexec %s\n", res(errno));
	}
	printf("memfd_create_exec %s\n", res(try_memfd(MFD_EXEC)));
	printf("memfd_create_noexec_seal %s\n", res(try_memfd(MFD_NOEXEC_SEAL)));
	fd = syscall(SYS_memfd_create, "probe", MFD_CLOEXEC);
	printf("memfd_create %s\n", fd < 0 ? res(errno) : "OK");
	if (fd < 0) {
		printf("copy SKIP\nfchmod_x SKIP\nexecveat_empty_path SKIP\nexecve_proc_fd SKIP\nfexecve SKIP\n");
		return 0;
	}
	e = copy_self((int)fd);
	printf("copy %s\n", res(e));
	printf("fchmod_x %s\n", res(fchmod((int)fd, 0755) == 0 ? 0 : errno));
	if (e) {
		printf("execveat_empty_path SKIP\nexecve_proc_fd SKIP\nfexecve SKIP\n");
		return 0;
	}
	printf("execveat_empty_path %s\n", try_exec((int)fd, HOW_EXECVEAT, buf, sizeof(buf)));
	printf("execve_proc_fd %s\n", try_exec((int)fd, HOW_PROC, buf, sizeof(buf)));
	printf("fexecve %s\n", try_exec((int)fd, HOW_FEXECVE, buf, sizeof(buf)));
	close((int)fd);
	return 0;
}
