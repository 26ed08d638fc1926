/*
 * check.c - every message from the front, checked in one place (see
 * check.h), in the manner of bubblewrap's privileged_op(): what root
 * accepts from the front, and why each check suffices.
 *
 * The front is assumed compromised: it may send any bytes, any
 * descriptors, at any time.  It can send root exactly one kind of
 * message, PRIVSEP_RUN on the control socket (launcher.c); everything
 * else root reads from it is a descriptor passed with that message.
 *
 * PRIVSEP_RUN, fixed size (privsep_recv refuses a short or long datagram,
 * MSG_TRUNC, and closes every descriptor past the two it reads):
 *   h           magic, version and type must be ours: a message of another
 *               build or kind is refused, never reinterpreted.
 *   run_id      exactly RUN_ID_LEN lowercase hex digits and a NUL: it names
 *               a cgroup and log lines, so no '/', '.', or control byte can
 *               reach a path or a terminal.
 *   profile_id  an index, checked against root's own table (root loaded the
 *               profiles itself; the front's copy is never trusted): the
 *               front can pick a profile, never define one.
 *   workspace_id an index into root's own configured workspaces, same.
 *   timeout_s   1 .. the chosen profile's timeout_max_s: the profile, not
 *               the front, bounds how long a run may live.
 *   cmd_len, cwd_len, env_len, env_count
 *               within the limits both sides share (privsep.h), so the
 *               payload root copies is bounded before it allocates.
 *   has_stdin   0 or 1.
 *   descriptors the run channel: a unix socket whose peer has the front's
 *               uid (check_chan, SO_PEERCRED; anything else has no peer or
 *               another's), so what root writes there, as root, reaches the
 *               front and nobody else: not a listener such as the journal,
 *               where the kernel would stamp root's credentials on it.  A
 *               refused channel gets no answer at all.  And the payload
 *               (check_payload_fd): a memory file, since F_GET_SEALS
 *               answers for no other, so no read of it can block (FUSE,
 *               NFS) while the supervisor holds SIGTERM off; a regular file
 *               of exactly the three lengths, which the supervisor copies
 *               out whole before it looks (pread: the front may rewrite its
 *               memfd afterwards, the copy is what is checked and used: no
 *               TOCTOU).
 *
 * The payload copy (check_payload):
 *   cmd         no NUL inside: bash -c gets exactly the bytes the front
 *               audited and filtered, nothing hidden after a terminator.
 *   cwd         no NUL, absolute, then normalised lexically and required to
 *               lie in the workspace (check_cwd); the supervisor then
 *               resolves it from the workspace down with RESOLVE_BENEATH,
 *               so a symlink cannot lead root out of it.
 *   env         exactly env_count entries "NAME=VALUE\0" filling env_len;
 *               each NAME valid and not one the sandbox sets or that
 *               changes how a loader or shell behaves (profile.c's list):
 *               the front cannot preload a library or redirect PATH.
 *
 * Nothing else of the front's reaches root: the profile's locks, the uid,
 * the cgroup limits and the view all come from root's own configuration.
 */
#include "check.h"

#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "path.h"
#include "profile.h"

const char *check_run(const struct profile_set *profiles, size_t n_workspaces, const struct privsep_run *r)
{
	if (privsep_header_check(&r->h, PRIVSEP_RUN) < 0)
		return "bad message header";
	if (strnlen(r->run_id, sizeof(r->run_id)) != RUN_ID_LEN)
		return "bad run id";
	for (size_t i = 0; i < RUN_ID_LEN; i++)
		if (!strchr("0123456789abcdef", r->run_id[i]))
			return "bad run id";
	if (r->profile_id >= profiles->n)
		return "unknown profile id";
	const struct profile *p = &profiles->v[r->profile_id];
	if (r->workspace_id >= n_workspaces)
		return "unknown workspace id";
	if (r->timeout_s < 1 || r->timeout_s > p->timeout_max_s)
		return "timeout outside the profile's limit";
	if (r->cmd_len < 1 || r->cmd_len > RUN_CMD_MAX || r->cwd_len < 1 || r->cwd_len > RUN_CWD_MAX ||
	    r->env_len > RUN_ENV_BYTES_MAX || r->env_count > RUN_ENV_COUNT_MAX || r->has_stdin > 1)
		return "a length is outside its limit";
	return NULL;
}

static bool env_name_ok(const char *s, size_t len)
{
	char name[256];
	if (len == 0 || len >= sizeof(name))
		return false;
	memcpy(name, s, len);
	name[len] = '\0';
	return profile_env_name_valid(name) && !profile_env_name_dangerous(name);
}

const char *check_payload(const struct privsep_run *q, const char *cmd, const char *cwd, const char *env)
{
	if (memchr(cmd, '\0', q->cmd_len))
		return "cmd holds a NUL byte";
	if (memchr(cwd, '\0', q->cwd_len) || cwd[0] != '/')
		return "cwd is not an absolute path";
	size_t off = 0, n = 0;
	while (off < q->env_len) {
		const char *e = env + off;
		size_t len = strnlen(e, q->env_len - off);
		const char *eq = memchr(e, '=', len);
		if (off + len >= q->env_len || !eq || !env_name_ok(e, (size_t)(eq - e)))
			return "a bad env entry";
		off += len + 1;
		n++;
	}
	if (n != q->env_count)
		return "env count mismatch";
	return NULL;
}

bool check_cwd(const char *cwd_req, const char *workspace, char *cwd, size_t len)
{
	size_t wl = strlen(workspace);
	return path_normalise(cwd_req, cwd, len) == 0 && strncmp(cwd, workspace, wl) == 0 &&
	       (cwd[wl] == '\0' || cwd[wl] == '/');
}

const char *check_chan(int chan, uid_t front_uid)
{
	struct ucred peer = {.uid = (uid_t)-1};
	socklen_t len = sizeof(peer);
	if (getsockopt(chan, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0 || peer.uid != front_uid)
		return "the run channel's peer is not the front";
	return NULL;
}

const char *check_payload_fd(int fd, size_t total)
{
	struct stat st;
	if (fcntl(fd, F_GET_SEALS) < 0)
		return "the payload is not a memory file";
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != total)
		return "payload size mismatch";
	return NULL;
}
