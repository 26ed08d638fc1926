/*
 * actor_main.c - sharness-actor, the executable of a run's file actor
 * (root/actor.c says why it exists and how it is started).
 *
 * It is exec'd by a process that is the run already: the run's uid and gid,
 * no capability, no_new_privs, chrooted into the run's root and in its
 * network namespace; the first request is waiting on the socket.  So it
 * starts with a memory of its own, before it reads anything of the run.
 * Linked statically: nothing is loaded from the run's root.
 *
 *   fd 0-2  the daemon's (a terminal under `make run`, or the journal):
 *         replaced with /dev/null at once
 *   fd 3  the socket to the supervisor (asrun/actor_msg.h)
 *   fd 4  the host's /proc (to reopen the run's /proc/PID/fd entries)
 *   sharness-actor UID WORKSPACE_WRITE(0|1) WORKSPACE [WRITE_PATH...]
 *
 * Trust: runs as the run; its arguments come from root.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "actor_serve.h"
#include "profile.h"
#include "sandbox.h"

int main(int argc, char **argv)
{
	static struct profile p; /* what the actor reads of it: the workspace's mode, the write paths */
	char *end = NULL;
	unsigned long uid = argc > 1 ? strtoul(argv[1], &end, 10) : 0;
	if (argc < 4 || argc - 4 > PROFILE_LIST_MAX || !end || *end || uid == 0 || uid > 0xFFFFFFFEUL ||
	    (strcmp(argv[2], "0") != 0 && strcmp(argv[2], "1") != 0)) {
		fprintf(stderr,
			"sharness-actor: sharnessd starts this, for a run's writes; it is not a command\n");
		return 2;
	}
	p.workspace_write = argv[2][0] == '1';
	for (int i = 4; i < argc; i++)
		p.write_paths[p.n_write_paths++] = argv[i];
	const struct sandbox_spec spec = {.uid = (uid_t)uid, .profile = &p, .workspace = argv[3]};
	/* A session of our own, so no controlling terminal: the run's /dev/tty
	 * is the host's 5:0, which opens the opener's controlling terminal, and
	 * the daemon's session has the operator's under `make run` (a reopen of
	 * an O_PATH descriptor or a symlink to it reaches us, not only the name
	 * notify.c answers ENXIO).  A session leader could take a terminal as
	 * its own by opening one: our opens add O_NOCTTY (actor_serve.c). */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (setsid() < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		return 1;
	if (null > 2)
		close(null);
	/* The exec made us dumpable again, and named us by the descriptor. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)prctl(PR_SET_NAME, "sharness-actor", 0, 0, 0);
	actor_serve(3, 4, &spec);
}
