/*
 * probe_devrace.c - run inside the sandbox: race the supervisor's shortcut
 * for opens of /dev/null (asrun/notify.c, answer_device).
 *
 * Usage: probe_devrace TARGET N
 *
 * One thread opens a path for writing N times; another rewrites that same
 * path, without pause, between "/dev/null" and TARGET (a file the run must
 * not open for writing, e.g. a nested repository's .git/config).  The
 * supervisor reads the path once; if anything let the kernel read it again
 * after that look (SECCOMP_USER_NOTIF_FLAG_CONTINUE), some opens would land
 * on TARGET.  Output: "null A refused B file C", where "file" counts the
 * opens that returned a regular file - what must never happen.  Nothing is
 * written to any file.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[256];
static const char *target;
static atomic_int done;

static void *flip(void *arg)
{
	(void)arg;
	size_t n = strlen(target) + 1;
	while (!atomic_load_explicit(&done, memory_order_relaxed)) {
		memcpy((void *)path, "/dev/null", 10);
		memcpy((void *)path, target, n);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || strlen(argv[1]) >= sizeof(path)) {
		fprintf(stderr, "usage: probe_devrace TARGET N\n");
		return 2;
	}
	target = argv[1];
	long n = atol(argv[2]);
	memcpy(path, "/dev/null", 10);
	pthread_t t;
	if (pthread_create(&t, NULL, flip, NULL) != 0)
		return 2;
	long null = 0, refused = 0, file = 0;
	for (long i = 0; i < n; i++) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			refused++;
		else if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
			null++;
		else
			file++;
		if (fd >= 0)
			close(fd);
	}
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	printf("null %ld refused %ld file %ld\n", null, refused, file);
	return 0;
}
