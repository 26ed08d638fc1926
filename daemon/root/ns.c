/*
 * ns.c - see ns.h.
 *
 * The idmap user namespace is made by a short-lived helper child that is
 * born in it and only waits; we write its maps from outside (the helper
 * has no rights to write them itself for a foreign uid), keep an fd to its
 * namespace, and kill it.  The fd keeps the namespace alive for the mount.
 */
#include "ns.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The helper: born in its user namespace (CLONE_NEWUSER), it only waits
 * to be killed. */
static int idmap_hold(void *parent)
{
	/* A supervisor killed before it kills us must not leave us behind. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != *(const pid_t *)parent)
		_exit(1);
	for (;;)
		pause();
	return 0;
}

int ns_idmap_userns(uid_t owner_uid, gid_t owner_gid, uid_t run_uid)
{
	/* CLONE_VM: the helper shares our memory and runs nothing but pause()
	 * on this stack, so making it copies no page table (a fork of the
	 * supervisor's image would). */
	static char stack[16384] __attribute__((aligned(16)));
	char path[64], map[64];
	int fd = -1, e = 0;

	pid_t self = getpid(), pid = clone(idmap_hold, stack + sizeof(stack), CLONE_VM | CLONE_NEWUSER | SIGCHLD, &self);
	if (pid < 0)
		return -1;
	/* inside id (what the mount shows for on-disk owner) -> outside id */
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	snprintf(map, sizeof(map), "%u %u 1\n", owner_uid, run_uid);
	if (fdio_write_file(path, map) < 0) {
		e = errno;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	if (fdio_write_file(path, "deny") < 0) {
		e = errno;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	snprintf(map, sizeof(map), "%u %u 1\n", owner_gid, run_uid);
	if (fdio_write_file(path, map) < 0) {
		e = errno;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		e = errno;
out:
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		errno = e;
	return fd;
}

int ns_loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	int e = errno;
	close(s);
	errno = e;
	return rc;
}
