/*
 * gitdirs.c - see gitdirs.h.
 */
#include "gitdirs.h"
#include "gitdir.h"

#include <grp.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

void gitdirs_find(struct config *c)
{
	struct stat st;
	for (size_t i = 0; i < c->n_workspaces; i++) {
		if (c->git_dirs[i] || stat(c->workspaces[i], &st) < 0)
			continue;
		/* With the owner's file access (uid, the workspace's group, no
		 * other group): the paths followed are the gitfile's, and root
		 * must not open a FIFO or a device, or read a file, that the
		 * owner could not.  Not the owner's passwd group: a lookup here
		 * would load NSS into the launcher (d191ee8 moved them out).  If
		 * that cannot be set up, nothing is bound. */
		gid_t gid = st.st_gid, groups[64];
		int n_groups = getgroups(64, groups);
		if (n_groups < 0 || setgroups(0, NULL) < 0)
			continue;
		uid_t fsuid = (uid_t)setfsuid(st.st_uid);
		gid_t fsgid = (gid_t)setfsgid(gid);
		if ((uid_t)setfsuid((uid_t)-1) == st.st_uid && (gid_t)setfsgid((gid_t)-1) == gid)
			c->git_dirs[i] = gitdir_outside(c->workspaces[i], st.st_uid, &c->git_dirs_st[i]);
		setfsgid(fsgid);
		setfsuid(fsuid);
		if (setgroups((size_t)n_groups, groups) < 0) { /* cannot be: we just had them */
			free(c->git_dirs[i]);
			c->git_dirs[i] = NULL;
		}
	}
}
