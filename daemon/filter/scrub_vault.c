/*
 * scrub_vault.c - vault keys and their encodings  (SPEC §7, research E.2).
 *
 * Every secret becomes up to 9 literal needles: raw, hex (both cases), base64
 * and base64url at the three byte alignments a secret can have inside a
 * longer encoded text.  The fingerprint index (scrub_fp.c) finds those of 23
 * bytes and more in one pass whatever their number; the few shorter ones go
 * to the Vectorscan literal database (scrub_rules.c).  Encoded needles a
 * tool wrapped into lines: scrub_wrap.c.
 *
 * Trust: operator files, read once at start.  A value under 8 characters is
 * refused, not applied: masking "test" or "docker" everywhere would wreck
 * every log (actions/runner #326).
 */
#include "scrub_vault.h"

#include "handover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct needle {
	unsigned char *p;
	size_t len;
	int encoded; /* hex or base64: a tool may wrap it into lines (scrub_wrap.c) */
};

struct scrub_vault {
	struct needle *nd;
	size_t n, cap;
	size_t keys;
};

struct scrub_vault *scrub_vault_new(void)
{
	return calloc(1, sizeof(struct scrub_vault));
}

void scrub_vault_free(struct scrub_vault *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		explicit_bzero(v->nd[i].p, v->nd[i].len);
		free(v->nd[i].p);
	}
	free(v->nd);
	free(v);
}

size_t scrub_vault_keys(const struct scrub_vault *v) { return v ? v->keys : 0; }
size_t scrub_vault_needles(const struct scrub_vault *v) { return v ? v->n : 0; }

const unsigned char *scrub_vault_needle(const struct scrub_vault *v, size_t i, size_t *len)
{
	*len = v->nd[i].len;
	return v->nd[i].p;
}

int scrub_vault_needle_encoded(const struct scrub_vault *v, size_t i)
{
	return v->nd[i].encoded;
}

/* Append a copy unless it is too short to be specific or equals the
 * previous needle (hex of a digit-only value is the same in both cases). */
static int push(struct scrub_vault *v, const unsigned char *p, size_t n, size_t min, int encoded)
{
	struct needle *nd;
	/* Vectorscan's literal API refuses a literal that starts with a NUL
	 * byte (it takes it for an empty string), and a DER line of a key
	 * starts with one about once in 256 lines: the zeros carry no secret,
	 * the rest of the needle still finds it. */
	while (n > 0 && *p == '\0') {
		p++;
		n--;
	}
	if (n < min)
		return 0;
	if (v->n && v->nd[v->n - 1].len == n && memcmp(v->nd[v->n - 1].p, p, n) == 0)
		return 0;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		nd = realloc(v->nd, cap * sizeof *nd);
		if (!nd)
			return -1;
		v->nd = nd;
		v->cap = cap;
	}
	v->nd[v->n].p = malloc(n);
	if (!v->nd[v->n].p)
		return -1;
	memcpy(v->nd[v->n].p, p, n);
	v->nd[v->n].len = n;
	v->nd[v->n].encoded = encoded;
	v->n++;
	return 0;
}

static size_t enc_hex(const unsigned char *in, size_t n, unsigned char *out, const char *digits)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = (unsigned char)digits[in[i] >> 4];
		out[2 * i + 1] = (unsigned char)digits[in[i] & 15];
	}
	return 2 * n;
}

/* base64 of (k zero bytes + in), without padding, with the characters that
 * depend on the unknown neighbouring bytes cut off both ends: at alignment 1
 * the first 2 characters mix in the previous byte, at alignment 2 the first
 * 3; the last character is partial unless the bytes end on a 3-byte group
 * (actions/runner #291 recipe). */
static size_t enc_b64(const unsigned char *in, size_t n, int k, int url, unsigned char *out)
{
	const char *al = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	                     : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t total = n + (size_t)k, o = 0, chars, skip = k == 0 ? 0 : k == 1 ? 2 : 3;
	unsigned long acc = 0;
	int bits = 0;
	for (size_t i = 0; i < total; i++) {
		acc = (acc << 8) | (i < (size_t)k ? 0 : in[i - (size_t)k]);
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = (unsigned char)al[(acc >> bits) & 63];
		}
	}
	chars = o;
	if (chars <= skip)
		return 0;
	memmove(out, out + skip, chars - skip);
	return chars - skip;
}

int scrub_vault_add(struct scrub_vault *v, const unsigned char *val, size_t n)
{
	unsigned char *tmp;
	int rc = -1;
	if (n < SCRUB_VAULT_MIN_LEN || n > SCRUB_VAULT_MAX_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (v->keys >= SCRUB_VAULT_MAX_KEYS) {
		errno = E2BIG;
		return -1;
	}
	tmp = malloc(6 * n + 8);
	if (!tmp)
		return -1;
	if (push(v, val, n, 1, 0) < 0)
		goto out;
	/* JSON- and percent-escaped forms are matched by the raw needle in the
	 * decoded view (scrub_view.c), whichever characters the encoder chose
	 * to escape; needles for them would only slow the prefilter. */
	if (push(v, tmp, enc_hex(val, n, tmp, "0123456789abcdef"), 16, 1) < 0 ||
	    push(v, tmp, enc_hex(val, n, tmp, "0123456789ABCDEF"), 16, 1) < 0)
		goto out;
	for (int k = 0; k < 3; k++)
		for (int url = 0; url < 2; url++)
			/* 10 characters = 60 bits: no accidental hit in a 100 MB base64 dump. */
			if (push(v, tmp, enc_b64(val, n, k, url, tmp), 10, 1) < 0)
				goto out;
	v->keys++;
	rc = 0;
out:
	explicit_bzero(tmp, 6 * n + 8);
	free(tmp);
	return rc;
}

/* Whole file into memory (bounded), NUL-terminated, from an open
 * descriptor (the front gets root's descriptor and cannot open the file
 * itself).  `name` names it in errors. */
static char *slurp_fd(int fd, const char *name, size_t *len, char *err, size_t errlen)
{
	char *buf = handover_slurp(fd, SCRUB_VAULT_FILE_MAX, len);
	if (!buf && errno == EFBIG)
		snprintf(err, errlen, "%s: not a regular file of at most %u bytes", name, SCRUB_VAULT_FILE_MAX);
	else if (!buf)
		snprintf(err, errlen, "%s: read failed: %s", name, strerror(errno));
	return buf;
}

int scrub_vault_open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return fd;
}

static int is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }

int scrub_vault_load_file(struct scrub_vault *v, int fd, const char *path, char *err, size_t errlen)
{
	size_t len, lineno = 0;
	char *buf = slurp_fd(fd, path, &len, err, errlen), *p, *end;
	int rc = -1;
	if (!buf)
		return -1;
	for (p = buf; p < buf + len; p = end + 1) {
		char *s, *e, *eq;
		end = memchr(p, '\n', (size_t)(buf + len - p));
		if (!end)
			end = buf + len;
		lineno++;
		s = p;
		e = end;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (s == e || *s == '#')
			continue;
		/* name=value when the part before '=' is a name and something other
		 * than padding follows; a base64 value such as "c2VjcmV0cw==" stays whole. */
		eq = memchr(s, '=', (size_t)(e - s));
		if (eq && eq > s && is_name_start(*s) && strspn(eq, "=") < (size_t)(e - eq)) {
			char *q = s;
			while (q < eq && is_name_char(*q))
				q++;
			if (q == eq)
				s = eq + 1;
		}
		/* Text only: a NUL would be cut from a needle's start (push), and
		 * what is left of such a line may be too short to be a secret. */
		if (memchr(s, '\0', (size_t)(e - s))) {
			snprintf(err, errlen, "%s:%zu: the line holds a NUL byte; the secrets file is text, one secret a line",
			         path, lineno);
			goto out;
		}
		if ((size_t)(e - s) < SCRUB_VAULT_MIN_LEN) {
			snprintf(err, errlen, "%s:%zu: the secret is %zu characters long; at least %d are required",
			         path, lineno, (size_t)(e - s), SCRUB_VAULT_MIN_LEN);
			goto out;
		}
		if (scrub_vault_add(v, (const unsigned char *)s, (size_t)(e - s)) < 0) {
			snprintf(err, errlen, "%s:%zu: %s", path, lineno,
			         errno == EINVAL ? "the secret is longer than 1024 characters"
			         : errno == E2BIG ? "more than 100000 secrets" : "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	explicit_bzero(buf, len);
	free(buf);
	return rc;
}

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

int scrub_vault_load_pem(struct scrub_vault *v, int fd, const char *path, char *err, size_t errlen)
{
	size_t len, lines = 0;
	char *buf = slurp_fd(fd, path, &len, err, errlen), *p, *end;
	int in = 0, rc = -1;
	if (!buf)
		return -1;
	for (p = buf; p < buf + len; p = end + 1) {
		char *e;
		unsigned char der[96];
		size_t dn = 0, n;
		unsigned long acc = 0;
		int bits = 0, ok = 1;
		end = memchr(p, '\n', (size_t)(buf + len - p));
		if (!end)
			end = buf + len;
		e = end;
		while (e > p && (e[-1] == '\r' || e[-1] == ' '))
			e--;
		n = (size_t)(e - p);
		if (n >= 11 && memcmp(p, "-----BEGIN ", 11) == 0) {
			in = 1;
			continue;
		}
		if (n >= 9 && memcmp(p, "-----END ", 9) == 0) {
			in = 0;
			continue;
		}
		if (!in || n < 16 || n > 128 || memchr(p, ':', n))
			continue;
		/* The base64 line as printed, and the DER bytes it encodes
		 * (`openssl rsa -outform der | cat` prints those). */
		if (push(v, (unsigned char *)p, n, 16, 1) < 0)
			goto nomem;
		for (size_t i = 0; i < n && p[i] != '='; i++) {
			int x = b64val((unsigned char)p[i]);
			if (x < 0) {
				ok = 0;
				break;
			}
			acc = (acc << 6) | (unsigned)x;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				der[dn++] = (unsigned char)(acc >> bits);
			}
		}
		if (ok && push(v, der, dn, 12, 0) < 0)
			goto nomem;
		explicit_bzero(der, sizeof der);
		lines++;
	}
	if (lines == 0) {
		snprintf(err, errlen, "%s: no PEM body found", path);
		goto out;
	}
	v->keys++;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "%s: out of memory", path);
out:
	explicit_bzero(buf, len);
	free(buf);
	return rc;
}

int scrub_vault_load(struct scrub_vault *v, const struct scrub_sources *src, char *err, size_t errlen)
{
	if (src->secrets_fd >= 0 && scrub_vault_load_file(v, src->secrets_fd, src->secrets_name, err, errlen) < 0)
		return -1;
	return src->key_fd >= 0 ? scrub_vault_load_pem(v, src->key_fd, src->key_name, err, errlen) : 0;
}

int scrub_vault_check(const struct scrub_sources *src, size_t *keys, char *err, size_t errlen)
{
	struct scrub_vault *v = scrub_vault_new();
	int rc = -1;
	if (!v) {
		snprintf(err, errlen, "secret filter: out of memory");
		return -1;
	}
	if (scrub_vault_load(v, src, err, errlen) == 0) {
		*keys = scrub_vault_keys(v);
		rc = 0;
	}
	scrub_vault_free(v); /* zeroes every needle */
	return rc;
}

int scrub_sources_open(struct scrub_sources *src, const char *secrets_file, const char *tls_key_file, char *err,
                       size_t errlen)
{
	*src = (struct scrub_sources){.secrets_fd = -1, .key_fd = -1, .secrets_name = secrets_file,
	                              .key_name = tls_key_file};
	if (secrets_file && (src->secrets_fd = scrub_vault_open(secrets_file, err, errlen)) < 0)
		return -1;
	if (tls_key_file && (src->key_fd = scrub_vault_open(tls_key_file, err, errlen)) < 0) {
		scrub_sources_close(src);
		return -1;
	}
	return 0;
}

void scrub_sources_close(struct scrub_sources *src)
{
	if (src->secrets_fd >= 0)
		close(src->secrets_fd);
	if (src->key_fd >= 0)
		close(src->key_fd);
	src->secrets_fd = src->key_fd = -1;
}

int scrub_vault_check_files(const char *secrets_file, const char *tls_key_file, size_t *keys, char *err,
                            size_t errlen)
{
	struct scrub_sources src;
	if (scrub_sources_open(&src, secrets_file, tls_key_file, err, errlen) < 0)
		return -1;
	int rc = scrub_vault_check(&src, keys, err, errlen);
	scrub_sources_close(&src);
	return rc;
}
