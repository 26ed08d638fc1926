/*
 * doctor.c - `sharnessd --doctor` (SPEC §15.1): the start-up's checks (main.c
 * self_check, check_tls, the uid range and instance claims, the listener)
 * plus certificates, workspaces, delegation and reachability, one ✔/✘ line
 * each, with the exact fix for this system.
 *
 * Nothing here changes the system: cgroups are probed read-only
 * (runcg_probe, never runcg_init_named), the claims are probed
 * (instance_probe: no socket bound, no lock file created), the namespaces
 * tested are a child's and vanish with it, no file is opened for writing.
 *
 * Trust: root; the configuration and unit files are operator input, the
 * names in /proc come from other local processes and are parsed strictly.
 */
#include "doctor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/capability.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "config.h"
#include "instance.h"
#include "gitdirs.h"
#include "keepout.h"
#include "landlock.h"
#include "path.h"
#include "ns.h"
#include "procstatus.h"
#include "profile.h"
#include "cgsetup.h"
#include "runcg.h"
#include "frontexec.h"
#include "scrub_vault.h"
#include "sandbox_filter.h"
#include "seccomp.h"
#include "uidpool.h"
#include "uidrange.h"

#define EXPIRY_WARN_DAYS 30
#define UNIT_RW_MAX	 64

struct doctor {
	int failed;
};

static void pass(struct doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pass(struct doctor *d, const char *fmt, ...)
{
	va_list ap;
	(void)d;
	fputs("✔ ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* fmt is "what: fix". */
static void fail(struct doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct doctor *d, const char *fmt, ...)
{
	va_list ap;
	d->failed = 1;
	fputs("✘ ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* ---- the kernel: what self_check tests --------------------------------- */

static void check_kernel(struct doctor *d, unsigned min_abi)
{
	char why[1024], err[256];
	int abi = landlock_check((int)min_abi, why, sizeof(why));
	if (abi < 0)
		fail(d, "Landlock: %s", why);
	else
		pass(d, "Landlock ABI %d (landlock_min_abi %u)", abi, min_abi);

	struct sock_fprog prog = {0};
	if (seccomp_build_sandbox(&prog, err, sizeof(err)) < 0) {
		fail(d,
		     "seccomp filter: %s: install libseccomp 2.5 or newer and a kernel with "
		     "CONFIG_SECCOMP_FILTER",
		     err);
	} else {
		pass(d, "seccomp filter builds (%u instructions)", (unsigned)prog.len);
		seccomp_prog_free(&prog);
	}

	/* The namespaces of a run, for real (as self_check): a child that must be
	 * pid 1.  They die with the child; nothing is left. */
	pid_t pid =
	    (pid_t)syscall(SYS_clone, NS_SANDBOX_FLAGS | CLONE_NEWCGROUP | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 1);
	int ws = 0, e = errno;
	if (pid < 0 || waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		fail(d,
		     "run namespaces (pid, mount, ipc, uts, net, cgroup): the kernel refused them (%s): run "
		     "as root "
		     "outside a container that forbids unshare, on a kernel with CONFIG_PID_NS, "
		     "CONFIG_NET_NS, "
		     "CONFIG_CGROUPS",
		     strerror(pid < 0 ? e : EPERM));
	else
		pass(d, "run namespaces (pid, mount, ipc, uts, net, cgroup)");

	int u = ns_idmap_userns(0, 0, 65534);
	if (u < 0) {
		e = errno;
		fail(d,
		     "idmap user namespace: %s: allow user namespaces (sysctl user.max_user_namespaces > 0; "
		     "kernel.unprivileged_userns_clone does not matter for root)",
		     strerror(e));
	} else {
		close(u);
		pass(d, "idmap user namespace (for idmapped workspaces)");
	}
}

static int have_systemd_run(char *out, size_t outlen)
{
	const char *path = getenv("PATH");
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;
	for (char *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, outlen, "%s/systemd-run", dir);
		if (access(out, X_OK) == 0)
			return 1;
	}
	return 0;
}

static void check_cgroups(struct doctor *d, unsigned uid_first)
{
	struct runcg_probe p;
	char sr[4096], parent[32];

	runcg_parent_name(parent, sizeof(parent), uid_first);
	runcg_probe(&p, parent);
	if (!p.layout[0]) {
		fail(d, "cgroups: no pids controller is mounted (neither v1 nor v2): mount cgroup2 on "
			"/sys/fs/cgroup "
			"(a kernel with CONFIG_CGROUP_PIDS)");
		return;
	}
	if (!p.pids) {
		fail(d,
		     "cgroups (%s): the pids controller is not available in %s: %s", p.layout, p.base,
		     runcg_pids_fix());
		return;
	}
	const char *mem = p.memory ? "pids and memory controllers"
				   : "pids controller (no memory controller: "
				     "profiles' memory_max is not enforced)";
	if (!p.runs_dir_fits) {
		fail(d,
		     "cgroups (%s): the run cgroups' directory %s is too long (%zu bytes leave no room for "
		     "a run's name): start sharnessd from a cgroup nearer the root",
		     p.layout, p.runs_dir, strlen(p.runs_dir));
		return;
	}
	if (strcmp(p.layout, "v2") != 0) {
		if (!p.writable)
			fail(d,
			     "cgroups (%s): cannot create %s in %s (%s): run as root with "
			     "/sys/fs/cgroup writable",
			     p.layout, parent, p.base, strerror(p.write_errno));
		else
			pass(d, "cgroups %s: %s; runs below %s/%s", p.layout, mem, p.base, parent);
		return;
	}
	if (p.at_root) {
		pass(d, "cgroups v2%s: %s; a subtree of our own at %s/%s",
		     p.systemd ? "" : " without systemd", mem, p.base, parent);
	} else if (p.delegated) {
		pass(d, "cgroups v2 under systemd: %s; %s is delegated (Delegate=yes)", mem, p.base);
	} else if (have_systemd_run(sr, sizeof(sr))) {
		pass(d,
		     "cgroups v2 under systemd: %s; this process's cgroup %s is not delegated, so the daemon "
		     "will "
		     "restart itself in a transient scope with Delegate=yes (%s), which is fine",
		     mem, p.base, sr);
	} else {
		fail(d,
		     "cgroups v2 under systemd: %s is not delegated and systemd-run is missing: start "
		     "sharnessd from its "
		     "unit (systemctl start sharnessd), or install systemd-run (apt-get install systemd)",
		     p.base);
	}
}

/* ---- certificates ------------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rw, void *u)
{
	(void)buf, (void)size, (void)rw, (void)u;
	return 0; /* never prompt: an encrypted key is refused, as at start-up */
}

static X509 *load_cert(const char *path, char *why, size_t n)
{
	BIO *b = BIO_new_file(path, "r");
	if (!b) {
		snprintf(why, n, "cannot read it (%s)", strerror(errno ? errno : EIO));
		return NULL;
	}
	X509 *x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL);
	BIO_free(b);
	if (!x)
		snprintf(why, n, "it holds no PEM certificate");
	return x;
}

static void fmt_time(const ASN1_TIME *t, char *out, size_t n)
{
	struct tm tm;
	if (!t || ASN1_TIME_to_tm(t, &tm) != 1 || strftime(out, n, "%Y-%m-%d %H:%M UTC", &tm) == 0)
		snprintf(out, n, "(unknown)");
}

/* 0 valid now (*days until notAfter), -1 expired, 1 not yet valid; when in *when. */
static int cert_window(X509 *x, int *days, char *when, size_t n)
{
	int dd = 0, ds = 0;
	if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0) {
		fmt_time(X509_get0_notBefore(x), when, n);
		return 1;
	}
	fmt_time(X509_get0_notAfter(x), when, n);
	if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0)
		return -1;
	ASN1_TIME_diff(&dd, &ds, NULL, X509_get0_notAfter(x));
	*days = dd;
	return 0;
}

static void cert_field(X509 *x, int nid, char *out, size_t n)
{
	out[0] = '\0';
	X509_NAME *name = X509_get_subject_name(x);
	int i = X509_NAME_get_index_by_NID(name, nid, -1);
	ASN1_STRING *s = i >= 0 ? X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)) : NULL;
	if (s)
		snprintf(out, n, "%.*s", ASN1_STRING_length(s), (const char *)ASN1_STRING_get0_data(s));
}

static void dir_of(const char *path, char *out, size_t n)
{
	snprintf(out, n, "%s", path);
	char *slash = strrchr(out, '/');
	if (!slash)
		snprintf(out, n, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		*slash = '\0';
}

/* One line for a certificate's validity; returns 0 when it is valid now. */
static int check_window(struct doctor *d, const char *what, const char *path, X509 *x, const char *renew)
{
	char when[64];
	int days = 0, w = cert_window(x, &days, when, sizeof(when));
	if (w < 0) {
		fail(d, "%s %s expired on %s: %s", what, path, when, renew);
		return -1;
	}
	if (w > 0) {
		fail(d, "%s %s is not valid before %s: fix the clock (timedatectl) or %s", what, path, when,
		     renew);
		return -1;
	}
	if (days < EXPIRY_WARN_DAYS)
		pass(d, "%s %s valid until %s (%d days; renew it soon: %s)", what, path, when, days, renew);
	else
		pass(d, "%s %s valid until %s (%d days)", what, path, when, days);
	return 0;
}

static void check_client_certs(struct doctor *d, const char *cadir, X509 *ca)
{
	static const char *const roles[] = {"app", "orchestrator", "person"};
	char path[4096], why[128], ou[64], renew[4200];
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		snprintf(path, sizeof(path), "%.4000s/%s.pem", cadir, roles[i]);
		if (access(path, F_OK) != 0)
			continue;
		snprintf(renew, sizeof(renew), "issue a new one: certs/mkcerts %s --client %s %s --force",
			 cadir, roles[i], roles[i]);
		X509 *x = load_cert(path, why, sizeof(why));
		if (!x) {
			fail(d, "client certificate %s: %s: %s", path, why, renew);
			continue;
		}
		cert_field(x, NID_organizationalUnitName, ou, sizeof(ou));
		EVP_PKEY *cakey = ca ? X509_get0_pubkey(ca) : NULL;
		if (cakey && X509_verify(x, cakey) != 1)
			fail(d, "client certificate %s is not signed by tls.ca: %s", path, renew);
		else if (!ou[0] || (strcmp(ou, "app") && strcmp(ou, "orchestrator") && strcmp(ou, "person")))
			fail(d,
			     "client certificate %s has %s%s%s, not one of the roles app, orchestrator, "
			     "person: %s",
			     path, ou[0] ? "the role OU=" : "no role (OU)", ou, "", renew);
		else {
			char what[128];
			snprintf(what, sizeof(what), "client certificate (role %s)", ou);
			check_window(d, what, path, x, renew);
		}
		X509_free(x);
	}
}

static void check_tls(struct doctor *d, const struct config *cfg)
{
	char why[128], cadir[4096], renew[4400], cn[128];
	dir_of(cfg->tls_ca, cadir, sizeof(cadir));
	snprintf(
	    renew, sizeof(renew),
	    "issue a new server certificate from tls.ca (development certificates: certs/mkcerts %s --force "
	    "makes a new CA and every certificate; give the clients the new ca.pem and theirs)",
	    cadir);

	X509 *ca = load_cert(cfg->tls_ca, why, sizeof(why));
	if (!ca)
		fail(d, "tls.ca %s: %s: point tls.ca at the CA's ca.pem (certs/mkcerts DIR makes one)",
		     cfg->tls_ca, why);
	else
		check_window(d, "tls.ca", cfg->tls_ca, ca, renew);

	X509 *cert = load_cert(cfg->tls_cert, why, sizeof(why));
	if (!cert)
		fail(d,
		     "tls.cert %s: %s: point tls.cert at the server's server.pem (certs/mkcerts DIR makes "
		     "one)",
		     cfg->tls_cert, why);

	EVP_PKEY *key = NULL;
	BIO *b = BIO_new_file(cfg->tls_key, "r");
	if (!b) {
		fail(d,
		     "tls.key %s: cannot read it (%s): point tls.key at the server's server.key (mode 0600, "
		     "owned by "
		     "root)",
		     cfg->tls_key, strerror(errno ? errno : EIO));
	} else {
		key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
		BIO_free(b);
		if (!key)
			fail(d,
			     "tls.key %s holds no PEM private key (or it is encrypted): point it at "
			     "server.key, unencrypted "
			     "(openssl pkey -in KEY -out server.key)",
			     cfg->tls_key);
		else
			pass(d, "tls.key %s readable", cfg->tls_key);
	}
	if (cert) {
		cert_field(cert, NID_commonName, cn, sizeof(cn));
		if (key && X509_check_private_key(cert, key) != 1)
			fail(d,
			     "tls.key %s does not belong to tls.cert %s: point tls.key at the key made with "
			     "that "
			     "certificate",
			     cfg->tls_key, cfg->tls_cert);
		else if (ca && X509_verify(cert, X509_get0_pubkey(ca)) != 1)
			fail(d, "tls.cert %s is not signed by tls.ca %s: %s", cfg->tls_cert, cfg->tls_ca,
			     renew);
		else if (ca && key)
			pass(d, "tls.cert %s (CN=%s) matches tls.key and is signed by tls.ca", cfg->tls_cert,
			     cn);
		check_window(d, "tls.cert", cfg->tls_cert, cert, renew);
	}
	check_client_certs(d, cadir, ca);
	EVP_PKEY_free(key);
	X509_free(cert);
	X509_free(ca);
}

/* ---- the unit: ProtectHome=, ProtectSystem=, ReadWritePaths= ------------ */

struct unit {
	int found;	    /* a unit file or drop-in was read, or we run under it */
	char where[4096];   /* the unit file read */
	int protect_home;   /* read-only or yes */
	int protect_strict; /* ProtectSystem=strict */
	int caps_set;       /* CapabilityBoundingSet= names a list ... */
	int caps_ptrace;    /* ... and CAP_SYS_PTRACE is on it */
	int caps_chroot;    /* ... and CAP_SYS_CHROOT */
	char rw[UNIT_RW_MAX][512]; /* ReadWritePaths= entries (longer ones are cut, never matched) */
	size_t n_rw;
};

static void unit_line(struct unit *u, char *line)
{
	char *v = strchr(line, '=');
	if (!v)
		return;
	*v++ = '\0';
	v[strcspn(v, "\r\n")] = '\0';
	if (strcmp(line, "ProtectHome") == 0)
		u->protect_home =
		    strcmp(v, "read-only") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "true") == 0;
	else if (strcmp(line, "ProtectSystem") == 0)
		u->protect_strict = strcmp(v, "strict") == 0;
	else if (strcmp(line, "CapabilityBoundingSet") == 0 && *v != '~') {
		/* Lists add up; an empty one resets (systemd.exec(5)). */
		u->caps_set = *v != '\0';
		u->caps_ptrace = *v ? u->caps_ptrace || strstr(v, "CAP_SYS_PTRACE") != NULL : 0;
		u->caps_chroot = *v ? u->caps_chroot || strstr(v, "CAP_SYS_CHROOT") != NULL : 0;
	}
	else if (strcmp(line, "ReadWritePaths") == 0) {
		if (!*v) /* an empty assignment resets the list (systemd.exec(5)) */
			u->n_rw = 0;
		/* Space-separated paths, each optionally prefixed by '-' or '+'. */
		char *t = v;
		while (*t && u->n_rw < UNIT_RW_MAX) {
			t += strspn(t, " \t");
			size_t len = strcspn(t, " \t");
			if (len == 0)
				break;
			char *end = t + len;
			int last = *end == '\0';
			*end = '\0';
			while (*t == '-' || *t == '+')
				t++;
			if (*t == '/' && strlen(t) < sizeof(u->rw[0]))
				memcpy(u->rw[u->n_rw++], t, strlen(t) + 1);
			if (last)
				break;
			t = end + 1;
		}
	}
}

static int unit_read(struct unit *u, const char *path)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		unit_line(u, line);
	fclose(f);
	u->found = 1;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void unit_load(struct unit *u)
{
	static const char *const dirs[] = {"/etc/systemd/system", "/run/systemd/system",
					   "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
					   "/lib/systemd/system"};
	char path[4096];
	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/sharnessd.service", dirs[i]);
		if (unit_read(u, path)) {
			snprintf(u->where, sizeof(u->where), "%s", path);
			break;
		}
	}
	/* Drop-ins in name order, /etc and /run (what systemctl edit writes). */
	for (size_t i = 0; i < 2; i++) {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/sharnessd.service.d", dirs[i]);
		DIR *dd = opendir(dir);
		if (!dd)
			continue;
		char *names[64];
		size_t n = 0;
		struct dirent *de;
		while ((de = readdir(dd)) && n < 64) {
			size_t l = strlen(de->d_name);
			if (l > 5 && strcmp(de->d_name + l - 5, ".conf") == 0 &&
			    (names[n] = strdup(de->d_name)))
				n++;
		}
		closedir(dd);
		qsort(names, n, sizeof(names[0]), cmp_str);
		for (size_t j = 0; j < n; j++) {
			snprintf(path, sizeof(path), "%.3800s/%.255s", dir, names[j]);
			unit_read(u, path);
			free(names[j]);
		}
	}
	/* Under the unit itself but no file found: the shipped unit's values. */
	char cg[4096] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		size_t n = fread(cg, 1, sizeof(cg) - 1, f);
		cg[n] = '\0';
		fclose(f);
	}
	if (!u->found && u->n_rw == 0 && strstr(cg, "/sharnessd.service")) {
		u->found = 1;
		u->protect_home = u->protect_strict = 1;
		snprintf(u->rw[0], sizeof(u->rw[0]), "/srv/sharness");
		u->n_rw = 1;
		snprintf(u->where, sizeof(u->where), "(running under sharnessd.service)");
	}
}

bool doctor_can_connect(void)
{
	char buf[PROCSTATUS_MAX];
	const char *eff = procstatus_read(0, buf, sizeof(buf)) == 0 ? procstatus_find(buf, "CapEff") : NULL;
	unsigned long long caps = eff ? strtoull(eff, NULL, 16) : 0;
	return (caps >> CAP_SYS_PTRACE & 1) && (caps >> CAP_SYS_CHROOT & 1);
}

int doctor_ptrace_scope(void)
{
	char buf[16] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	return n > 0 ? atoi(buf) : 0;
}

const char *doctor_core_socket(char *pattern, size_t size)
{
	int fd = open("/proc/sys/kernel/core_pattern", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, pattern, size - 1) : -1;
	if (fd >= 0)
		close(fd);
	pattern[n > 0 ? n : 0] = '\0';
	pattern[strcspn(pattern, "\n")] = '\0';
	if (pattern[0] != '@')
		return NULL;
	return "kernel.core_pattern is a socket: the kernel hands every crash of a run to the root service "
	       "listening there whatever a run's core limit (a pipe helper, `|`, it does not); set a pipe or "
	       "file pattern (sysctl kernel.core_pattern=core, or the distribution's `|` helper)";
}

/* A run's crash: RLIMIT_CORE 1 keeps the core from a file and from a `|`
 * helper (root/sandbox.c); a socket pattern ignores it. */
static void check_core_pattern(struct doctor *d)
{
	char pattern[256];
	const char *why = doctor_core_socket(pattern, sizeof(pattern));
	if (why)
		fail(d, "%s (now %s)", why, pattern);
	else
		pass(d, "kernel.core_pattern %s: a run's crash leaves no core and reaches no helper (core limit 1 byte)",
		     pattern);
}

/* CAP_SYS_PTRACE and CAP_SYS_CHROOT: root starts each run's file actor in
 * the run's root (chroot, and /proc/PID/root of the run's init, which is
 * the run's uid by then).  The actor makes the run's writes and unix
 * connects; without it they fail closed, the proxy's included. */
static void check_ptrace(struct doctor *d)
{
	struct unit u;
	unit_load(&u);
	int have = doctor_can_connect();
	if (!have)
		fail(d, "CAP_SYS_PTRACE or CAP_SYS_CHROOT is not in this process's effective set: every connect, "
			"unix bind and write of a run (the proxy's too) would fail; run sharnessd as root with both");
	else if (u.found && u.caps_set && (!u.caps_ptrace || !u.caps_chroot))
		fail(d, "the unit %s leaves out CAP_SYS_PTRACE or CAP_SYS_CHROOT (CapabilityBoundingSet=): every "
			"connect and write of a run would fail; install the unit of this release or add both in a drop-in",
		     u.where);
	else if (doctor_ptrace_scope() > 1)
		fail(d, "kernel.yama.ptrace_scope is %d: a run's supervisor, which runs as the run's uid, could not "
			"read its run's calls; set it to 1 (sysctl kernel.yama.ptrace_scope=1; 3 needs a reboot)",
		     doctor_ptrace_scope());
	else
		pass(d, "CAP_SYS_PTRACE and CAP_SYS_CHROOT%s, Yama ptrace scope %d: a run's connects and writes can be "
		     "made", u.found ? ", in the unit too" : "", doctor_ptrace_scope());
}

/* The front's and the file actor's executables: where start-up will look,
 * and as trusted as we are. */
static void check_executables(struct doctor *d)
{
	static const struct {
		const char *name, *what, *why;
	} exes[] = {
	    {"sharnessd-front", "the front's", "root's own image maps no TLS, HTTP or filter library"},
	    {"sharness-actor", "the file actor's", "exec'd as a run at its first write"},
	};
	for (size_t i = 0; i < sizeof(exes) / sizeof(exes[0]); i++) {
		char path[4096], err[512];
		int fd = frontexec_open(exes[i].name, path, sizeof(path), err, sizeof(err));
		if (fd < 0) {
			fail(d, "%s", err);
			continue;
		}
		close(fd);
		pass(d, "%s executable %s (%s)", exes[i].what, path, exes[i].why);
	}
}

static void check_workspaces(struct doctor *d, const struct config *cfg, const struct profile_set *profiles)
{
	char writers[512] = "";
	for (size_t i = 0; i < profiles->n; i++)
		if (profiles->v[i].workspace_write)
			snprintf(writers + strlen(writers), sizeof(writers) - strlen(writers), "%s%s",
				 writers[0] ? ", " : "", profiles->v[i].name);
	struct unit u;
	unit_load(&u);
	for (size_t i = 0; i < cfg->n_workspaces; i++) {
		const char *ws = cfg->workspaces[i];
		struct stat st;
		if (stat(ws, &st) < 0) {
			fail(d, "workspace %s: %s: create it (mkdir -p %s) or remove it from \"workspaces\"",
			     ws, strerror(errno), ws);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			fail(d, "workspace %s is not a directory: name a directory in \"workspaces\"", ws);
			continue;
		}
		if (st.st_mode & S_IWOTH) {
			fail(d,
			     "workspace %s is world-writable (mode %04o): any local user could plant files "
			     "that runs "
			     "execute; chmod o-w %s",
			     ws, (unsigned)(st.st_mode & 07777), ws);
			continue;
		}
		struct passwd *pw = getpwuid(st.st_uid);
		char owner[160];
		snprintf(owner, sizeof(owner), "%s%s%u%s", pw ? pw->pw_name : "", pw ? " (uid " : "uid ",
			 (unsigned)st.st_uid, pw ? ")" : "");
		if (st.st_mode & S_IWGRP)
			pass(d,
			     "workspace %s: owner %s, mode %04o (note: group-writable; chmod g-w %s unless "
			     "that is meant)",
			     ws, owner, (unsigned)(st.st_mode & 07777), ws);
		else
			pass(d, "workspace %s: owner %s, mode %04o", ws, owner,
			     (unsigned)(st.st_mode & 07777));
		char err[PATH_MAX + 512];
		if (keepout_git_dir(cfg, profiles, i, err, sizeof(err)) < 0)
			fail(d, "%s", err);
		else if (cfg->git_dirs[i])
			pass(d,
			     "workspace %s is a linked worktree or a submodule: runs see its shared git "
			     "directory %s, read-only",
			     ws, cfg->git_dirs[i]);
		if (!u.found || !writers[0])
			continue;
		int home = u.protect_home && (path_under(ws, "/home") || path_under(ws, "/root") ||
					      path_under(ws, "/run/user"));
		int covered = 0;
		for (size_t j = 0; j < u.n_rw; j++)
			covered |= path_under(ws, u.rw[j]);
		if ((home || u.protect_strict) && !covered)
			fail(d,
			     "workspace %s is read-only under the unit (%s, %s) but profile(s) %s write to "
			     "it: run "
			     "'systemctl edit sharnessd', add\n    [Service]\n    ReadWritePaths=%s\n  then "
			     "'systemctl "
			     "restart sharnessd'",
			     ws, home ? "ProtectHome=read-only" : "ProtectSystem=strict", u.where, writers,
			     ws);
		else if (home || u.protect_strict)
			pass(d, "workspace %s is writable under the unit (ReadWritePaths=)", ws);
	}
}

/* ---- files the daemon writes -------------------------------------------- */

static void check_audit(struct doctor *d, const struct config *cfg)
{
	char dir[4096];
	struct stat st;
	if (strcmp(cfg->audit_log, "-") == 0) {
		pass(d, "audit log: standard error (\"audit_log\": \"-\")");
		return;
	}
	dir_of(cfg->audit_log, dir, sizeof(dir));
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fail(d, "audit log %s: its directory %s does not exist: mkdir -p -m 0700 %s", cfg->audit_log,
		     dir, dir);
		return;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		fail(d,
		     "audit log %s: its directory %s is not writable (%s): make it writable for root, or "
		     "point "
		     "\"audit_log\" at /var/log/sharness/audit.log",
		     cfg->audit_log, dir, strerror(errno));
		return;
	}
	if (lstat(cfg->audit_log, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			fail(d,
			     "audit log %s is a symlink, which the daemon refuses (O_NOFOLLOW): point "
			     "\"audit_log\" at "
			     "the real file",
			     cfg->audit_log);
			return;
		}
		if (!S_ISREG(st.st_mode) || access(cfg->audit_log, W_OK) < 0) {
			fail(d,
			     "audit log %s is not a writable regular file: remove it or point \"audit_log\" "
			     "elsewhere",
			     cfg->audit_log);
			return;
		}
	}
	pass(d, "audit log %s: directory %s writable", cfg->audit_log, dir);
}

static void check_state_dir(struct doctor *d, const struct config *cfg)
{
	struct stat st;
	char parent[4096];
	if (stat(cfg->state_dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			fail(d,
			     "state_dir %s is not a directory: point \"state_dir\" at a directory "
			     "(/var/lib/sharness)",
			     cfg->state_dir);
		else if (st.st_mode & (S_IWGRP | S_IWOTH))
			fail(d, "state_dir %s is writable by others (mode %04o): chmod 0700 %s",
			     cfg->state_dir, (unsigned)(st.st_mode & 07777), cfg->state_dir);
		else
			pass(d, "state_dir %s (mode %04o)", cfg->state_dir, (unsigned)(st.st_mode & 07777));
		return;
	}
	dir_of(cfg->state_dir, parent, sizeof(parent));
	if (access(parent, W_OK | X_OK) < 0)
		fail(d, "state_dir %s does not exist and %s is not writable: mkdir -p -m 0700 %s",
		     cfg->state_dir, parent, cfg->state_dir);
	else
		pass(d, "state_dir %s does not exist yet (the daemon creates it, mode 0700)", cfg->state_dir);
}

/* ---- one daemon per range and state_dir, and who listens ---------------- */

/* 1 when the claims are this configuration's own daemon (same range, same
 * state_dir): *pid is it. */
static int check_instance(struct doctor *d, const struct config *cfg, long *pid)
{
	char err[512];
	struct instance_holders h;
	*pid = 0;
	if (uidpool_check_range(cfg->uid_first, cfg->uid_count, err, sizeof(err)) < 0)
		fail(d, "uid_range: %s", err);
	else
		pass(d, "uid_range %u-%u is free of users, groups and subordinate ranges",
		     (unsigned)cfg->uid_first, (unsigned)(cfg->uid_first + cfg->uid_count - 1));
	if (instance_probe(cfg->state_dir, cfg->uid_first, cfg->uid_count, &h, err, sizeof(err)) < 0) {
		fail(d, "other daemons: %s: mount /proc", err);
		return 0;
	}
	if (h.lookalike_uid > 0)
		pass(d,
		     "a claim of uid_range %" PRIu64 "-%" PRIu64
		     " naming pid %ld was made by uid %ld, not root: no "
		     "sharnessd, and a start ignores it (`ss -axp | grep sharnessd:range` shows its process)",
		     h.lookalike_first, h.lookalike_first + h.lookalike_count - 1, h.lookalike_pid,
		     h.lookalike_uid);
	int same = h.range_pid && h.range_first == cfg->uid_first && h.range_count == cfg->uid_count &&
		   h.dir_locked && h.dir_pid == h.range_pid;
	if (same) {
		pass(d,
		     "uid_range and state_dir %s are held by this configuration's running sharnessd (pid "
		     "%ld); "
		     "another start refuses until it stops",
		     cfg->state_dir, h.range_pid);
		*pid = h.range_pid;
		return 1;
	}
	if (h.range_pid)
		fail(d,
		     "uid_range %u-%u: another sharnessd (pid %ld) uses uid_range %" PRIu64 "-%" PRIu64
		     ", which overlaps: give this daemon a uid_range of its own (uid_range.first, e.g. "
		     "%" PRIu64 ", if --doctor finds it free) or stop pid %ld",
		     (unsigned)cfg->uid_first, (unsigned)(cfg->uid_first + cfg->uid_count - 1), h.range_pid,
		     h.range_first, h.range_first + h.range_count - 1, h.range_first + h.range_count,
		     h.range_pid);
	else
		pass(d, "no other sharnessd uses an overlapping uid_range");
	if (h.dir_locked)
		fail(d,
		     "state_dir %s: another sharnessd (pid %ld) holds its lock: stop it first, or give this "
		     "daemon its "
		     "own state_dir and uid_range",
		     cfg->state_dir, h.dir_pid);
	else
		pass(d, "state_dir %s is not locked by another sharnessd", cfg->state_dir);
	return 0;
}

/* The socket inode listening on `port` (LISTEN is state 0A), 0 if none. */
static unsigned long listen_inode(unsigned port)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char line[512];
	for (size_t i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char local[128];
			unsigned st;
			unsigned long inode;
			if (sscanf(line, " %*d: %127s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) !=
				3 ||
			    st != 0x0A)
				continue;
			char *colon = strrchr(local, ':');
			if (colon && strtoul(colon + 1, NULL, 16) == port) {
				fclose(f);
				return inode;
			}
		}
		fclose(f);
	}
	return 0;
}

/* The pid holding socket `inode` open, 0 if none is found. */
static long inode_owner(unsigned long inode)
{
	char want[64], path[320], link[64];
	long found = 0;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	DIR *proc = opendir("/proc");
	if (!proc)
		return 0;
	struct dirent *p;
	while (!found && (p = readdir(proc))) {
		char *end;
		long pid = strtol(p->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		DIR *fds = opendir(path);
		if (!fds)
			continue;
		struct dirent *fd;
		while (!found && (fd = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%ld/fd/%.200s", pid, fd->d_name);
			ssize_t n = readlink(path, link, sizeof(link) - 1);
			if (n > 0) {
				link[n] = '\0';
				if (strcmp(link, want) == 0)
					found = pid;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

static void proc_comm(long pid, char *out, size_t n, long *ppid)
{
	char path[64], buf[512];
	*ppid = 0;
	snprintf(out, n, "?");
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l)
		return;
	snprintf(out, n, "%.*s", (int)(r - l - 1), l + 1);
	sscanf(r + 1, " %*c %ld", ppid);
}

/* TCP connect with a one-second limit: 0 connected, -1 with errno. */
static int tcp_connect(const char *host, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		sl = sizeof(*s6);
	} else {
		errno = EINVAL;
		return -1;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int rc = connect(fd, (struct sockaddr *)&ss, sl), e = errno;
	if (rc < 0 && e == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		socklen_t el = sizeof(e);
		if (poll(&p, 1, 1000) != 1)
			e = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		rc = e ? -1 : 0;
	}
	close(fd);
	errno = e;
	return rc;
}

static void check_listener(struct doctor *d, const struct config *cfg, long daemon_pid)
{
	const char *h = cfg->listen_host;
	unsigned port = cfg->listen_port;
	struct in6_addr a6;
	if (inet_pton(AF_INET, h, &a6) != 1 && inet_pton(AF_INET6, h, &a6) != 1) {
		fail(d,
		     "listen address '%s' is not a numeric IPv4 or IPv6 address: use \"listen\": "
		     "\"127.0.0.1:%u\"",
		     h, port);
		return;
	}
	if (!cfg->listen_any && !config_host_is_loopback(h)) {
		fail(d,
		     "listen address %s is not loopback: use 127.0.0.1, or set \"listen_non_loopback\": true",
		     h);
		return;
	}
	if (tcp_connect(h, port) < 0) {
		int e = errno;
		if (daemon_pid)
			fail(d,
			     "https://%s:%u: this configuration's sharnessd (pid %ld) runs but does not "
			     "accept (%s): see "
			     "its log (journalctl -u sharnessd)",
			     h, port, daemon_pid, strerror(e));
		else
			pass(d, "listen %s:%u is loopback and free (no daemon runs there now: %s)", h, port,
			     strerror(e));
		return;
	}
	unsigned long inode = listen_inode(port);
	long owner = inode ? inode_owner(inode) : 0, ppid = 0;
	char comm[64] = "?";
	if (owner)
		proc_comm(owner, comm, sizeof(comm), &ppid);
	if (daemon_pid && (owner == daemon_pid || ppid == daemon_pid || !owner))
		pass(d,
		     "sharnessd (pid %ld) listens on https://%s:%u: TCP connect OK (TLS is not tried here: "
		     "run "
		     "sharness-client doctor for a real mTLS request)",
		     daemon_pid, h, port);
	else if (owner && strcmp(comm, "systemd") == 0)
		pass(d, "https://%s:%u is held by systemd (sharnessd.socket: socket activation)", h, port);
	else if (owner)
		fail(d,
		     "listen %s:%u is taken by %s (pid %ld), not this configuration's sharnessd: stop it, or "
		     "choose "
		     "another port in \"listen\"",
		     h, port, comm, owner);
	else
		fail(d,
		     "listen %s:%u accepts connections, but no sharnessd of this configuration runs: stop "
		     "what "
		     "listens there (ss -ltnp 'sport = :%u'), or choose another port in \"listen\"",
		     h, port, port);
}

/* ---- the whole list ----------------------------------------------------- */

int doctor_main(const char *config_path)
{
	struct doctor d = {0};
	struct config cfg;
	struct profile_set profiles = {0};
	char err[512];
	int have_cfg = 0, have_profiles = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((config_path ? config_load(config_path, &cfg, err, sizeof(err))
			 : config_defaults(&cfg, err, sizeof(err))) < 0) {
		fail(&d, "configuration: %s: correct it (sharnessd --check-config%s%s tells the same)", err,
		     config_path ? " --config " : "", config_path ? config_path : "");
	} else {
		have_cfg = 1;
		gitdirs_find(&cfg);
		pass(&d, "configuration %s", cfg.source);
		if (profile_set_load(cfg.profiles_dir, &profiles, err, sizeof(err)) < 0) {
			fail(&d,
			     "profiles: %s: correct the profile (sharnessd --check-config names the same)",
			     err);
		} else {
			have_profiles = 1;
			pass(&d, "profiles: %zu loaded from %s", profiles.n, cfg.profiles_dir);
		}
	}
	if (geteuid() != 0)
		fail(&d,
		     "running as uid %u, not root: sharnessd must start as root; run sudo sharnessd "
		     "--doctor%s%s",
		     (unsigned)geteuid(), config_path ? " --config " : "", config_path ? config_path : "");
	else
		pass(&d, "running as root");

	check_kernel(&d, have_cfg ? cfg.landlock_min_abi : 1);
	check_cgroups(&d, have_cfg ? (unsigned)cfg.uid_first : 0);
	check_ptrace(&d);
	check_core_pattern(&d);
	check_executables(&d);
	if (have_cfg) {
		long pid = 0;
		check_instance(&d, &cfg, &pid);
		if (keepout_check(&cfg, err, sizeof(err)) < 0)
			fail(&d, "%s", err);
		else
			pass(&d, "the TLS key, the CA key, the secrets file, the audit log and the state dir lie "
				 "outside every workspace, and no workspace holds a home directory");
		if (have_profiles && keepout_profiles(&cfg, &profiles, err, sizeof(err)) < 0)
			fail(&d, "%s", err);
		else if (have_profiles)
			pass(&d, "no profile's read_paths, write_paths or exec_paths lies inside or above a workspace");
		check_state_dir(&d, &cfg);
		check_tls(&d, &cfg);
		size_t keys = 0;
		if (scrub_vault_check_files(cfg.secrets_file, cfg.tls_key, &keys, err, sizeof(err)) < 0)
			fail(&d,
			     "secret filter: %s: correct the file (one secret per line or name=value, 8 "
			     "characters or "
			     "more)",
			     err);
		else if (cfg.secrets_file)
			pass(&d, "secrets file %s loads (%zu vault keys with the TLS key)", cfg.secrets_file,
			     keys);
		else
			pass(&d, "no secrets file configured (the filter has its built-in detectors and the "
				 "TLS key)");
		if (have_profiles)
			check_workspaces(&d, &cfg, &profiles);
		check_audit(&d, &cfg);
		check_listener(&d, &cfg, pid);
	}
	if (have_profiles)
		profile_set_free(&profiles);
	if (have_cfg)
		config_free(&cfg);
	return d.failed;
}
