/*
 * job.c - the one job of a run: cwd, cmd and the environment, which is
 * built from nothing (SPEC §6): the base, then the profile's grants, the
 * proxy's variables for a proxy profile, then the request's (validated)
 * variables.  The sandbox's init reads it (asrun/sandbox_run.c).
 *
 * Trust: runs as the run's uid, on what root/check.c already checked.
 */
#include "job.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define PROXY_PORT_STR STR(PRIVSEP_PROXY_PORT)

char *job_build(const struct profile *p, const struct privsep_run *req, const char *cwd, const char *cmd,
                const char *env, size_t *len)
{
	static const char home[] = "HOME=" SANDBOX_HOME;
	static const char *const base[] = {
		"PATH=/usr/local/bin:/usr/bin:/bin", home, "LANG=C.UTF-8", "TZ=UTC",
		/* bash looks its user up in NSS (dlopen of nss_systemd, userdb
		 * probes) to set $SHELL when it is missing: a third of its
		 * start-up here. */
		"SHELL=/bin/bash"};
	static const char *const proxy[] = {
		"HTTP_PROXY=http://127.0.0.1:" PROXY_PORT_STR, "HTTPS_PROXY=http://127.0.0.1:" PROXY_PORT_STR,
		"http_proxy=http://127.0.0.1:" PROXY_PORT_STR, "https_proxy=http://127.0.0.1:" PROXY_PORT_STR,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1"};
	const size_t n_base = sizeof(base) / sizeof(base[0]), n_proxy = sizeof(proxy) / sizeof(proxy[0]);
	bool with_proxy = p->network == PROFILE_NETWORK_PROXY;

	/* Sizes first, then one buffer: the profile's grants are NAME=VALUE
	 * only here. */
	struct sandbox_job h = {.has_stdin = req->has_stdin, .cwd_len = (uint32_t)strlen(cwd), .cmd_len = req->cmd_len};
	size_t envlen = 0;
	for (size_t i = 0; i < n_base; i++)
		envlen += strlen(base[i]) + 1;
	for (size_t i = 0; i < p->n_env; i++)
		envlen += strlen(p->env[i].name) + strlen(p->env[i].value) + 2;
	for (size_t i = 0; with_proxy && i < n_proxy; i++)
		envlen += strlen(proxy[i]) + 1;
	envlen += req->env_len;
	h.env_len = (uint32_t)envlen;
	h.env_count = (uint32_t)(n_base + p->n_env + (with_proxy ? n_proxy : 0) + req->env_count);
	*len = sizeof(h) + h.cwd_len + h.cmd_len + envlen;
	char *buf = malloc(*len), *o = buf;
	if (!buf)
		return NULL;
	memcpy(o, &h, sizeof(h));
	o += sizeof(h);
	memcpy(o, cwd, h.cwd_len);
	o += h.cwd_len;
	memcpy(o, cmd, h.cmd_len);
	o += h.cmd_len;
	for (size_t i = 0; i < n_base; i++)
		o = stpcpy(o, base[i]) + 1;
	for (size_t i = 0; i < p->n_env; i++) {
		o = stpcpy(o, p->env[i].name);
		*o++ = '=';
		o = stpcpy(o, p->env[i].value) + 1;
	}
	for (size_t i = 0; with_proxy && i < n_proxy; i++)
		o = stpcpy(o, proxy[i]) + 1;
	memcpy(o, env, req->env_len);
	return buf;
}
