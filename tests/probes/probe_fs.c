/*
 * probe_fs.c - run inside the sandbox: try file operations on given paths.
 *
 * Usage: probe_fs OP:PATH ...   with OP one of
 *   r  open O_RDONLY and read one byte      (a file)
 *   l  list a directory (opendir + readdir)
 *   s  stat (Landlock does not stop it; a hidden path gives ENOENT)
 *   w  open O_WRONLY (nothing is written)
 *   a  append the line "sharness-probe" (a real write)
 *   c  create PATH (O_CREAT|O_EXCL), then remove it again
 *   d  mkdir PATH, then rmdir it again
 *   u  unlink PATH (destructive: for files made for the test)
 *   x  execve PATH in a child (stdout/stderr to /dev/null); OK = execve worked
 *   m  mmap PROT_READ|PROT_EXEC of PATH (what `ld.so ./bin` needs; a noexec
 *      mount answers EPERM)
 *
 * Output: one line per argument, "<op> <path> <result>", result = OK or the
 * errno name of the first failing step (EACCES, ENOENT, EROFS, EPERM, ...).
 * A malformed argument prints "<arg> BADARG".  Exit status 0.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int err_close(int fd)
{
	int e = errno;
	close(fd);
	return e;
}

static int op_read(const char *p)
{
	char c;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (read(fd, &c, 1) < 0)
		return err_close(fd);
	close(fd);
	return 0;
}

static int op_list(const char *p)
{
	DIR *d = opendir(p);

	if (!d)
		return errno;
	errno = 0;
	if (!readdir(d) && errno) {
		int e = errno;
		closedir(d);
		return e;
	}
	closedir(d);
	return 0;
}

static int op_stat(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? 0 : errno;
}

static int op_write(const char *p)
{
	int fd = open(p, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_append(const char *p)
{
	static const char line[] = "sharness-probe\n";
	int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (write(fd, line, sizeof(line) - 1) < 0)
		return err_close(fd);
	close(fd);
	return 0;
}

static int op_create(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return unlink(p) == 0 ? 0 : errno;
}

static int op_mkdir(const char *p)
{
	if (mkdir(p, 0755) < 0)
		return errno;
	return rmdir(p) == 0 ? 0 : errno;
}

static int op_unlink(const char *p)
{
	return unlink(p) == 0 ? 0 : errno;
}

static int op_exec(const char *p)
{
	int pipefd[2], e = 0, st;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		char *argv[] = {(char *)p, NULL};
		char *envp[] = {"PATH=/usr/bin:/bin", NULL};
		int dn = open("/dev/null", O_RDWR);
		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 1);
			dup2(dn, 2);
		}
		execve(p, argv, envp);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0; /* pipe closed by a successful execve */
	close(pipefd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return e;
}

static int op_mmap_exec(const char *p)
{
	void *m;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return err_close(fd);
	munmap(m, 4096);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *p = a + 2;
		int e;

		if (strlen(a) < 3 || a[1] != ':') {
			printf("%s BADARG\n", a);
			continue;
		}
		switch (a[0]) {
		case 'r': e = op_read(p); break;
		case 'l': e = op_list(p); break;
		case 's': e = op_stat(p); break;
		case 'w': e = op_write(p); break;
		case 'a': e = op_append(p); break;
		case 'c': e = op_create(p); break;
		case 'd': e = op_mkdir(p); break;
		case 'u': e = op_unlink(p); break;
		case 'x': e = op_exec(p); break;
		case 'm': e = op_mmap_exec(p); break;
		default:
			printf("%s BADARG\n", a);
			continue;
		}
		printf("%c %s %s\n", a[0], p, e ? strerrorname_np(e) : "OK");
	}
	return 0;
}
