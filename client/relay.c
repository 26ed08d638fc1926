/*
 * relay.c - the client's relay (see relay.h for what it promises).
 *
 * Trust: a peer on the socket is served only when its uid is ours, and a
 * client talks to a relay only when its uid is ours; both then hold the
 * same files (the key included), so neither gains from the other what it
 * did not have.  What a client sends is copied to the daemon as it is:
 * the daemon checks it, as it checks a connection of the client's own.
 *
 * Threads: the main thread accepts; a keeper keeps the warm connection;
 * a worker thread copies one client's bytes, then waits a while for the
 * next client rather than exiting (worker()).  `mu` guards the spare, the
 * session, the counters, the queue and `quit`; a connection belongs to one
 * thread at a time.
 */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "buf.h"
#include "replyend.h"
#include "ticket.h"
#include "tls.h"

/* How long a client waits for "+" before it connects itself: a handshake
 * takes milliseconds; a relay that is stopped or stuck must not hang it. */
#define RELAY_READY_MS 10000
/* A ready connection is replaced after this long unused: the daemon cuts a
 * connection that has sent no request for 5 s (daemon/front/http.c,
 * PREAUTH_TIMEOUT_S), and a client needs a moment to send its own.  A
 * daemon whose replies say it cuts idle connections sooner (Keep-Alive's
 * timeout: limits.idle_timeout_s under 5) gets that less RELAY_SEND_MS. */
#define RELAY_SPARE_MS 3000
#define RELAY_SEND_MS 2000
/* The identity line's limit (three files' stat fields, about 200 bytes,
 * and the URL).  A URL too long for it goes without a relay: the client
 * connects itself.  Small, because the line lies on a fresh client's stack
 * twice, where each page costs a fault (docs/bench.md, session 19). */
#define RELAY_ID_MAX 1024
/* How long a worker waits for the next client before its thread ends. */
#define RELAY_WORKER_IDLE_S 30

extern char **environ;

/* SHARNESS_RELAY (relay.h): unset or empty, a client uses a relay that
 * runs already and starts none (SPEC §10: the messenger never forks or
 * execs); "on" also starts one; anything else, none is used or started. */
enum relay_mode { RELAY_OFF, RELAY_USE, RELAY_START };

static enum relay_mode relay_mode(void)
{
	const char *v = getenv("SHARNESS_RELAY");
	if (!v || !*v)
		return RELAY_USE;
	return strcmp(v, "on") == 0 ? RELAY_START : RELAY_OFF;
}

/* What a relay serves, exactly: the URL, and the three files as the
 * kernel sees them (device, inode, size, modification and change times),
 * so a file rewritten or replaced is another identity.  Only stat(): on a
 * client's way to a relay no file is read and OpenSSL is not started (its
 * first digest alone costs a millisecond, docs/bench.md).  -1 with errno
 * ENAMETOOLONG when it does not fit in N, or stat's when a file is gone. */
static int identity(const struct conf *c, char *out, size_t n)
{
	const char *files[3] = {c->ca, c->cert, c->key};
	int w = snprintf(out, n, "sharness-relay v1 %s %s %s", c->host, c->port, c->base[0] ? c->base : "/");
	for (int i = 0; i < 3 && w > 0 && (size_t)w < n; i++) {
		struct stat st;
		if (stat(files[i], &st) < 0)
			return -1; /* errno: the file went away since it was read */
		w += snprintf(out + w, n - (size_t)w, " %llx:%llx:%lld:%lld.%09ld:%lld.%09ld", (unsigned long long)st.st_dev,
			      (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			      st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	}
	if (w > 0 && (size_t)w < n)
		return 0;
	errno = ENAMETOOLONG;
	return -1;
}

/* "DIR/NAME.relay" (and "DIR/NAME.lock" in `lock`, may be NULL), NAME two
 * FNV-1a hashes of the identity: an address, not a proof, since the client
 * compares the identity the relay states (relay.h).  -1 when there is no
 * ticket directory we may use (errno ENOENT: only missing, ticket.h) or the
 * path does not fit a socket address (ENAMETOOLONG); SHARNESS_RELAY is the
 * callers' to check. */
static int relay_paths(const char *id, bool create, struct sockaddr_un *sa, char *lock, size_t locklen)
{
	char dir[sizeof sa->sun_path]; /* a longer one could not name the socket anyway */
	int dfd = ticket_dir(create, dir, sizeof dir);
	if (dfd < 0)
		return -1;
	close(dfd);
	unsigned long long h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
		h1 = (h1 ^ *p) * 0x100000001b3ULL;
		h2 = (h2 ^ *p) * 0x100000001b3ULL;
	}
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	int w = snprintf(sa->sun_path, sizeof sa->sun_path, "%s/%016llx%016llx.relay", dir, h1, h2);
	if (w <= 0 || (size_t)w >= sizeof sa->sun_path ||
	    (lock && snprintf(lock, locklen, "%s/%016llx%016llx.lock", dir, h1, h2) >= (int)locklen)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static bool peer_is_us(int fd)
{
	struct ucred u;
	socklen_t len = sizeof u;
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &u, &len) == 0 && len == sizeof u && u.uid == geteuid();
}

/* CLOCK_BOOTTIME: a spare's age counts the time the machine slept. */
static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the relay's "+IDENTITY\n" and compares it with ours, within
 * RELAY_READY_MS in all (a relay that sends a byte at a time gains no
 * more). */
static bool relay_ready(int fd, const char *id)
{
	char line[RELAY_ID_MAX + 2];
	size_t got = 0;
	long long until = now_ms() + RELAY_READY_MS;
	while (got < sizeof line) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long long left = until - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) != 1)
			return false;
		ssize_t n = read(fd, line + got, sizeof line - got);
		if (n <= 0)
			return false;
		got += (size_t)n;
		char *nl = memchr(line, '\n', got);
		if (nl)
			/* Nothing follows it: the daemon has had no request yet. */
			return nl == line + got - 1 && line[0] == '+' && (size_t)(nl - line - 1) == strlen(id) &&
			       memcmp(line + 1, id, strlen(id)) == 0;
	}
	return false;
}

int relay_connect(const struct conf *c, int *start)
{
	struct sockaddr_un sa;
	char id[RELAY_ID_MAX];
	enum relay_mode mode = relay_mode();
	*start = 0;
	if (mode == RELAY_OFF || identity(c, id, sizeof id) < 0)
		return -1;
	if (relay_paths(id, false, &sa, NULL, 0) < 0) {
		/* No directory yet: the first request's ticket makes it.  One that
		 * is off, not ours or too long a path: no relay at all. */
		*start = mode == RELAY_START && errno == ENOENT;
		return -1;
	}
	/* Non-blocking: a relay that is stopped with a full backlog makes a
	 * blocking connect() wait for ever (EAGAIN here: busy, not absent). */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		*start = mode == RELAY_START && (errno == ENOENT || errno == ECONNREFUSED);
		close(fd);
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || !peer_is_us(fd) || !relay_ready(fd, id)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* `path` made absolute, its own symlinks kept (not realpath): the relay
 * then watches the names the clients stat, and a symlink repointed to a
 * renewed certificate (certbot's live/) is a change to it too. */
static bool absolute(const char *path, char *out, size_t n)
{
	char cwd[PATH_MAX];
	if (path[0] == '/')
		return snprintf(out, n, "%s", path) < (int)n;
	return getcwd(cwd, sizeof cwd) && snprintf(out, n, "%s/%s", cwd, path) < (int)n;
}

void relay_start(const struct conf *c)
{
	/* The relay runs from "/", so it gets the files by absolute path. */
	char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX], url[4096];
	if (!absolute(c->cert, cert, sizeof cert) || !absolute(c->key, key, sizeof key) ||
	    !absolute(c->ca, ca, sizeof ca) || snprintf(url, sizeof url, "%s", c->url) >= (int)sizeof url)
		return;
	char *argv[] = {"sharness-client", "--url", url, "--cert", cert, "--key", key, "--ca", ca, "relay", NULL};
	/* Only what the relay reads: not the agent's environment, which may
	 * hold its own keys, for the relay's whole life. */
	char *env[64];
	size_t n = 0;
	for (char **e = environ; *e && n < sizeof env / sizeof env[0] - 1; e++)
		if (strncmp(*e, "SHARNESS_", 9) == 0 || strncmp(*e, "HOME=", 5) == 0 ||
		    strncmp(*e, "XDG_RUNTIME_DIR=", 16) == 0)
			env[n++] = *e;
	env[n] = NULL;
	pid_t a = fork();
	if (a < 0)
		return;
	if (a == 0) {
		/* Only async-signal-safe calls until the exec: the client may
		 * have a thread (run.c's approval watcher).  setsid: no terminal,
		 * no signal of the caller's process group; the second fork: never
		 * a session leader that could acquire a terminal. */
		if (setsid() < 0)
			_exit(1);
		pid_t b = fork();
		if (b != 0)
			_exit(b < 0);
		int nul = open("/dev/null", O_RDWR); /* not O_CLOEXEC: it may be fd 0 itself */
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0 || chdir("/") < 0)
			_exit(1);
		(void)close_range(3, ~0U, 0);
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	while (waitpid(a, NULL, 0) < 0 && errno == EINTR)
		;
}

/* ---- the relay itself ---- */

struct relay {
	const struct conf *c;
	SSL_CTX *ctx;
	pthread_mutex_t mu;
	pthread_cond_t made;    /* a handshake (`making` false), client or worker ended */
	pthread_cond_t work;    /* a client was queued for an idle worker, or quit */
	bool making;            /* the keeper is making the next spare */
	struct tls_conn *spare; /* ready, nonblocking; NULL when there is none */
	long long spare_born;   /* when its handshake ended, monotonic ms */
	long spare_ms;          /* a spare's life, RELAY_SPARE_MS or less; none is kept at 0 */
	SSL_SESSION *session;   /* the newest ticket: the next handshake offers it */
	int wake[2];            /* the keeper's pipe: the spare was taken, or quit */
	time_t last_client;     /* monotonic seconds */
	int active;             /* clients being served or queued */
	int workers;            /* worker threads alive */
	int idle;               /* waiting workers no queued client is counted for */
	struct client *queue;   /* clients for the waiting workers (never more than they) */
	bool quit;              /* a connection failed: serve nobody new */
	char why[600];          /* why it quit */
	char id[RELAY_ID_MAX];  /* identity(): what it serves */
};

static time_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Keeps the newest ticket a connection received, for the next handshake;
 * `mu` held. */
static void keep_session_locked(struct relay *r, struct tls_conn *t)
{
	if (!t->fresh)
		return;
	SSL_SESSION_free(r->session);
	r->session = t->fresh;
	t->fresh = NULL;
}

static void keep_session(struct relay *r, struct tls_conn *t)
{
	pthread_mutex_lock(&r->mu);
	keep_session_locked(r, t);
	pthread_mutex_unlock(&r->mu);
}

static void quit_with(struct relay *r, const char *why)
{
	pthread_mutex_lock(&r->mu);
	if (!r->quit)
		snprintf(r->why, sizeof r->why, "%s", why);
	r->quit = true;
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->mu);
	(void)!write(r->wake[1], "q", 1);
}

/* A new connection to the daemon (blocking until it is up), offering the
 * newest ticket.  NULL, and the relay quits, when it fails. */
static struct tls_conn *open_conn(struct relay *r)
{
	char err[600];
	struct tls_conn *t = malloc(sizeof *t);
	if (!t) {
		quit_with(r, "out of memory");
		return NULL;
	}
	/* Each ticket is offered once (RFC 8446 C.4: a client should not
	 * reuse one), and each connection's own new ticket is kept for the
	 * next (keep_session). */
	pthread_mutex_lock(&r->mu);
	SSL_SESSION *offer = r->session;
	r->session = NULL;
	pthread_mutex_unlock(&r->mu);
	int rc = tls_open(t, r->c, r->ctx, offer, 1, err, sizeof err);
	SSL_SESSION_free(offer);
	if (rc < 0) {
		free(t);
		quit_with(r, err);
		return NULL;
	}
	return t;
}

static void close_conn(struct relay *r, struct tls_conn *t)
{
	if (!t)
		return;
	keep_session(r, t);
	/* Closed without close_notify, OpenSSL would mark its session, which
	 * is the newest ticket's, as not to be resumed (ssl_clear_bad_session).
	 * These connections end as HTTP ends them: shut down quietly. */
	if (t->ssl) {
		SSL_set_quiet_shutdown(t->ssl, 1);
		SSL_shutdown(t->ssl);
	}
	tls_close(t, 0);
	free(t);
}

/* Keeps one connection ready while clients keep coming, never older than
 * spare_ms: the daemon would cut it at 5 s, or sooner (relay.h). */
static void *keeper(void *arg)
{
	struct relay *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		bool quit = r->quit, warm = now_s() - r->last_client < RELAY_WARM_S;
		struct tls_conn *old = r->spare && (!warm || now_ms() - r->spare_born >= r->spare_ms) ? r->spare : NULL;
		if (old)
			r->spare = NULL;
		/* Made while no client is served: on a machine of few CPUs a
		 * handshake beside a run slows the run (docs/bench.md). */
		bool make = !r->spare && warm && !quit && r->active == 0 && r->spare_ms > 0;
		r->making = make;
		pthread_mutex_unlock(&r->mu);
		close_conn(r, old);
		if (quit)
			return NULL;
		if (make) {
			struct tls_conn *t = open_conn(r);
			if (t)
				set_nonblocking(t->fd);
			pthread_mutex_lock(&r->mu);
			r->spare = t;
			r->spare_born = now_ms();
			r->making = false;
			pthread_cond_broadcast(&r->made);
			pthread_mutex_unlock(&r->mu);
			if (!t)
				return NULL;
		}
		pthread_mutex_lock(&r->mu);
		struct tls_conn *watched = r->spare;
		int fd = watched ? watched->fd : -1;
		long wait = watched ? r->spare_ms - (long)(now_ms() - r->spare_born) : 1000;
		pthread_mutex_unlock(&r->mu);
		struct pollfd p[2] = {{.fd = r->wake[0], .events = POLLIN}, {.fd = fd, .events = POLLIN}};
		int n = poll(p, fd >= 0 ? 2 : 1, wait > 0 ? (int)wait : 0);
		char drain[64];
		if (n > 0 && (p[0].revents & POLLIN))
			(void)!read(r->wake[0], drain, sizeof drain);
		if (n <= 0 || !watched || !(p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		/* Readable while idle: a ticket (taken in by SSL_read), or the
		 * daemon closing it.  Only if it is still ours. */
		pthread_mutex_lock(&r->mu);
		struct tls_conn *dead = NULL;
		if (r->spare == watched) {
			char b[1];
			int m = SSL_read(watched->ssl, b, 1);
			if (m > 0 || SSL_get_error(watched->ssl, m) != SSL_ERROR_WANT_READ) {
				dead = watched; /* closed, or it spoke unasked: not usable */
				r->spare = NULL;
			} else {
				keep_session_locked(r, watched); /* its ticket, for the next handshake */
			}
		}
		pthread_mutex_unlock(&r->mu);
		close_conn(r, dead);
	}
}

/* Writes all of `p` to a nonblocking TLS connection. */
static int tls_write_all(struct tls_conn *t, const char *p, size_t n)
{
	while (n) {
		int w = SSL_write(t->ssl, p, n > (1u << 30) ? 1 << 30 : (int)n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		int e = SSL_get_error(t->ssl, w);
		struct pollfd p1 = {.fd = t->fd,
				    .events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : e == SSL_ERROR_WANT_READ ? POLLIN : 0};
		if (!p1.events || poll(&p1, 1, -1) < 0)
			return -1;
	}
	return 0;
}

struct client {
	struct relay *r;
	int fd;
	struct tls_conn *t;  /* the spare, or NULL: made here */
	long long born;      /* the spare's */
	long life;           /* and how long it may wait unused (spare_ms) */
	struct client *next; /* in the queue */
};

/* What the relay learns of the reply it carried, for the connection's
 * next use. */
struct reply_seen {
	unsigned keep_alive_s; /* its Keep-Alive timeout, 0 when it had none */
	long long ended_ms;    /* when its last byte came: the daemon's idle time counts from then */
};

/* Copies bytes both ways until either end closes.  True when the client
 * closed after one whole reply that leaves the connection open for another
 * request (replyend.h), and it sent nothing after that reply; then `seen`
 * holds what the reply said. */
static bool copy_both_ways(int cfd, struct tls_conn *t, struct reply_seen *seen)
{
	static __thread struct replyend end;  /* 16 KB: not on the stack */
	static __thread struct requestend req; /* the same */
	/* 16 KiB, as much plaintext as one TLS record holds.  Each client's
	 * thread is new, its stack faulted in page by page and the whole
	 * frame probed (-fstack-clash-protection): 64 KiB here made 12 of
	 * the 16 page faults a fresh client cost the relay. */
	char buf[16384];
	memset(&end, 0, sizeof end);
	memset(&req, 0, sizeof req);
	bool sent_after = false;
	for (;;) {
		struct pollfd p[2] = {{.fd = cfd, .events = POLLIN}, {.fd = t->fd, .events = POLLIN}};
		/* Poll unless OpenSSL holds decrypted bytes.  Not SSL_has_pending:
		 * that is also true for part of a record, which only more bytes
		 * from the socket complete, so skipping poll then spun on a CPU
		 * until the daemon sent the rest. */
		if (SSL_pending(t->ssl) == 0 && poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (p[0].revents) {
			ssize_t n = read(cfd, buf, sizeof buf);
			if (n == 0) {
				seen->keep_alive_s = end.keep_alive_s;
				return replyend_reusable(&end) && !sent_after && requestend_one(&req);
			}
			sent_after = sent_after || replyend_reusable(&end);
			if (n > 0)
				requestend_feed(&req, buf, (size_t)n);
			if (n < 0 || tls_write_all(t, buf, (size_t)n) < 0)
				return false;
		}
		for (;;) { /* everything OpenSSL has decrypted or can */
			int n = SSL_read(t->ssl, buf, sizeof buf);
			if (n > 0) {
				replyend_feed(&end, buf, (size_t)n);
				if (!seen->ended_ms && replyend_reusable(&end))
					seen->ended_ms = now_ms();
				if (fd_write_all(cfd, buf, (size_t)n) < 0)
					return false;
				continue;
			}
			int e = SSL_get_error(t->ssl, n);
			if (e == SSL_ERROR_WANT_WRITE) { /* a TLS 1.3 KeyUpdate to answer */
				struct pollfd w = {.fd = t->fd, .events = POLLOUT};
				if (poll(&w, 1, -1) < 0)
					return false;
				continue;
			}
			if (e != SSL_ERROR_WANT_READ)
				return false; /* the daemon closed it: the reply is complete */
			break;
		}
	}
}

/* After a reply that left it open: the spare again, if there is none
 * (its age counts from the reply's end, as the daemon's idle timeout
 * does), else closed.  The reply's Keep-Alive timeout sets every spare's
 * life from now on (the daemon's limit is one for all its connections); a
 * reply without one, the life a daemon that does not say gets. */
static void give_back(struct relay *r, struct tls_conn *t, const struct reply_seen *seen)
{
	long long ms = (long long)seen->keep_alive_s * 1000 - RELAY_SEND_MS;
	pthread_mutex_lock(&r->mu);
	r->spare_ms = !seen->keep_alive_s || ms >= RELAY_SPARE_MS ? RELAY_SPARE_MS : ms < 0 ? 0 : (long)ms;
	bool keep = !r->quit && !r->spare && r->spare_ms > 0;
	if (keep) {
		r->spare = t;
		r->spare_born = seen->ended_ms;
	}
	pthread_mutex_unlock(&r->mu);
	if (keep)
		(void)!write(r->wake[1], "k", 1); /* the keeper watches it now */
	else
		close_conn(r, t);
}

/* The spare as handed over: not past its age (CLOCK_BOOTTIME: a suspended
 * machine's time counts), and not closed by the daemon meanwhile.  Nothing
 * has been sent on it, so a new one may replace it. */
static bool still_good(struct tls_conn *t, long long born, long life)
{
	if (now_ms() - born >= life)
		return false;
	struct pollfd p = {.fd = t->fd, .events = POLLIN};
	if (poll(&p, 1, 0) == 0)
		return true;
	char b[1];
	int m = SSL_read(t->ssl, b, 1);
	return m <= 0 && SSL_get_error(t->ssl, m) == SSL_ERROR_WANT_READ; /* a ticket only */
}

static void serve_client(struct client *cl)
{
	struct relay *r = cl->r;
	pthread_mutex_lock(&r->mu);
	bool quit = r->quit;
	pthread_mutex_unlock(&r->mu);
	if (quit) { /* ending: it connects itself */
		close_conn(r, cl->t);
		cl->t = NULL;
		goto out;
	}
	if (cl->t && !still_good(cl->t, cl->born, cl->life)) {
		close_conn(r, cl->t);
		cl->t = NULL;
	}
	if (!cl->t) {
		/* The keeper's handshake, if one is under way, ends sooner than a
		 * new one; past a second, make our own. */
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_mutex_lock(&r->mu);
		while (r->making && !r->spare && pthread_cond_timedwait(&r->made, &r->mu, &until) == 0)
			;
		cl->t = r->spare;
		r->spare = NULL;
		pthread_mutex_unlock(&r->mu);
		(void)!write(r->wake[1], "t", 1);
	}
	if (!cl->t) {
		cl->t = open_conn(r);
		if (cl->t)
			set_nonblocking(cl->t->fd);
	}
	char line[RELAY_ID_MAX + 2];
	int n = snprintf(line, sizeof line, "+%s\n", r->id);
	struct reply_seen seen = {0};
	if (cl->t && n > 0 && (size_t)n < sizeof line && fd_write_all(cl->fd, line, (size_t)n) == 0 &&
	    copy_both_ways(cl->fd, cl->t, &seen))
		give_back(r, cl->t, &seen);
	else
		close_conn(r, cl->t);
out:
	close(cl->fd);
	free(cl);
	(void)!write(r->wake[1], "d", 1);
	pthread_mutex_lock(&r->mu);
	r->active--;
	r->last_client = now_s();
	pthread_cond_broadcast(&r->made);
	pthread_mutex_unlock(&r->mu);
}

/* A worker: serves its client, then waits up to RELAY_WORKER_IDLE_S for the
 * next one.  Clients in a row so cost no thread each: no clone, and no
 * madvise of a dead thread's stack by glibc, which for a process whose
 * threads ran on other CPUs is a TLB shootdown (docs/bench.md). */
static void *worker(void *arg)
{
	struct client *cl = arg;
	struct relay *r = cl->r;

	while (cl) {
		serve_client(cl);
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += RELAY_WORKER_IDLE_S;
		pthread_mutex_lock(&r->mu);
		r->idle++;
		while (!r->queue && !r->quit && pthread_cond_timedwait(&r->work, &r->mu, &until) == 0)
			;
		/* A queued client was counted out of `idle` when it was queued;
		 * leaving without one gives the place up. */
		cl = r->queue;
		if (cl) {
			r->queue = cl->next;
		} else {
			r->idle--;
			r->workers--;
			/* Last: once `workers` is 0, relay_main may return (r is its own). */
			pthread_cond_broadcast(&r->made);
		}
		pthread_mutex_unlock(&r->mu);
	}
	return NULL;
}

/* A client on the socket: handed the spare, or served by a new one. */
static void accept_client(struct relay *r, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct client *cl = peer_is_us(fd) ? calloc(1, sizeof *cl) : NULL;
	pthread_mutex_lock(&r->mu);
	bool room = cl && !r->quit && r->active < RELAY_MAX_CLIENTS, queued = false;
	if (room) {
		cl->r = r;
		cl->fd = fd;
		cl->t = r->spare;
		cl->born = r->spare_born;
		cl->life = r->spare_ms;
		r->spare = NULL;
		r->active++;
		r->last_client = now_s();
		if (r->idle > 0) { /* a waiting worker takes it */
			r->idle--;
			cl->next = r->queue;
			r->queue = cl;
			pthread_cond_signal(&r->work);
			queued = true;
		} else {
			r->workers++;
		}
	}
	pthread_mutex_unlock(&r->mu);
	if (!room) { /* it connects itself instead */
		free(cl);
		close(fd);
		return;
	}
	(void)!write(r->wake[1], "t", 1);
	if (queued)
		return;
	pthread_attr_t at;
	pthread_t tid;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&tid, &at, worker, cl) != 0) {
		pthread_mutex_lock(&r->mu);
		r->active--;
		r->workers--;
		pthread_mutex_unlock(&r->mu);
		close_conn(r, cl->t);
		close(fd);
		free(cl);
	}
	pthread_attr_destroy(&at);
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* SHARNESS_RELAY_IDLE: seconds, 0 for never (the user unit,
 * systemd/sharness-relay.service, which systemd keeps running). */
static long idle_limit(void)
{
	const char *v = getenv("SHARNESS_RELAY_IDLE");
	char *end;
	long s = v ? strtol(v, &end, 10) : 0;
	return v && *v && !*end && s >= 0 && s <= 86400 ? s : RELAY_IDLE_S;
}

/* Opens and takes the relay's lock file `path`: its descriptor once held;
 * LOCK_HELD_ELSEWHERE when another relay holds it and `wait` is false, or a
 * stop signal came while waiting; -1 with errno.  A relay that never idles
 * (the user unit's) waits, checking each second, and serves once the
 * holder ends: one a client started idles out in minutes, and the unit's
 * relay, exiting instead, would be started again every 10 s to try.  The
 * file held must still be the one at `path`: a directory removed and made
 * again during a long wait holds another lock file, another relay's. */
#define LOCK_HELD_ELSEWHERE (-2)
static int take_lock(const char *path, bool wait, const sigset_t *during_poll)
{
	bool said = false;
	for (;;) {
		int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		int got;
		while ((got = flock(fd, LOCK_EX | LOCK_NB)) < 0 && errno == EWOULDBLOCK && wait && !stop_signal) {
			if (!said)
				fprintf(stderr, "sharness-client relay: another relay serves this identity; this one takes "
						"over when it ends\n");
			said = true;
			struct timespec second = {.tv_sec = 1};
			(void)ppoll(NULL, 0, &second, during_poll);
		}
		if (got < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return e == EWOULDBLOCK ? LOCK_HELD_ELSEWHERE : -1;
		}
		struct stat held, now;
		if (fstat(fd, &held) == 0 && lstat(path, &now) == 0 && held.st_dev == now.st_dev &&
		    held.st_ino == now.st_ino)
			return fd;
		close(fd); /* replaced while it waited: take the one there now */
	}
}

/* The socket file is still the one we bound (same inode): a relay whose
 * directory was removed serves nobody and should not linger. */
static bool still_bound(const char *path, const struct stat *bound)
{
	struct stat st;
	return lstat(path, &st) == 0 && st.st_ino == bound->st_ino && st.st_dev == bound->st_dev;
}

/* Binds the listening socket *lfd at the relay path `sa`, 0600, in the
 * ticket directory as opened and checked now, which must hold the lock
 * file we hold (`lock`, `lockfd`): every change there goes through that
 * descriptor, so a parent directory that others may write cannot swap the
 * directory for theirs, or the socket for a symlink, under our feet (review
 * s36, 3).  Returns the directory's descriptor, or -1 with errno. */
static int listen_here(const struct sockaddr_un *sa, const char *lock, int lockfd, int *lfd, struct stat *bound)
{
	char dir[sizeof sa->sun_path];
	struct stat held, there;
	const char *name = strrchr(sa->sun_path, '/') + 1;
	int dfd = ticket_dir(false, dir, sizeof dir), cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), e, rc = -1;
	if (dfd < 0 || cwd < 0)
		goto fail;
	if (fstat(lockfd, &held) < 0 || fstatat(dfd, strrchr(lock, '/') + 1, &there, AT_SYMLINK_NOFOLLOW) < 0 ||
	    held.st_dev != there.st_dev || held.st_ino != there.st_ino) {
		errno = ESTALE; /* the directory was replaced since the lock was taken */
		goto fail;
	}
	(void)unlinkat(dfd, name, 0); /* a dead relay's; we hold the lock */
	struct sockaddr_un here = {.sun_family = AF_UNIX};
	snprintf(here.sun_path, sizeof here.sun_path, "%s", name);
	/* bind(2) takes no directory descriptor: from inside it, relative, and
	 * 0600 as it is made (no chmod, which would follow a symlink).  Still
	 * one thread here, so the cwd and the umask are ours to change. */
	mode_t mask = umask(0177);
	*lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lfd >= 0 && fchdir(dfd) == 0) {
		rc = bind(*lfd, (struct sockaddr *)&here, sizeof here);
		e = errno;
		if (fchdir(cwd) < 0 && rc == 0)
			e = errno, rc = -1;
		errno = e;
	}
	e = errno;
	umask(mask);
	errno = e;
	if (rc < 0 || fstatat(dfd, name, bound, AT_SYMLINK_NOFOLLOW) < 0 || listen(*lfd, 64) < 0)
		goto fail;
	close(cwd);
	return dfd;
fail:
	e = errno;
	if (dfd >= 0)
		close(dfd);
	if (cwd >= 0)
		close(cwd);
	errno = e;
	return -1;
}

int relay_main(const struct conf *c)
{
	struct sockaddr_un sa;
	char lock[4200], again[RELAY_ID_MAX], err[600];
	struct relay r = {.c = c, .wake = {-1, -1}, .last_client = now_s(), .spare_ms = RELAY_SPARE_MS};
	int lockfd = -1, lfd = -1, dfd = -1, rc = 1;
	pthread_t keeper_tid;
	bool keeping = false;
	struct stat bound = {0};
	long idle = idle_limit();

	signal(SIGPIPE, SIG_IGN);
	/* SIGTERM, SIGINT and SIGHUP end it cleanly (its socket removed).
	 * Blocked in every thread, they arrive only in the main thread's
	 * ppoll(). */
	sigset_t stops, during_poll;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGHUP);
	struct sigaction sa_stop = {.sa_handler = on_stop_signal};
	sigemptyset(&sa_stop.sa_mask);
	pthread_sigmask(SIG_BLOCK, &stops, &during_poll);
	sigdelset(&during_poll, SIGTERM);
	sigdelset(&during_poll, SIGINT);
	sigdelset(&during_poll, SIGHUP);
	sigaction(SIGTERM, &sa_stop, NULL);
	sigaction(SIGINT, &sa_stop, NULL);
	sigaction(SIGHUP, &sa_stop, NULL);
	umask(077);
	/* It holds the private key in memory: no core dump, no ptrace by
	 * other processes of the uid. */
	(void)prctl(PR_SET_DUMPABLE, 0);
	/* Each refusal says what to change: run as a service, it is read in
	 * the journal.  Settings that can never work end it with
	 * RELAY_EXIT_SETTINGS, which the user unit does not restart. */
	if (relay_mode() == RELAY_OFF) {
		fprintf(stderr, "sharness-client relay: SHARNESS_RELAY=%s turns the relay off (unset it, or set it to on)\n",
			getenv("SHARNESS_RELAY"));
		return RELAY_EXIT_SETTINGS;
	}
	const char *tickets = getenv("SHARNESS_TICKETS");
	if (tickets && strcmp(tickets, "off") == 0) {
		fprintf(stderr, "sharness-client relay: SHARNESS_TICKETS=off, and its socket is kept in the ticket directory\n");
		return RELAY_EXIT_SETTINGS;
	}
	r.ctx = tls_ctx_new(c, err, sizeof err); /* says which file it cannot read */
	if (!r.ctx) {
		fprintf(stderr, "sharness-client relay: %s\n", err);
		return 1;
	}
	if (identity(c, r.id, sizeof r.id) < 0) {
		if (errno == ENAMETOOLONG) {
			fprintf(stderr, "sharness-client relay: the URL is too long to name a relay (about 800 bytes at "
					"most): use a shorter path in it\n");
			rc = RELAY_EXIT_SETTINGS;
		} else {
			fprintf(stderr, "sharness-client relay: a certificate, key or CA file went away as it started (%s): "
					"start it again once the files are in place\n", strerror(errno));
		}
		goto out;
	}
	if (relay_paths(r.id, true, &sa, lock, sizeof lock) < 0) {
		int e = errno;
		fprintf(stderr, "sharness-client relay: no usable ticket directory: %s (SHARNESS_TICKETS: a directory of ours, "
				"mode 0700, whose path fits a socket address)\n", strerror(e));
		/* Not for a shortage (EMFILE, ENOMEM, ENOSPC, EIO): that passes. */
		if (e == EPERM || e == EACCES || e == ENAMETOOLONG || e == ENOENT || e == ENOTDIR || e == ELOOP || e == EROFS)
			rc = RELAY_EXIT_SETTINGS;
		goto out;
	}
	lockfd = take_lock(lock, idle == 0, &during_poll);
	if (lockfd < 0) {
		if (lockfd == LOCK_HELD_ELSEWHERE)
			rc = 0; /* another relay serves this name, or a stop signal came while waiting */
		else
			fprintf(stderr, "sharness-client relay: cannot lock %s: %s\n", lock, strerror(errno));
		goto out;
	}
	/* After a wait, clients were coming to the other relay until now. */
	r.last_client = now_s();
	if (tls_ctx_load(r.ctx, c, err, sizeof err) < 0) {
		fprintf(stderr, "sharness-client relay: %s\n", err);
		goto out;
	}
	/* What it loaded is what the name says: no file changed meanwhile. */
	if (identity(c, again, sizeof again) < 0 || strcmp(r.id, again) != 0) {
		fprintf(stderr, "sharness-client relay: a certificate, key or CA file changed while it started\n");
		goto out;
	}
	dfd = listen_here(&sa, lock, lockfd, &lfd, &bound);
	if (dfd < 0) {
		fprintf(stderr, "sharness-client relay: cannot listen on %s: %s\n", sa.sun_path, strerror(errno));
		goto out;
	}
	r.session = ticket_load(c);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int cv = pthread_cond_init(&r.made, &ca) | pthread_cond_init(&r.work, &ca);
	pthread_condattr_destroy(&ca);
	if (cv != 0 || pthread_mutex_init(&r.mu, NULL) != 0 || pipe2(r.wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pthread_create(&keeper_tid, NULL, keeper, &r) != 0) {
		fprintf(stderr, "sharness-client relay: cannot start: %s\n", strerror(errno));
		goto out;
	}
	keeping = true;
	for (;;) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		struct timespec second = {.tv_sec = 1};
		int n = ppoll(&p, 1, &second, &during_poll);
		pthread_mutex_lock(&r.mu);
		bool quit = r.quit, done = idle > 0 && r.active == 0 && now_s() - r.last_client >= idle;
		pthread_mutex_unlock(&r.mu);
		/* A file replaced or rewritten (a renewed certificate): clients now
		 * state another identity and pass this relay by.  Status 1, so that
		 * the user unit starts a relay for the new files. */
		if (!quit && (identity(c, again, sizeof again) < 0 || strcmp(r.id, again) != 0)) {
			quit_with(&r, "a certificate, key or CA file changed: a relay for the new files is needed");
			break;
		}
		if (quit || done || stop_signal || !still_bound(sa.sun_path, &bound))
			break;
		if (n > 0)
			accept_client(&r, lfd);
	}
	pthread_mutex_lock(&r.mu);
	rc = r.quit ? 1 : 0;
	if (r.quit)
		fprintf(stderr, "sharness-client relay: %s\n", r.why);
	pthread_mutex_unlock(&r.mu);
out:
	if (lfd >= 0) {
		/* New clients connect themselves from now on, and may start the
		 * next relay while this one finishes its clients. */
		if (dfd >= 0 && still_bound(sa.sun_path, &bound))
			(void)unlinkat(dfd, strrchr(sa.sun_path, '/') + 1, 0);
		close(lfd);
	}
	if (dfd >= 0)
		close(dfd);
	if (lockfd >= 0)
		close(lockfd);
	if (keeping) {
		quit_with(&r, "ending");
		/* Bounded: a connection being made gives up after
		 * TLS_HANDSHAKE_TIMEOUT_S (tls.h). */
		pthread_join(keeper_tid, NULL);
		pthread_mutex_lock(&r.mu);
		/* The clients being served finish first; the waiting workers
		 * end on `quit`. */
		while (r.active > 0 || r.workers > 0)
			pthread_cond_wait(&r.made, &r.mu);
		pthread_mutex_unlock(&r.mu);
		close_conn(&r, r.spare);
		close(r.wake[0]);
		close(r.wake[1]);
	}
	SSL_SESSION_free(r.session);
	SSL_CTX_free(r.ctx);
	return rc;
}
