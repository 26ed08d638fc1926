/*
 * handover.c - see handover.h.  Only the configuration fields the front
 * reads travel; the rest stay root's.  Profiles travel in their canonical
 * form and are parsed again by the front with the same parser, so a
 * profile that did not survive the trip exactly is caught by its hash.
 */
#include "handover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "errmsg.h"
#include "fdio.h"
#include "jsonstrict.h"

#define HANDOVER_VERSION 1

int handover_memfd(const char *name, const char *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (fdio_write_all(fd, data, len) < 0) {
		close(fd);
		return -1;
	}
	/* Nobody may change it after this, not even through another fd. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static cJSON *settings(const struct config *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "listen_host", c->listen_host);
	cJSON_AddNumberToObject(o, "listen_port", c->listen_port);
	cJSON_AddNumberToObject(o, "max_runs", c->max_runs);
	cJSON_AddNumberToObject(o, "max_body", (double)c->max_body);
	cJSON_AddNumberToObject(o, "connection_limit", c->connection_limit);
	cJSON_AddNumberToObject(o, "connection_timeout_s", c->connection_timeout_s);
	cJSON_AddNumberToObject(o, "approval_timeout_s", c->approval_timeout_s);
	cJSON_AddNumberToObject(o, "queue_max", c->queue_max);
	cJSON_AddNumberToObject(o, "queue_timeout_s", c->queue_timeout_s);
	cJSON_AddNumberToObject(o, "max_jobs", c->max_jobs);
	cJSON_AddNumberToObject(o, "job_retain_s", c->job_retain_s);
	cJSON_AddNumberToObject(o, "uid_first", c->uid_first);
	cJSON_AddNumberToObject(o, "uid_count", c->uid_count);
	/* names only, for messages: the front gets the files as descriptors */
	cJSON_AddStringToObject(o, "tls_key", c->tls_key);
	if (c->secrets_file)
		cJSON_AddStringToObject(o, "secrets_file", c->secrets_file);
	cJSON_AddStringToObject(o, "source", c->source);
	cJSON *ws = cJSON_AddArrayToObject(o, "workspaces");
	for (size_t i = 0; i < c->n_workspaces; i++)
		cJSON_AddItemToArray(ws, cJSON_CreateString(c->workspaces[i]));
	return o;
}

int handover_write(const struct handover *h, const struct config *cfg, const struct profile_set *profiles)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "version", HANDOVER_VERSION);
	cJSON_AddNumberToObject(o, "uid", h->uid);
	cJSON_AddNumberToObject(o, "launcher_pid", h->launcher_pid);
	cJSON_AddBoolToObject(o, "verbose", h->verbose);
	cJSON_AddNumberToObject(o, "vault_keys", (double)h->vault_keys);
	cJSON_AddStringToObject(o, "policy_json", h->policy_json);
	cJSON_AddStringToObject(o, "profiles_json", h->profiles_json);
	cJSON_AddStringToObject(o, "policy_hash", h->policy_hash);
	cJSON_AddStringToObject(o, "tls_ca", h->tls_ca);
	cJSON_AddStringToObject(o, "tls_cert", h->tls_cert);
	cJSON_AddItemToObject(o, "config", settings(cfg));
	cJSON *ps = cJSON_AddArrayToObject(o, "profiles");
	for (size_t i = 0; i < profiles->n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", profiles->v[i].name);
		cJSON_AddStringToObject(e, "canonical", profiles->v[i].canonical_json);
		cJSON_AddStringToObject(e, "policy_hash", profiles->v[i].policy_hash);
		cJSON_AddItemToArray(ps, e);
	}
	char *doc = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!doc)
		return -1;
	size_t len = strlen(doc);
	int fd = len <= HANDOVER_MAX ? handover_memfd("sharness-handover", doc, len) : (errno = E2BIG, -1);
	free(doc);
	return fd;
}

char *handover_slurp(int fd, size_t max, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		return errno = EFBIG, NULL;
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* It may hold a secret (the TLS key, the secrets file). */
			explicit_bzero(buf, got);
			free(buf);
			return errno = n < 0 ? errno : EIO, NULL;
		}
		got += (size_t)n;
	}
	if (buf) {
		buf[got] = '\0';
		*len = got;
	}
	return buf;
}

/* A string member, copied; NULL when absent or not a string. */
static char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

/* A whole number member in [0, max] (jsonstrict's check). */
static bool num(const cJSON *o, const char *key, uint64_t max, uint64_t *out)
{
	return jsonstrict_get_uint("handover", key, cJSON_GetObjectItemCaseSensitive(o, key), 0, max, out, NULL, 0) == 0;
}

static int read_settings(const cJSON *o, struct config *c)
{
	uint64_t x[13];
	static const char *const keys[] = {"listen_port", "max_runs", "max_body", "connection_limit",
	                                   "connection_timeout_s", "approval_timeout_s", "queue_max",
	                                   "queue_timeout_s", "max_jobs", "job_retain_s", "uid_first",
	                                   "uid_count", NULL};
	for (size_t i = 0; keys[i]; i++)
		if (!num(o, keys[i], UINT32_MAX, &x[i]))
			return -1;
	c->listen_port = (unsigned)x[0];
	c->max_runs = (unsigned)x[1];
	c->max_body = (size_t)x[2];
	c->connection_limit = (unsigned)x[3];
	c->connection_timeout_s = (unsigned)x[4];
	c->approval_timeout_s = (unsigned)x[5];
	c->queue_max = (unsigned)x[6];
	c->queue_timeout_s = (unsigned)x[7];
	c->max_jobs = (unsigned)x[8];
	c->job_retain_s = (unsigned)x[9];
	c->uid_first = (uid_t)x[10];
	c->uid_count = (unsigned)x[11];
	c->listen_host = str(o, "listen_host");
	c->tls_key = str(o, "tls_key");
	c->secrets_file = str(o, "secrets_file");
	c->source = str(o, "source");
	const cJSON *ws = cJSON_GetObjectItemCaseSensitive(o, "workspaces"), *e;
	if (!c->listen_host || !c->tls_key || !c->source || !cJSON_IsArray(ws) || cJSON_GetArraySize(ws) < 1 ||
	    cJSON_GetArraySize(ws) > CONFIG_WORKSPACES_MAX)
		return -1;
	cJSON_ArrayForEach(e, ws) {
		if (!cJSON_IsString(e) || e->valuestring[0] != '/')
			return -1;
		if (!(c->workspaces[c->n_workspaces++] = strdup(e->valuestring)))
			return -1;
	}
	return 0;
}

static int read_profiles(const cJSON *ps, struct profile_set *out, char *err, size_t errlen)
{
	const cJSON *e;
	int n = cJSON_GetArraySize(ps);
	if (!cJSON_IsArray(ps) || n < 1 || n > PROFILE_SET_MAX || !(out->v = calloc((size_t)n, sizeof(out->v[0]))))
		return errmsg_set(err, errlen, "the handover holds no profiles"), -1;
	cJSON_ArrayForEach(e, ps) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *canon = cJSON_GetObjectItemCaseSensitive(e, "canonical");
		const cJSON *hash = cJSON_GetObjectItemCaseSensitive(e, "policy_hash");
		if (!cJSON_IsString(name) || !cJSON_IsString(canon) || !cJSON_IsString(hash))
			return errmsg_set(err, errlen, "the handover holds a malformed profile"), -1;
		if (profile_parse("handover", name->valuestring, canon->valuestring, strlen(canon->valuestring),
		                  &out->v[out->n], err, errlen) < 0)
			return -1;
		out->n++;
		if (strcmp(out->v[out->n - 1].policy_hash, hash->valuestring) != 0)
			return errmsg_set(err, errlen, "profile '%s' changed on its way to the front (policy hash)",
			                  name->valuestring),
			       -1;
	}
	return 0;
}

int handover_read(int fd, struct handover *h, struct config *cfg, struct profile_set *profiles, char *err,
                  size_t errlen)
{
	size_t len = 0;
	int rc = -1;
	uint64_t x;
	memset(h, 0, sizeof(*h));
	memset(cfg, 0, sizeof(*cfg));
	memset(profiles, 0, sizeof(*profiles));
	char *doc = handover_slurp(fd, HANDOVER_MAX, &len);
	if (!doc)
		return errmsg_set(err, errlen, "cannot read the handover from root: %s", strerror(errno ? errno : EINVAL)),
		       -1;
	cJSON *o = jsonstrict_parse("handover", doc, len, err, errlen);
	free(doc);
	if (!o)
		return -1;
	if (!num(o, "version", 1000, &x) || (int)x != HANDOVER_VERSION) {
		errmsg_set(err, errlen, "the handover is of another version: start sharnessd and sharnessd-front "
		                        "of the same build");
		goto out;
	}
	if (!num(o, "uid", UINT32_MAX, &x))
		goto bad;
	h->uid = (uid_t)x;
	if (!num(o, "launcher_pid", 4194304, &x))
		goto bad;
	h->launcher_pid = (pid_t)x;
	if (!num(o, "vault_keys", 1000000000, &x))
		goto bad;
	h->vault_keys = (size_t)x;
	h->verbose = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "verbose"));
	h->policy_json = str(o, "policy_json");
	h->profiles_json = str(o, "profiles_json");
	h->policy_hash = str(o, "policy_hash");
	h->tls_ca = str(o, "tls_ca");
	h->tls_cert = str(o, "tls_cert");
	if (!h->policy_json || !h->profiles_json || !h->policy_hash || !h->tls_ca || !h->tls_cert ||
	    read_settings(cJSON_GetObjectItemCaseSensitive(o, "config"), cfg) < 0)
		goto bad;
	rc = read_profiles(cJSON_GetObjectItemCaseSensitive(o, "profiles"), profiles, err, errlen);
	goto out;
bad:
	errmsg_set(err, errlen, "the handover from root is malformed");
out:
	cJSON_Delete(o);
	return rc;
}
