/*
 * test_check.c - root's checks of the descriptors the front passes with a
 * run request (root/check.c): the run channel must lead back to the front,
 * the payload must be a memory file of the stated size.  Real descriptors,
 * the real kernel.  (The message and payload checks are fuzzed:
 * tests/fuzz/fuzz_check.c.)
 */
#include "check.h"
#include "harness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

TEST(run_channel)
{
	int sv[2], pipefd[2];
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
	int lone = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* A socketpair of the front's own: its peer is the front's uid. */
	CHECK(check_chan(sv[0], getuid()) == NULL);
	/* The same, another uid's: root's replies would reach someone else. */
	CHECK(check_chan(sv[0], getuid() + 1) != NULL);
	/* No peer at all, or no socket. */
	CHECK(check_chan(lone, getuid()) != NULL);
	CHECK(check_chan(tcp, getuid()) != NULL);
	CHECK(check_chan(pipefd[1], getuid()) != NULL);
	CHECK(check_chan(-1, getuid()) != NULL);
	close(sv[0]);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
	close(lone);
	close(tcp);
}

TEST(payload_descriptor)
{
	char tmp[] = "/tmp/test_check.XXXXXX";
	int mem = memfd_create("payload", MFD_CLOEXEC), file = mkstemp(tmp), pipefd[2];
	CHECK(mem >= 0 && file >= 0 && pipe2(pipefd, O_CLOEXEC) == 0);
	CHECK(write(mem, "cmd/cwdenv", 10) == 10);
	CHECK(write(file, "cmd/cwdenv", 10) == 10);
	unlink(tmp);
	CHECK(check_payload_fd(mem, 10) == NULL);
	CHECK(check_payload_fd(mem, 9) != NULL);  /* not the stated lengths */
	CHECK(check_payload_fd(mem, 11) != NULL);
	/* A file on disk (or FUSE, NFS) could block root's read: refused. */
	CHECK(check_payload_fd(file, 10) != NULL);
	CHECK(check_payload_fd(pipefd[0], 0) != NULL);
	close(mem);
	close(file);
	close(pipefd[0]);
	close(pipefd[1]);
}

int main(void)
{
	RUN(run_channel);
	RUN(payload_descriptor);
	return harness_done();
}
