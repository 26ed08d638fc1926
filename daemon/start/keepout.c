/*
 * keepout.c - see keepout.h.
 */
#include "keepout.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "guardnames.h"
#include "path.h"

/* The real path of `path`, or of its directory plus its last name when it
 * does not exist yet (an audit log or state dir made at start).  malloc'd. */
static char *resolve(const char *path)
{
	char *real = realpath(path, NULL);
	if (real || errno != ENOENT)
		return real;
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return NULL;
	char dir[PATH_MAX];
	if ((size_t)(slash - path) >= sizeof(dir))
		return NULL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	char *rdir = resolve(dir);
	if (!rdir)
		return NULL;
	char *out = NULL;
	if (asprintf(&out, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, slash + 1) < 0)
		out = NULL;
	free(rdir);
	return out;
}

static int check_one(const struct config *c, const char *what, const char *path, const char *fix,
                     char *err, size_t errlen)
{
	if (!path)
		return 0;
	char *real = resolve(path);
	int rc = 0;
	/* A workspace's shared git directory outside it is in every run's
	 * view too (gitdirs_find). */
	for (size_t i = 0; real && i < 2 * c->n_workspaces; i++) {
		const char *ws = i < c->n_workspaces ? c->workspaces[i] : c->git_dirs[i - c->n_workspaces];
		if (ws && path_under(real, ws)) {
			errmsg_set(err, errlen, "%s %s lies inside %s %s, where a run can read it; %s", what, real,
			           i < c->n_workspaces ? "the workspace" : "the git directory runs see of workspace",
			           i < c->n_workspaces ? ws : c->workspaces[i - c->n_workspaces], fix);
			rc = -1;
			break;
		}
	}
	free(real);
	return rc;
}

/* Whether `path` lies inside `dir` (strictly, unless `or_equal`), as
 * written or resolved (`real`, `rdir`: may be NULL). */
static bool under(const char *path, const char *real, const char *dir, const char *rdir, bool or_equal)
{
	const char *ps[2] = {path, real}, *ds[2] = {dir, rdir};
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			if (ps[i] && ds[k] && path_under(ps[i], ds[k]) && (or_equal || strcmp(ps[i], ds[k]) != 0))
				return true;
	return false;
}

/* Where a run may write, and so plant a symlink root would follow while it
 * places `path` (resolved: `real`) in the next sandbox: any workspace (a
 * read-only profile's too: another profile writes it), and inside any
 * profile's write_paths entry (that entry itself is a mount's root, which
 * the run cannot replace).  Nor above a workspace: root mounts the entry
 * after the workspace, so it would hide the workspace's own mount (the
 * owner's file ids, .git read-only, noexec but workspace_exec; an
 * exec_paths entry above a workspace another profile writes would run what
 * a run wrote there).  0, or -1 with the sentence in err. */
static int placed_safely(const struct config *c, const struct profile_set *ps, const char *who, const char *path,
                         const char *real, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n_workspaces; i++)
		if (under(c->workspaces[i], NULL, path, real, false)) {
			errmsg_set(err, errlen,
			           "%s holds the workspace %s, and its mount would hide the workspace's own in "
			           "the profile's runs (the owner's file ids, .git read-only, noexec but "
			           "workspace_exec); name the paths beside the workspace that runs need, not a "
			           "directory above it",
			           who, c->workspaces[i]);
			return -1;
		}
	for (size_t i = 0; i < c->n_workspaces; i++)
		if (under(path, real, c->workspaces[i], NULL, true)) {
			errmsg_set(err, errlen,
			           "%s lies inside the workspace %s, where a run could replace it or a directory "
			           "above it with a symlink that root would follow when it builds the next sandbox; "
			           "remove the entry (the workspace is mounted already; workspace_exec grants exec "
			           "in a part of it) or name a path outside every workspace",
			           who, c->workspaces[i]);
			return -1;
		}
	for (size_t q = 0; q < ps->n; q++)
		for (size_t w = 0; w < ps->v[q].n_write_paths; w++) {
			const char *x = ps->v[q].write_paths[w];
			char *rx = resolve(x);
			bool bad = under(path, real, x, rx, false);
			free(rx);
			if (bad) {
				errmsg_set(err, errlen,
				           "%s lies inside profile %s's write_paths entry %s, where its runs could "
				           "replace it with a symlink that root would follow when it builds the next "
				           "sandbox; name a path outside every write_paths entry",
				           who, ps->v[q].name, x);
				return -1;
			}
		}
	return 0;
}

/* Is the directory `dir` a git directory by git's own test (HEAD, and
 * objects and refs or a commondir)?  Git takes one by any name. */
static bool git_dir_by_marks(const char *dir)
{
	char p[PATH_MAX];
	const char *const marks[] = {"HEAD", "objects", "refs", "commondir"};
	bool has[4];
	for (int i = 0; i < 4; i++)
		has[i] = snprintf(p, sizeof(p), "%s/%s", dir, marks[i]) < (int)sizeof(p) && access(p, F_OK) == 0;
	return has[0] && ((has[1] && has[2]) || has[3]);
}

/* A write_paths entry is a tree the actor guards only below its top: one
 * that lies in a repository's .git or git directory (a bare one's
 * `hooks/`), or in an AI agent's project configuration (~/.gemini,
 * ~/.vscode/extensions), would let runs write what the person's git or
 * agent runs on the host (SPEC §15.2).  Each component is looked at as
 * written and resolved.  0, or -1 with the sentence in err. */
static int writable_safely(const char *who, const char *path, const char *real, char *err, size_t errlen)
{
	const char *ps[2] = {path, real};
	for (int k = 0; k < 2; k++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", ps[k]);
		for (char *p = dir; *p;) {
			while (*p == '/')
				p++;
			size_t len = strcspn(p, "/");
			bool git = len && guard_name_is_git(p, len), agent = len && guard_name_is_agent_config(p, len);
			char end = p[len];
			p[len] = '\0';
			git |= k == 1 && git_dir_by_marks(dir);
			if (git || agent) {
				errmsg_set(err, errlen,
				           "%s lies in %s, %s, so its runs could write what the person's %s runs on "
				           "the host; name a path outside it",
				           who, dir, git ? "a git directory" : "an AI agent's or editor's configuration",
				           git ? "git" : "agent or editor");
				return -1;
			}
			p[len] = end;
			p += len;
		}
	}
	return 0;
}

int keepout_profiles(const struct config *c, const struct profile_set *ps, char *err, size_t errlen)
{
	for (size_t i = 0; i < ps->n; i++) {
		const struct profile *p = &ps->v[i];
		struct {
			const char *key;
			char *const *v;
			size_t n;
		} lists[] = {{"read_paths", p->read_paths, p->n_read_paths},
		             {"write_paths", p->write_paths, p->n_write_paths},
		             {"exec_paths", p->exec_paths, p->n_exec_paths}};
		for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
			for (size_t k = 0; k < lists[l].n; k++) {
				const char *path = lists[l].v[k];
				char who[PATH_MAX + 160];
				snprintf(who, sizeof(who), "profile %s: %s entry %s", p->name, lists[l].key, path);
				errno = 0;
				char *real = resolve(path);
				if (!real) { /* a component that is a file, a loop, too long: no telling where it leads */
					errmsg_set(err, errlen, "%s cannot be resolved (%s): fix it (each component above the last must be a directory, with no loop of symlinks)",
					           who, strerror(errno ? errno : EINVAL));
					return -1;
				}
				int rc = placed_safely(c, ps, who, path, real, err, errlen);
				if (rc == 0 && lists[l].v == p->write_paths)
					rc = writable_safely(who, path, real, err, errlen);
				free(real);
				if (rc < 0)
					return -1;
			}
	}
	return 0;
}

/* A workspace that is or holds a login user's home (root's, or a uid from
 * 1000): a writable run could leave what that user's shell, git and ssh run
 * by themselves, with no deliberate act (~/.bashrc, ~/.gitconfig's
 * core.fsmonitor, ~/.ssh/authorized_keys; SPEC §15.2). */
static int check_homes(const struct config *c, char *err, size_t errlen)
{
	struct passwd *pw;
	int rc = 0;
	setpwent();
	while (rc == 0 && (pw = getpwent()) != NULL) {
		if ((pw->pw_uid != 0 && pw->pw_uid < 1000) || pw->pw_uid == 65534 || !pw->pw_dir ||
		    pw->pw_dir[0] != '/' || strcmp(pw->pw_dir, "/") == 0)
			continue;
		char *real = realpath(pw->pw_dir, NULL);
		for (size_t i = 0; real && i < c->n_workspaces && rc == 0; i++)
			if (path_under(real, c->workspaces[i])) {
				errmsg_set(err, errlen,
				           "the workspace %s holds %s, the home directory of %s: a run could leave "
				           "what that user's shell, git and ssh run by themselves (~/.bashrc, "
				           "~/.gitconfig, ~/.ssh/authorized_keys); name the project directories "
				           "inside it as workspaces instead",
				           c->workspaces[i], real, pw->pw_name);
				rc = -1;
			}
		free(real);
	}
	endpwent();
	return rc;
}

int keepout_check(const struct config *c, char *err, size_t errlen)
{
	char cakey[PATH_MAX];
	const char *ca_key = NULL;
	const char *slash = c->tls_ca ? strrchr(c->tls_ca, '/') : NULL;
	if (slash && (size_t)(slash - c->tls_ca) + sizeof("/ca.key") <= sizeof(cakey)) {
		snprintf(cakey, sizeof(cakey), "%.*s/ca.key", (int)(slash - c->tls_ca), c->tls_ca);
		if (access(cakey, F_OK) == 0)
			ca_key = cakey;
	}
	const char *move = "move it out of every workspace (e.g. to /etc/sharness or /var/lib/sharness) and point the config there";
	if (check_one(c, "tls.key", c->tls_key, move, err, errlen) < 0 ||
	    check_one(c, "the CA key (next to tls.ca)", ca_key,
	              "keep the CA (certs/mkcerts DIR) out of every workspace, and ideally off this host", err,
	              errlen) < 0 ||
	    check_one(c, "secrets_file", c->secrets_file, move, err, errlen) < 0 ||
	    check_one(c, "audit_log", strcmp(c->audit_log, "-") == 0 ? NULL : c->audit_log, move, err, errlen) < 0 ||
	    check_one(c, "state_dir", c->state_dir,
	              "set state_dir outside every workspace (e.g. /var/lib/sharness)", err, errlen) < 0)
		return -1;
	return check_homes(c, err, errlen);
}

int keepout_git_dir(const struct config *c, const struct profile_set *ps, size_t i, char *err, size_t errlen)
{
	const char *g = c->git_dirs[i];
	if (!g)
		return 0;
	char *state = resolve(c->state_dir);
	bool in_state = state && (path_under(g, state) || path_under(state, g));
	free(state);
	if (in_state) {
		errmsg_set(err, errlen,
		           "workspace %s: its shared git directory %s overlaps the state dir; runs will not "
		           "see it (writes there are refused): move one of them",
		           c->workspaces[i], g);
		return -1;
	}
	/* Where a run may write, it could swap a directory on the way for a
	 * symlink while root places the bind: a write path, or a workspace
	 * but for its own .git (no run changes anything there). */
	for (size_t w = 0; w < c->n_workspaces; w++) {
		char top[PATH_MAX];
		if (path_under(g, c->workspaces[w]) &&
		    (snprintf(top, sizeof(top), "%s/.git", c->workspaces[w]) >= (int)sizeof(top) || !path_under(g, top))) {
			errmsg_set(err, errlen,
			           "workspace %s: its shared git directory %s lies below the top of the workspace "
			           "%s, where a run could move a directory on the way while root binds it; runs "
			           "will not see it (writes there are refused): serve the main checkout itself",
			           c->workspaces[i], g, c->workspaces[w]);
			return -1;
		}
	}
	for (size_t q = 0; q < ps->n; q++)
		for (size_t w = 0; w < ps->v[q].n_write_paths; w++) {
			char *rx = resolve(ps->v[q].write_paths[w]);
			bool bad = under(g, NULL, ps->v[q].write_paths[w], rx, true);
			free(rx);
			if (bad) {
				errmsg_set(err, errlen,
				           "workspace %s: its shared git directory %s lies inside profile %s's "
				           "write_paths entry %s, where a run could replace a directory on the way "
				           "while root binds it; runs will not see it (writes there are refused)",
				           c->workspaces[i], g, ps->v[q].name, ps->v[q].write_paths[w]);
				return -1;
			}
		}
	return 0;
}
