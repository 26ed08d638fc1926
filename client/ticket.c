/*
 * ticket.c - the TLS session ticket store (see ticket.h for the rules).
 *
 * Trust: the directory and the file are used only after fstat() of the
 * very descriptor shows they are ours and closed to everyone else; their
 * names come from our own environment.  That is not enough on its own: in
 * a workspace a sandboxed run writes through an idmapped mount, so a file
 * it makes there is ours on disk, mode 0600 (review s36), and the ticket
 * directory may lie in one ($HOME/.cache when a workspace holds $HOME).
 * So a ticket is sealed (AES-256-GCM) with a key derived from our private
 * key file's bytes, and its name is the additional data: whoever cannot
 * read the key can neither read a ticket (a bearer credential) nor plant
 * one (a session with a server of theirs, which resuming would trust), nor
 * move another identity's ticket here.  What opens is still parsed with a
 * size cap and checked for its protocol and its age.
 */
#include "ticket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/asn1.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/rand.h>

#include "tls.h"

/* Bumped when what a file holds or how it is named changes. */
#define TICKET_TAG "sharness-client ticket v2"
/* The sealing key: SHA-256 of this and the private key file's bytes. */
#define TICKET_KEY_TAG "sharness-client ticket key v2"
/* A sealed ticket: nonce, the session's DER encrypted, GCM tag. */
#define NONCE 12
#define GCM_TAG 16
#define SEALED(n) (NONCE + (n) + GCM_TAG)
/* The CA, certificate and key files are hashed in whole, up to this size:
 * a larger one means no ticket. */
#define TICKET_HASHED_FILE_MAX (1u << 20)

static bool closed_to_others(const struct stat *st)
{
	return st->st_uid == geteuid() && (st->st_mode & 077) == 0;
}

/* The directory as ticket.h says: $SHARNESS_TICKETS, else
 * $XDG_RUNTIME_DIR/sharness, else $HOME/.cache/sharness.  0, or -1 when
 * tickets are off or no place is known. */
static int dir_path(char *out, size_t n, char *parent, size_t pn)
{
	const char *env = getenv("SHARNESS_TICKETS");
	const char *rt = getenv("XDG_RUNTIME_DIR");
	const char *home = getenv("HOME");
	int w;
	parent[0] = '\0';
	if (env && *env) {
		if (strcmp(env, "off") == 0 || env[0] != '/')
			return -1;
		w = snprintf(out, n, "%s", env);
	} else if (rt && rt[0] == '/') {
		w = snprintf(out, n, "%s/sharness", rt);
	} else if (home && home[0] == '/') {
		/* ~/.cache may not exist yet: made 0700 as XDG says. */
		if (snprintf(parent, pn, "%s/.cache", home) >= (int)pn)
			return -1;
		w = snprintf(out, n, "%s/.cache/sharness", home);
	} else {
		return -1;
	}
	return w > 0 && (size_t)w < n ? 0 : -1;
}

int ticket_dir(bool create, char *path, size_t pathlen)
{
	char parent[4096];
	struct stat st;
	if (dir_path(path, pathlen, parent, sizeof parent) < 0) {
		errno = EPERM;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (parent[0])
			(void)mkdir(parent, 0700);
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -1;
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	/* Only the directory itself needs checking: a parent that others may
	 * write lets them swap it for a directory of theirs, which this check
	 * refuses, or a symlink, which O_NOFOLLOW does. */
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || !closed_to_others(&st)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* Feeds the file's bytes to md, and to also (when not NULL). */
static int hash_file(EVP_MD_CTX *md, EVP_MD_CTX *also, const char *path)
{
	char buf[8192];
	size_t total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = -1;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			rc = 0;
			break;
		}
		total += (size_t)r;
		if (total > TICKET_HASHED_FILE_MAX || EVP_DigestUpdate(md, buf, (size_t)r) != 1 ||
		    (also && EVP_DigestUpdate(also, buf, (size_t)r) != 1))
			break;
	}
	close(fd);
	explicit_bzero(buf, sizeof buf); /* the private key's bytes, once */
	return rc;
}

/* The file name: SHA-256 (hex) of the tag, the URL's parts and the bytes
 * of the CA, certificate and key files.  Another server, CA, certificate
 * or key is another file, so a ticket is only ever offered where it was
 * earned, and only while the files it was earned with are unchanged.  And
 * the sealing key (above), from the same read of the key file. */
static int ticket_name(const struct conf *c, char out[65], unsigned char key[32])
{
	unsigned char dig[EVP_MAX_MD_SIZE];
	unsigned dlen = 0, klen = 0;
	int rc = -1;
	EVP_MD_CTX *md = EVP_MD_CTX_new(), *kd = EVP_MD_CTX_new();
	if (!md || !kd)
		goto out;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1 || EVP_DigestInit_ex(kd, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(md, TICKET_TAG, sizeof TICKET_TAG) != 1 ||
	    EVP_DigestUpdate(kd, TICKET_KEY_TAG, sizeof TICKET_KEY_TAG) != 1 ||
	    EVP_DigestUpdate(md, c->host, strlen(c->host) + 1) != 1 ||
	    EVP_DigestUpdate(md, c->port, strlen(c->port) + 1) != 1 ||
	    EVP_DigestUpdate(md, c->base, strlen(c->base) + 1) != 1 || hash_file(md, NULL, c->ca) < 0 ||
	    EVP_DigestUpdate(md, "", 1) != 1 || hash_file(md, NULL, c->cert) < 0 ||
	    EVP_DigestUpdate(md, "", 1) != 1 || hash_file(md, kd, c->key) < 0 ||
	    EVP_DigestFinal_ex(md, dig, &dlen) != 1 || dlen != 32 || EVP_DigestFinal_ex(kd, key, &klen) != 1 ||
	    klen != 32)
		goto out;
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	EVP_MD_CTX_free(kd); /* clears its state */
	if (rc < 0)
		explicit_bzero(key, 32);
	return rc;
}

/* AES-256-GCM of in[0, n) under key, the file's name as additional data:
 * sealed into out (SEALED(n) bytes: nonce, ciphertext, tag), or opened
 * (in: SEALED(n) bytes; out: n).  Whether it worked; opening fails when
 * the tag does not hold. */
static bool gcm(bool seal, const unsigned char key[32], const char name[65], const unsigned char *in, int n,
                unsigned char *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	unsigned char tag[GCM_TAG];
	int got = 0, fin = 0;
	if (!seal)
		memcpy(tag, in + NONCE + n, GCM_TAG);
	bool ok = x && (!seal || RAND_bytes(out, NONCE) == 1) &&
	          EVP_CipherInit_ex(x, EVP_aes_256_gcm(), NULL, key, seal ? out : in, seal) == 1 &&
	          EVP_CipherUpdate(x, NULL, &got, (const unsigned char *)name, 64) == 1 &&
	          EVP_CipherUpdate(x, seal ? out + NONCE : out, &got, seal ? in : in + NONCE, n) == 1 &&
	          (seal || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, GCM_TAG, tag) == 1) &&
	          EVP_CipherFinal_ex(x, (seal ? out + NONCE : out) + got, &fin) == 1 && got + fin == n &&
	          (!seal || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, GCM_TAG, out + NONCE + n) == 1);
	EVP_CIPHER_CTX_free(x);
	return ok;
}

/* Only TLS 1.3 sessions are kept and used: their resumption still runs
 * an (EC)DHE exchange (forward secrecy, RFC 8446 §2.2), TLS 1.2's does not. */
static bool usable(const SSL_SESSION *s)
{
	/* OpenSSL 3.3 added the time_t getter and 3.4 deprecated the long one
	 * (Debian 13 has 3.5, 12 has 3.0). */
#if OPENSSL_VERSION_NUMBER >= 0x30300000L
	long born = (long)SSL_SESSION_get_time_ex(s);
#else
	long born = (long)SSL_SESSION_get_time(s);
#endif
	long life = (long)SSL_SESSION_get_timeout(s);
	return SSL_SESSION_get_protocol_version(s) == TLS1_3_VERSION && SSL_SESSION_is_resumable(s) &&
	       born > 0 && life > 0 && time(NULL) < born + life;
}

/* The session's DER without the daemon's certificate, the [3] EXPLICIT
 * element of OpenSSL's SSL_SESSION_ASN1 (ssl/ssl_asn1.c).  A resumed
 * handshake never looks at it (the daemon sends no certificate to verify),
 * but parsing it back costs an X509 decode, and in OpenSSL 3.0 every
 * SubjectPublicKeyInfo goes through a freshly built OSSL_DECODER chain:
 * 0.3-0.6 ms, as much as the rest of the ticket's use together.  `out` has
 * room for `len` bytes; returns the new length, or -1. */
static long without_peer(const unsigned char *der, long len, unsigned char *out)
{
	const unsigned char *p = der;
	long body, elen, kept = 0;
	int tag, xclass;
	unsigned char tmp[TICKET_MAX];
	if (len > TICKET_MAX)
		return -1;
	int r = ASN1_get_object(&p, &body, &tag, &xclass, len);
	/* Definite-length DER as i2d_SSL_SESSION wrote it, nothing after. */
	if (r != V_ASN1_CONSTRUCTED || tag != V_ASN1_SEQUENCE || xclass != V_ASN1_UNIVERSAL ||
	    p + body != der + len)
		return -1;
	const unsigned char *end = p + body;
	while (p < end) {
		const unsigned char *el = p;
		r = ASN1_get_object(&p, &elen, &tag, &xclass, end - p);
		if ((r & 0x80) || r == (V_ASN1_CONSTRUCTED | 1) || elen > end - p)
			return -1;
		p += elen;
		if (xclass == V_ASN1_CONTEXT_SPECIFIC && tag == 3)
			continue;
		memcpy(tmp + kept, el, (size_t)(p - el));
		kept += p - el;
	}
	if (ASN1_object_size(1, (int)kept, V_ASN1_SEQUENCE) > len)
		return -1;
	unsigned char *q = out;
	ASN1_put_object(&q, 1, (int)kept, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL);
	memcpy(q, tmp, (size_t)kept);
	long total = (long)(q - out) + kept;
	explicit_bzero(tmp, sizeof tmp);
	return total;
}

SSL_SESSION *ticket_load(const struct conf *c)
{
	char name[65];
	unsigned char key[32], buf[TICKET_MAX], der[TICKET_MAX];
	SSL_SESSION *s = NULL;
	struct stat st;
	ssize_t got = 0;
	tls_lib_init();
	/* The directory first: with tickets off (or no place for them) the
	 * files are not even hashed. */
	char dir[4096];
	int dfd = ticket_dir(false, dir, sizeof dir);
	if (dfd < 0)
		return NULL;
	int fd = ticket_name(c, name, key) < 0 ? -1
	                                       : openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	close(dfd);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && closed_to_others(&st) && st.st_size > SEALED(0) &&
	    st.st_size <= TICKET_MAX) {
		do
			got = read(fd, buf, (size_t)st.st_size);
		while (got < 0 && errno == EINTR);
	}
	close(fd);
	if (got > 0 && got == st.st_size && gcm(false, key, name, buf, (int)(got - SEALED(0)), der)) {
		const unsigned char *p = der;
		long n = (long)(got - SEALED(0));
		s = d2i_SSL_SESSION(NULL, &p, n);
		if (s && (p != der + n || !usable(s))) {
			SSL_SESSION_free(s);
			s = NULL;
		}
	}
	/* the resumption secret and its key */
	explicit_bzero(der, sizeof der);
	explicit_bzero(key, sizeof key);
	return s;
}

void ticket_save(const struct conf *c, SSL_SESSION *s)
{
	char name[65], tmp[96];
	unsigned char key[32], *der = NULL, lean[TICKET_MAX], sealed[TICKET_MAX];
	long len = -1;
	tls_lib_init();
	if (!s || !usable(s))
		return;
	char dir[4096];
	int dfd = ticket_dir(true, dir, sizeof dir);
	if (dfd < 0)
		return;
	if (ticket_name(c, name, key) < 0) {
		close(dfd);
		return;
	}
	int full = i2d_SSL_SESSION(s, &der);
	if (full > 0 && full <= TICKET_MAX)
		len = without_peer(der, full, lean);
	OPENSSL_clear_free(der, full > 0 ? (size_t)full : 0);
	/* What is stored must read back as a usable session. */
	const unsigned char *p = lean;
	SSL_SESSION *back = len > 0 ? d2i_SSL_SESSION(NULL, &p, len) : NULL;
	bool ok = back && p == lean + len && usable(back) && !SSL_SESSION_get0_peer(back) &&
	          SEALED(len) <= TICKET_MAX && gcm(true, key, name, lean, (int)len, sealed);
	SSL_SESSION_free(back);
	if (!ok)
		goto out;
	/* pid and thread: the run's approval watcher saves from a thread. */
	snprintf(tmp, sizeof tmp, "%s.%d.%d.tmp", name, (int)getpid(), (int)gettid());
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ssize_t w;
		do
			w = write(fd, sealed, (size_t)SEALED(len));
		while (w < 0 && errno == EINTR);
		/* The mode is 0600 whatever the umask; rename() replaces a file
		 * that was too open or not ours, in a directory that is ours. */
		ok = w == SEALED(len) && fchmod(fd, 0600) == 0;
		if (close(fd) < 0)
			ok = false;
		if (!ok || renameat(dfd, tmp, dfd, name) < 0)
			(void)unlinkat(dfd, tmp, 0);
	}
out:
	close(dfd);
	explicit_bzero(lean, sizeof lean);
	explicit_bzero(key, sizeof key);
}
