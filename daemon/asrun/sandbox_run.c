/*
 * sandbox_run.c - the sandbox's init once it is the run (root/sandbox.c
 * built the namespaces and the view as root, dropped the capability
 * bounding set and switched to the run's uid and gid, then calls us): the
 * last locks (not dumpable, no_new_privs, Landlock, seccomp), the one job,
 * the command, and the reaping of everything it left.
 *
 * Trust: runs as the run's uid with no capability; the job comes from the
 * supervisor, and its lengths and shape are checked again here.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "directexec.h"
#include "fdio.h"
#include "landlock.h"
#include "mount.h"
#include "privsep.h"
#include "seccomp.h"

static int apply_landlock(const struct sandbox_spec *s)
{
	const struct profile *p = s->profile;
	struct landlock_path paths[16 + 4 * PROFILE_LIST_MAX];
	/* Not 128 KB of stack (every page of a frame is touched,
	 * -fstack-clash-protection: a page fault each, in every run), and not the
	 * heap, which the init shares with the supervisor (root/initclone.c). */
	static char exec_dirs[PROFILE_LIST_MAX][PATH_MAX];
	bool too_long = false;
	size_t n = 0;
	struct stat st;
	unsigned ws = LANDLOCK_GRANT_READ | (p->workspace_write ? LANDLOCK_GRANT_WRITE : 0);

	/* Listing is harmless: everything in the view is meant to be seen, and
	 * file contents stay governed by the rules below (`ls /` works). */
	paths[n++] = (struct landlock_path){"/", LANDLOCK_GRANT_LIST};
	paths[n++] = (struct landlock_path){"/usr", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_EXEC};
	paths[n++] = (struct landlock_path){"/etc", LANDLOCK_GRANT_READ};
	paths[n++] = (struct landlock_path){"/dev", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE | LANDLOCK_GRANT_DEV};
	paths[n++] = (struct landlock_path){"/proc", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE};
	paths[n++] = (struct landlock_path){"/tmp", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE |
	                                                (p->tmp_exec ? LANDLOCK_GRANT_EXEC : 0)};
	paths[n++] = (struct landlock_path){SANDBOX_HOME, LANDLOCK_GRANT_READ};
	if (stat("/opt", &st) == 0)
		paths[n++] = (struct landlock_path){"/opt", LANDLOCK_GRANT_READ | LANDLOCK_GRANT_EXEC};
	static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (lstat(top[i], &st) == 0 && S_ISDIR(st.st_mode))
			paths[n++] = (struct landlock_path){top[i], LANDLOCK_GRANT_READ | LANDLOCK_GRANT_EXEC};
	paths[n++] = (struct landlock_path){s->workspace, ws};
	/* Exec only where mount.c bound an exec subpath: resolved the same way,
	 * no symlink on the way, so a planted link cannot move the grant. */
	int wsfd = open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; wsfd >= 0 && i < p->n_workspace_exec; i++) {
		int fd = mount_open_beneath(wsfd, p->workspace_exec[i], RESOLVE_NO_SYMLINKS);
		if (fd < 0)
			continue;
		close(fd);
		size_t len =
		    (size_t)snprintf(exec_dirs[i], PATH_MAX, "%s/%s", s->workspace, p->workspace_exec[i]);
		if (len >= PATH_MAX) {
			too_long = true; /* the step fails: no Landlock domain, no run */
			break;
		}
		paths[n++] = (struct landlock_path){exec_dirs[i], ws | LANDLOCK_GRANT_EXEC};
	}
	if (wsfd >= 0)
		close(wsfd);
	/* A linked worktree's shared git directory, where mount.c bound it
	 * (an idmapped bind keeps device and inode). */
	if (s->git_dir && stat(s->git_dir, &st) == 0 && st.st_dev == s->git_dir_st->st_dev &&
	    st.st_ino == s->git_dir_st->st_ino)
		paths[n++] = (struct landlock_path){s->git_dir, LANDLOCK_GRANT_READ};
	for (size_t i = 0; i < p->n_read_paths; i++)
		paths[n++] = (struct landlock_path){p->read_paths[i], LANDLOCK_GRANT_READ};
	for (size_t i = 0; i < p->n_write_paths; i++)
		paths[n++] = (struct landlock_path){p->write_paths[i], LANDLOCK_GRANT_READ | LANDLOCK_GRANT_WRITE};
	for (size_t i = 0; i < p->n_exec_paths; i++)
		paths[n++] = (struct landlock_path){p->exec_paths[i], LANDLOCK_GRANT_READ | LANDLOCK_GRANT_EXEC};
	return too_long ? (errno = ENAMETOOLONG, -1) : landlock_apply(paths, n, (uint16_t)s->proxy_port);
}

struct job {
	struct sandbox_job h;
	char *cwd, *cmd;
	char *envp[SANDBOX_ENV_MAX + 1];
	/* The command's words when it needs no bash (directexec.h), else
	 * argc is 0; direct_env is the environment built for that exec. */
	size_t argc;
	char *argv[DIRECTEXEC_ARGV_MAX + 1];
	char *direct_env[SANDBOX_ENV_MAX + 4];
};

/* Read the job, and split its command when it needs no bash (directexec.h).
 * The supervisor validated it; we still bound every length and check the
 * shape, as the launcher does for the front.  Returns 1, 0 for
 * a quiet EOF (no job will come), -1 for a malformed job. */
static int read_job(int fd, struct job *j)
{
	ssize_t n = read(fd, &j->h, sizeof(j->h));
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(j->h) || j->h.cwd_len == 0 || j->h.cwd_len >= RUN_CWD_MAX ||
	    j->h.cmd_len == 0 || j->h.cmd_len > RUN_CMD_MAX || j->h.env_len > SANDBOX_ENV_BYTES_MAX ||
	    j->h.env_count > SANDBOX_ENV_MAX || j->h.has_stdin > 1)
		return errno = EPROTO, -1;
	/* Not on the heap, which the init shares with the supervisor
	 * (root/initclone.c); the two NULs are added below. */
	static char buf[RUN_CWD_MAX + RUN_CMD_MAX + SANDBOX_ENV_BYTES_MAX + 2];
	size_t total = (size_t)j->h.cwd_len + j->h.cmd_len + j->h.env_len;
	if (fdio_read_all(fd, buf, total) < 0)
		return errno = EPROTO, -1;
	memmove(buf + j->h.cwd_len + 1, buf + j->h.cwd_len, (size_t)j->h.cmd_len + j->h.env_len);
	buf[j->h.cwd_len] = '\0';
	j->cwd = buf;
	j->cmd = buf + j->h.cwd_len + 1;
	char *env = j->cmd + j->h.cmd_len;
	memmove(env + 1, env, j->h.env_len);
	*env++ = '\0';
	size_t off = 0, k = 0;
	while (off < j->h.env_len && k < j->h.env_count) {
		size_t len = strnlen(env + off, j->h.env_len - off);
		if (off + len >= j->h.env_len)
			return errno = EPROTO, -1;
		j->envp[k++] = env + off;
		off += len + 1;
	}
	if (k != j->h.env_count || off != j->h.env_len)
		return errno = EPROTO, -1;
	j->envp[k] = NULL;
	static char words[RUN_CMD_MAX + 1]; /* off the heap, as buf */
	j->argc =
	    directexec_env_plain(j->envp) ? directexec_split(j->cmd, words, j->argv, DIRECTEXEC_ARGV_MAX) : 0;
	return 1;
}

static noreturn void exec_command(const struct sandbox_spec *s, struct job *j)
{
	/* A new session: the command has no controlling terminal to inject into. */
	setsid();
	int in = j->h.has_stdin ? s->stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || dup2(in, 0) < 0 || dup2(s->stdout_fd, 1) < 0 || dup2(s->stderr_fd, 2) < 0)
		_exit(126);
	/* Only 0, 1 and 2 reach the command (runc CVE-2024-21626). */
	close_range(3, ~0U, 0);
	signal(SIGPIPE, SIG_DFL);
	if (chdir(j->cwd) < 0) {
		dprintf(2, "sharness: cannot enter %s: %s\n", j->cwd, strerror(errno));
		_exit(126);
	}
	if (j->argc)
		directexec_try(j->argv, j->envp, j->direct_env);
	char *const argv[] = {"bash", "-c", j->cmd, NULL};
	execve("/bin/bash", argv, j->envp);
	dprintf(2, "sharness: cannot run /bin/bash: %s\n", strerror(errno));
	_exit(127);
}

noreturn void sandbox_as_run(const struct sandbox_spec *s)
{
	/* The init runs in the supervisor's memory (root/initclone.c), a copy
	 * of the root launcher's: no process of the run may read it through
	 * /proc/1/mem or attach to it, whatever fs.suid_dumpable says (the uid
	 * change above reset the flag from it).  The flag is the memory's, so
	 * the supervisor's too, which drops to the same anyway (become_run).
	 * The command itself is exec'd and dumpable again, as usual. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		sandbox_fail(s, STEP_DUMPABLE);
	/* Creation modes are `mode & ~umask`: with S_IWOTH in the umask, and
	 * seccomp refusing a umask without it (seccomp.c, add_mode_rules), no
	 * file, directory, FIFO or socket the run makes is world-writable. */
	umask(022);
	/* Landlock and an unprivileged seccomp filter both require it. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		sandbox_fail(s, STEP_NO_NEW_PRIVS);
	/* After the mounts (the paths it names must be the sandbox's). */
	if (apply_landlock(s) < 0)
		sandbox_fail(s, STEP_LANDLOCK);
	/* Last: it forbids mount and the rest of what the steps above used.
	 * Its listener answers umask() (seccomp.c): it travels to the
	 * supervisor with the ready message (SCM_RIGHTS on the status socket:
	 * pidfd_getfd of an undumpable init would need CAP_SYS_PTRACE).  We
	 * close our copy. */
	int listener = seccomp_apply_listener(s->seccomp);
	if (listener < 0)
		sandbox_fail(s, STEP_SECCOMP);
	struct sandbox_status ready = {.kind = SANDBOX_STATUS_READY, .err = 0};
	if (privsep_send(s->status_fd, &ready, sizeof(ready), &listener, 1) < 0)
		sandbox_fail(s, STEP_SECCOMP);
	close(listener);

	/* Every lock is in place; now wait for what to run.  A sandbox built
	 * ahead of its request waits here, used once or never. */
	struct job job;
	int got = read_job(s->job_fd, &job);
	if (got == 0)
		_exit(0);
	if (got < 0)
		sandbox_fail(s, STEP_JOB);
	close(s->job_fd);

	/* vfork: the child only sets up fds and execs, so sharing our memory
	 * (the supervisor's) is safe, and it saves copying its page tables. */
	pid_t cmd = vfork(); // NOLINT(bugprone-unsafe-functions): only fd, cwd and exec calls, see above
	if (cmd < 0)
		sandbox_fail(s, STEP_FORK);
	if (cmd == 0)
		exec_command(s, &job); // NOLINT(clang-analyzer-unix.Vfork): only fd, cwd and exec calls, see above
	close(s->stdin_fd);
	close(s->stdout_fd);
	close(s->stderr_fd);

	/* Reap everything (orphans are re-parented to us) until the command
	 * itself exits. */
	struct sandbox_status st = {.kind = SANDBOX_STATUS_EXIT};
	for (;;) {
		int ws;
		pid_t r = waitpid(-1, &ws, 0);
		if (r == cmd) {
			st.wstatus = ws;
			break;
		}
		if (r < 0 && errno != EINTR) {
			st.wstatus = 127 << 8;
			break;
		}
	}
	/* Then end what the command left behind (daemonized, setsid'd,
	 * double-forked: all are in our pid namespace and re-parented to us)
	 * and reap until nothing but us is left, so that when the supervisor
	 * reads our status no process of the run runs any more.  kill(-1) in
	 * a pid namespace reaches every process in it but its init. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	(void)!write(s->status_fd, &st, sizeof(st));
	/* Then wait to be ended: the supervisor kills us once the reply is on
	 * its way (watch.c); one that died closes the socket.  Our exit
	 * tears the run's namespaces down, some hundred microseconds of kernel
	 * work.  Begun right after the write, it ran first on the CPU the
	 * supervisor had just been woken on (the wakeup expects the writer to
	 * sleep), and the reply waited for it. */
	char none;
	while (read(s->status_fd, &none, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}
