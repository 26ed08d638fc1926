/*
 * gitdirs.h - start-up's search for each workspace's shared git directory
 * outside it (a linked worktree's or a submodule's, common/gitdir.h says
 * which), for root to bind into the runs' view (root/mount.c).  Root
 * follows paths a gitfile names here, so it does so with the workspace
 * owner's file access.  In start/, not common/: the front never does it.
 */
#ifndef SHARNESS_GITDIRS_H
#define SHARNESS_GITDIRS_H

#include "config.h"

/* Fill c->git_dirs and c->git_dirs_st (start-up and --doctor). */
void gitdirs_find(struct config *c);

#endif
