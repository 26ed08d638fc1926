/*
 * probe_identity.c - run inside the sandbox: who am I, what can I see.
 *
 * Output, one "key value" line each, in this order:
 *   uid <real> <effective> <saved>
 *   gid <real> <effective> <saved>
 *   groups <n> [gid ...]          supplementary groups
 *   pid <n>                       our pid (small inside a pid namespace)
 *   ppid <n>
 *   pid1 <comm>                   /proc/1/comm: the sandbox's init, or ERRNO
 *   procs <n>                     numeric entries in /proc (processes visible)
 *   hostname <name>
 *   CapInh|CapPrm|CapEff|CapBnd|CapAmb <hex>   from /proc/self/status
 *   NoNewPrivs <0|1>
 *   Seccomp <0|1|2>
 *   Seccomp_filters <n>
 *   fds <n>[,<n>...]              open descriptors (excluding the one used to list)
 *   fd <n> <target>               readlink of each
 *   cwd <path>
 *   umask <octal>
 *   env <NAME=value>              one line per variable, in order
 *   cgroup <line>                 /proc/self/cgroup lines
 * Exit status 0.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static void print_file_line(const char *key, const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "re");

	if (!f) {
		printf("%s %s\n", key, strerrorname_np(errno));
		return;
	}
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		printf("%s %s\n", key, buf);
	} else {
		printf("%s EMPTY\n", key);
	}
	fclose(f);
}

static void print_status(void)
{
	static const char *const keys[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
	                                   "NoNewPrivs", "Seccomp", "Seccomp_filters"};
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		printf("status %s\n", strerrorname_np(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i]);
			if (strncmp(line, keys[i], n) == 0 && line[n] == ':') {
				char *v = line + n + 1;
				v += strspn(v, " \t");
				v[strcspn(v, "\n")] = '\0';
				printf("%s %s\n", keys[i], v);
			}
		}
	}
	fclose(f);
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static void print_procs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d) {
		printf("procs %s\n", strerrorname_np(errno));
		return;
	}
	while ((e = readdir(d)))
		if (all_digits(e->d_name))
			n++;
	closedir(d);
	printf("procs %d\n", n);
}

static void print_fds(void)
{
	int fds[256], n = 0, self;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d) {
		printf("fds %s\n", strerrorname_np(errno));
		return;
	}
	self = dirfd(d);
	while ((e = readdir(d)) && n < 256) {
		if (!all_digits(e->d_name) || atoi(e->d_name) == self)
			continue;
		fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	/* readdir order is not sorted; sort for a stable line */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	printf("fds ");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", fds[i]);
	printf("\n");
	for (int i = 0; i < n; i++) {
		char path[64], target[512];
		ssize_t len;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			snprintf(target, sizeof(target), "%s", strerrorname_np(errno));
		else
			target[len] = '\0';
		printf("fd %d %s\n", fds[i], target);
	}
}

int main(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg, groups[64];
	char host[256], cwd[4096], line[512];
	int ng;
	mode_t um;
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	printf("uid %u %u %u\n", (unsigned)ru, (unsigned)eu, (unsigned)su);
	printf("gid %u %u %u\n", (unsigned)rg, (unsigned)eg, (unsigned)sg);
	ng = getgroups(64, groups);
	printf("groups %d", ng);
	for (int i = 0; i < ng; i++)
		printf(" %u", (unsigned)groups[i]);
	printf("\n");
	printf("pid %d\n", (int)getpid());
	printf("ppid %d\n", (int)getppid());
	print_file_line("pid1", "/proc/1/comm");
	print_procs();
	if (gethostname(host, sizeof(host)) == 0)
		printf("hostname %s\n", host);
	else
		printf("hostname %s\n", strerrorname_np(errno));
	print_status();
	print_fds();
	printf("cwd %s\n", getcwd(cwd, sizeof(cwd)) ? cwd : strerrorname_np(errno));
	um = umask(022);
	umask(um);
	printf("umask %04o\n", (unsigned)um);
	for (char **e = environ; e && *e; e++)
		printf("env %s\n", *e);
	f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			printf("cgroup %s\n", line);
		}
		fclose(f);
	} else {
		printf("cgroup %s\n", strerrorname_np(errno));
	}
	return 0;
}
