/*
 * test_scrub.c - the secret filter (SPEC §7): every detector with a fake
 * token generated here (never a literal token in the source), split at every
 * byte offset across two feeds and across the stream's window boundary, in
 * colour, JSON-escaped; vault keys in every encoding; a benign corpus
 * (generated + real headers from /usr/include) that must pass unchanged;
 * idempotence.
 */
#include "harness.h"
#include "scrub.h"
#include "scrub_detect.h"
#include "scrub_fp.h"
#include "scrub_view.h"
#include "scrub_rules.h"
#include "scrub_tri.h"
#include "scrub_wrap.h"

#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define B62 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#define B64U B62 "_-"
#define B64 B62 "+/"
#define HEXL "0123456789abcdef"
#define HEXU "0123456789ABCDEF"
#define B32 "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
#define LOWNUM "abcdefghijklmnopqrstuvwxyz0123456789"
#define UPNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#define BECH "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 32);
}

/* Append n random characters of alphabet a to s. */
static char *ap(char *s, const char *a, int n)
{
	size_t l = strlen(s), al = strlen(a);
	for (int i = 0; i < n; i++)
		s[l + (size_t)i] = a[rnd() % al];
	s[l + (size_t)n] = 0;
	return s;
}
static char *cat(char *s, const char *t) { return strcat(s, t); }

struct sample {
	char pre[160], sec[4096], post[64];
	const char *name;
};
static struct sample S[160];
static int NS;
static struct scrub_rules *R;

static struct sample *add(const char *name, const char *pre, const char *post)
{
	struct sample *x = &S[NS++];
	snprintf(x->pre, sizeof x->pre, "%s", pre);
	snprintf(x->post, sizeof x->post, "%s", post);
	x->sec[0] = 0;
	x->name = name;
	return x;
}
static void tok(const char *name, const char *prefix, const char *alpha, int n)
{
	ap(cat(add(name, "log: ", " done\n")->sec, prefix), alpha, n);
}
static void ghtok(const char *name, const char *prefix)
{
	char *s = cat(add(name, "token ", "\n")->sec, prefix);
	char sum[7];
	ap(s, B62, 30);
	scrub_detect_base62_crc((unsigned char *)s + strlen(prefix), 30, sum);
	cat(s, sum);
}

static void make_samples(void)
{
	char *s;
	ghtok("github-pat", "ghp_");
	ghtok("github-oauth-token", "gho_");
	ghtok("github-user-token", "ghu_");
	ghtok("github-app-token", "ghs_");
	ghtok("github-refresh-token", "ghr_");
	ghtok("npm-token", "npm_");
	s = cat(add("github-fine-grained-pat", "x=", ";\n")->sec, "github_pat_");
	ap(cat(ap(s, B62, 22), "_"), B62, 59);
	tok("gitlab-pat", "glpat-", B64U, 20);
	tok("gitlab-runner-token", "glrt-", B64U, 20);
	tok("gitlab-deploy-token", "gldt-", B64U, 20);
	tok("gitlab-trigger-token", "glptt-", HEXL, 40);
	tok("gitlab-token", "glft-", B64U, 20);
	tok("pypi-token", "pypi-AgEIcHlwaS5vcmc", B64U, 150);
	tok("rubygems-api-key", "rubygems_", HEXL, 48);
	tok("dockerhub-token", "dckr_pat_", B64U, 27);
	tok("artifactory-api-key", "AKCp", B62, 69);
	tok("artifactory-reference-token", "cmVmdGtu", B62, 57);
	tok("bitbucket-app-password", "ATBB", B62, 32);
	tok("atlassian-api-token", "ATATT3", B64U, 186);
	tok("aws-access-key-id", "AKIA", B32, 16);
	tok("aws-access-key-id", "ASIA", B32, 16);
	tok("aws-bedrock-api-key", "ABSKQmVkcm9jaw", B64, 120);
	tok("google-api-key", "AIza", B64U, 35);
	tok("google-oauth-token", "ya29.", B64U, 120);
	s = ap(ap(add("azure-ad-client-secret", "secret ", "\n")->sec, B62, 3), "0123456789", 1);
	ap(cat(s, "Q~"), B64U, 34);
	s = cat(add("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=x;", ";EndpointSuffix=core\n")->sec,
	        "AccountKey=");
	cat(ap(s, B64, 86), "==");
	tok("digitalocean-pat", "dop_v1_", HEXL, 64);
	tok("digitalocean-oauth-token", "doo_v1_", HEXL, 64);
	tok("digitalocean-refresh-token", "dor_v1_", HEXL, 64);
	tok("alibaba-access-key-id", "LTAI", B62, 20);
	s = ap(add("terraform-cloud-token", "token = \"", "\"\n")->sec, B62, 14);
	ap(cat(s, ".atlasv1."), B64U, 67);
	tok("vault-service-token", "hvs.", B64U, 95);
	tok("vault-batch-token", "hvb.", B64U, 150);
	tok("vault-recovery-token", "hvr.", B64U, 95);
	tok("flyio-token", "fm2_", B64, 300);
	tok("cloudflare-api-token", "cfut_", B62, 48);
	tok("heroku-api-key", "HRKU-AA", B64U, 58);
	tok("databricks-token", "dapi", HEXL, 32);
	tok("doppler-token", "dp.st.", B62, 43);
	tok("pulumi-token", "pul-", HEXL, 40);
	tok("planetscale-token", "pscale_tkn_", B64U, 43);
	tok("supabase-token", "sbp_", LOWNUM, 40);
	s = cat(add("tailscale-key", "key: ", "\n")->sec, "tskey-auth-");
	ap(cat(ap(s, B62, 12), "-"), B62, 30);
	s = cat(add("dynatrace-token", "t=", "\n")->sec, "dt0c01.");
	ap(cat(ap(s, UPNUM, 24), "."), UPNUM, 64);
	s = cat(add("grafana-service-account-token", "g ", "\n")->sec, "glsa_");
	ap(cat(ap(s, B62, 32), "_"), HEXL, 8);
	tok("grafana-cloud-token", "glc_eyJ", B64, 100);
	tok("grafana-api-key", "eyJrIjoi", B64, 90);
	tok("sentry-user-token", "sntryu_", HEXL, 64);
	tok("sentry-org-token", "sntrys_eyJpYXQiO", B64, 120);
	tok("newrelic-api-key", "NRAK-", UPNUM, 27);
	tok("onepassword-service-token", "ops_eyJ", B64, 300);
	tok("scalingo-token", "tk-us-", B64U, 48);
	s = cat(add("slack-bot-token", "SLACK ", "\n")->sec, "xoxb-");
	ap(cat(ap(cat(ap(s, "0123456789", 12), "-"), "0123456789", 13), "-"), B62, 24);
	s = cat(add("slack-user-token", "SLACK ", "\n")->sec, "xoxp-");
	ap(cat(ap(cat(ap(cat(ap(s, "0123456789", 12), "-"), "0123456789", 12), "-"), "0123456789", 12), "-"), HEXL, 32);
	s = cat(add("slack-app-token", "SLACK ", "\n")->sec, "xapp-1-");
	ap(cat(ap(cat(ap(s, UPNUM, 11), "-"), "0123456789", 13), "-"), HEXL, 64);
	tok("slack-config-token", "xoxe.xoxp-1-", B62, 150);
	tok("slack-legacy-token", "xoxs-", HEXL, 40);
	s = ap(add("slack-webhook", "url=https://hooks.slack.com/services/", "\n")->sec, "T", 1);
	ap(cat(ap(cat(ap(s, UPNUM, 10), "/B"), UPNUM, 10), "/"), B62, 24);
	s = ap(add("discord-webhook", "https://discord.com/api/webhooks/", " ok\n")->sec, "0123456789", 18);
	ap(cat(s, "/"), B64U, 68);
	s = cat(add("teams-webhook", "https://acme.webhook.office.com/webhookb2/", "\n")->sec, "");
	ap(cat(ap(s, HEXL, 36), "@"), HEXL, 36);
	ap(cat(ap(cat(s, "/IncomingWebhook/"), HEXL, 32), "/"), HEXL, 36);
	s = ap(add("telegram-bot-token", "bot", "\n")->pre, "0123456789", 9);
	cat(s, ":");
	ap(cat(S[NS - 1].sec, "AA"), B64U, 33);
	tok("sendinblue-api-key", "xkeysib-", HEXL, 64);
	cat(ap(S[NS - 1].sec, "", 0), "-");
	ap(S[NS - 1].sec, B62, 16);
	s = cat(add("sendgrid-api-key", "SENDGRID ", "\n")->sec, "SG.");
	ap(cat(ap(s, B64U, 22), "."), B64U, 43);
	tok("twilio-api-key", "SK", HEXL, 32);
	tok("stripe-secret-key", "sk_live_", B62, 99);
	tok("stripe-restricted-key", "rk_test_", B62, 40);
	tok("square-token", "sq0csp-", B64U, 43);
	tok("square-access-token", "EAAA", B64U, 60);
	tok("shopify-token", "shpat_", HEXL, 32);
	tok("easypost-api-key", "EZAK", B62, 54);
	tok("shippo-api-token", "shippo_live_", HEXL, 40);
	s = cat(add("openai-api-key", "OPENAI ", "\n")->sec, "sk-proj-");
	ap(cat(ap(s, B64U, 74), "T3BlbkFJ"), B64U, 74);
	s = cat(add("anthropic-api-key", "A ", "\n")->sec, "sk-ant-api03-");
	cat(ap(s, B64U, 93), "AA");
	s = cat(add("anthropic-admin-key", "A ", "\n")->sec, "sk-ant-admin01-");
	cat(ap(s, B64U, 93), "AA");
	tok("huggingface-token", "hf_", B62, 34);
	tok("huggingface-org-token", "api_org_", B62, 34);
	tok("groq-api-key", "gsk_", B62, 52);
	tok("perplexity-api-key", "pplx-", B62, 48);
	tok("replicate-api-token", "r8_", B62, 37);
	tok("linear-api-key", "lin_api_", B62, 40);
	tok("notion-token", "ntn_", B62, 46);
	s = cat(add("postman-api-key", "p ", "\n")->sec, "PMAK-");
	ap(cat(ap(s, HEXL, 24), "-"), HEXL, 34);
	tok("contentful-token", "CFPAT-", B64U, 43);
	tok("adobe-client-secret", "p8e-", LOWNUM, 32);
	tok("prefect-api-key", "pnu_", B62, 36);
	tok("readme-api-key", "rdme_", LOWNUM, 70);
	s = cat(add("mapbox-secret-token", "m ", "\n")->sec, "sk.eyJ");
	ap(cat(ap(s, B64U, 60), "."), B64U, 22);
	tok("age-secret-key", "AGE-SECRET-KEY-1", BECH, 58);
	s = cat(add("jwt", "Bearer-less: ", "\n")->sec, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ");
	ap(cat(ap(s, B64U, 60), "."), B64U, 43);
	/* context rules */
	ap(cat(add("secret-assignment", "export DB_PASSWORD=", "\n")->sec, "Pw-"), B62, 14);
	ap(cat(add("secret-assignment", "{\"client_secret\": \"", "\"}\n")->sec, "s3"), B62, 20);
	ap(cat(add("secret-assignment", "api_key: ", "\r\n")->sec, "k9"), B62, 20);
	ap(cat(add("npmrc-auth-token", "//registry.example.org/:_authToken=", "\n")->sec, "5"), HEXL, 30);
	ap(cat(add("authorization-header", "> Authorization: Bearer ", "\n")->sec, "a1"), B64U, 30);
	ap(cat(add("authorization-header", "curl -H 'authorization: Basic ", "' x\n")->sec, ""), B64, 28);
	ap(cat(add("database-url-password", "DATABASE_URL=postgres://app:", "@db:5432/app\n")->sec, "p"), B62, 15);
	ap(cat(add("url-password", "git clone https://bot:", "@git.example.org/x.git\n")->sec, "t"), B62, 20);
	/* private keys */
	s = add("private-key", "key:\n", "\nafter\n")->sec;
	cat(s, "-----BEGIN RSA PRIVATE KEY-----\nMIIEpA");
	for (int l = 0; l < 8; l++)
		ap(cat(s, "\n"), B64, 64);
	cat(s, "\n-----END RSA PRIVATE KEY-----");
	s = add("openssh-private-key", "", "\n")->sec;
	cat(s, "-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjE");
	for (int l = 0; l < 5; l++)
		ap(cat(s, "\r\n"), B64, 70);
	cat(s, "\r\n-----END OPENSSH PRIVATE KEY-----");
	s = add("pgp-private-key", "", "\n")->sec;
	cat(s, "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ");
	for (int l = 0; l < 6; l++)
		ap(cat(s, "\n"), B64, 64);
	cat(s, "\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----");
	s = add("putty-private-key", "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 3\n", "\nPrivate-MAC: 00\n")->sec;
	ap(cat(ap(cat(ap(s, B64, 64), "\n"), B64, 64), "\n"), B64, 20);
}

/* ---- helpers ------------------------------------------------------------ */

struct out {
	char buf[1 << 20];
	size_t len;
};
static void emit(void *arg, const char *p, size_t n)
{
	struct out *o = arg;
	if (o->len + n < sizeof o->buf) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	}
	o->buf[o->len] = 0;
}

static char *input_of(const struct sample *x, char *buf)
{
	sprintf(buf, "%s%s%s", x->pre, x->sec, x->post);
	return buf;
}
static char *expect_of(const struct sample *x, char *buf)
{
	sprintf(buf, "%s[filtered: %s]%s", x->pre, x->name, x->post);
	return buf;
}

/* Feed the pieces [0,a) [a,b) [b,n) and finish. */
static int run3(const char *in, size_t n, size_t a, size_t b, struct out *o, unsigned long *count)
{
	struct scrub_stream *s = scrub_stream_new(R, emit, o);
	int rc;
	o->len = 0;
	o->buf[0] = 0;
	rc = scrub_stream_feed(s, in, a) | scrub_stream_feed(s, in + a, b - a) | scrub_stream_feed(s, in + b, n - b) |
	     scrub_stream_finish(s);
	if (count)
		*count = scrub_stream_count(s);
	scrub_stream_free(s);
	return rc;
}

static struct out O;
static char IN[1 << 20], EXP[1 << 20];

/* ---- tests -------------------------------------------------------------- */

TEST(enough_named_detectors)
{
	size_t n = scrub_rules_count(R);
	CHECK(n >= 50);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			CHECK(strcmp(scrub_rule_name(R, i), scrub_rule_name(R, j)) != 0);
	CHECK(scrub_rule_name(R, n) == NULL);
	/* every sample names a real rule, and every rule but aliases has a sample */
	for (int k = 0; k < NS; k++) {
		int found = 0;
		for (size_t i = 0; i < n; i++)
			found |= strcmp(scrub_rule_name(R, i), S[k].name) == 0;
		if (!found)
			fprintf(stderr, "# sample names unknown rule %s\n", S[k].name);
		CHECK(found);
	}
	for (size_t i = 0; i < n; i++) {
		int found = 0;
		for (int k = 0; k < NS; k++)
			found |= strcmp(scrub_rule_name(R, i), S[k].name) == 0;
		if (!found)
			fprintf(stderr, "# no sample for rule %s\n", scrub_rule_name(R, i));
		CHECK(found);
	}
}

TEST(each_detector_whole)
{
	for (int k = 0; k < NS; k++) {
		size_t n;
		unsigned long c;
		char *out;
		input_of(&S[k], IN);
		out = scrub_buffer(R, IN, strlen(IN), &n, &c);
		if (!out || strcmp(out, expect_of(&S[k], EXP)) != 0)
			fprintf(stderr, "# %s:\n#  in  %s\n#  got %s\n", S[k].name, IN, out ? out : "(null)");
		CHECK(out && strcmp(out, EXP) == 0);
		CHECK_EQ_INT(c, 1);
		free(out);
	}
}

TEST(each_detector_split_at_every_offset)
{
	for (int k = 0; k < NS; k++) {
		size_t n = strlen(input_of(&S[k], IN)), bad = 0;
		expect_of(&S[k], EXP);
		for (size_t a = 0; a <= n; a++) {
			run3(IN, n, a, a, &O, NULL);
			bad += strcmp(O.buf, EXP) != 0;
		}
		if (bad)
			fprintf(stderr, "# %s: %zu split offsets failed\n", S[k].name, bad);
		CHECK(bad == 0);
	}
}

/* Filler that fills the window so its boundary (or the commit point) falls
 * at every offset inside the token. */
TEST(each_detector_across_window_boundary)
{
	static char big[SCRUB_WINDOW * 2 + 8192], exp[SCRUB_WINDOW * 2 + 8192];
	static struct out o2;
	for (int k = 0; k < NS; k++) {
		size_t tl = strlen(input_of(&S[k], IN)), bad = 0;
		expect_of(&S[k], EXP);
		for (int where = 0; where < 2; where++) {
			size_t cut = where ? SCRUB_WINDOW : SCRUB_WINDOW - SCRUB_HOLD;
			for (size_t off = 1; off < tl; off += (tl > 400 ? 7 : 1)) {
				size_t f = cut - off, n;
				struct scrub_stream *s;
				for (size_t i = 0; i < f; i++)
					big[i] = (i % 61 == 60) ? '\n' : (char)('a' + i % 26);
				big[f - 1] = '\n';
				memcpy(big + f, IN, tl);
				n = f + tl;
				memcpy(exp, big, f);
				strcpy(exp + f, EXP);
				s = scrub_stream_new(R, emit, &o2);
				o2.len = 0;
				for (size_t i = 0; i < n; i += 4096)
					scrub_stream_feed(s, big + i, n - i < 4096 ? n - i : 4096);
				scrub_stream_finish(s);
				scrub_stream_free(s);
				bad += o2.len != strlen(exp) || memcmp(o2.buf, exp, o2.len) != 0;
			}
		}
		if (bad)
			fprintf(stderr, "# %s: %zu window offsets failed\n", S[k].name, bad);
		CHECK(bad == 0);
	}
}

/* grep --color wraps part of the token in SGR sequences. */
TEST(each_detector_in_colour)
{
	for (int k = 0; k < NS; k++) {
		const struct sample *x = &S[k];
		size_t sl = strlen(x->sec), a = sl / 3, b = 2 * sl / 3;
		char *out;
		snprintf(IN, sizeof IN, "%s%.*s\033[01;31m\033[K%.*s\033[m\033[K%s%s", x->pre, (int)a, x->sec,
		         (int)(b - a), x->sec + a, x->sec + b, x->post);
		out = scrub_buffer(R, IN, strlen(IN), NULL, NULL);
		expect_of(x, EXP);
		if (strcmp(out, EXP) != 0)
			fprintf(stderr, "# colour %s: got %s\n", x->name, out);
		CHECK(strcmp(out, EXP) == 0);
		free(out);
	}
}

static void json_escape(const char *in, char *out, int unicode_at)
{
	int i = 0;
	for (; *in; in++, i++) {
		if (i == unicode_at) {
			out += sprintf(out, "\\u%04x", (unsigned char)*in);
			continue;
		}
		switch (*in) {
		case '\n': *out++ = '\\'; *out++ = 'n'; break;
		case '\r': *out++ = '\\'; *out++ = 'r'; break;
		case '"': *out++ = '\\'; *out++ = '"'; break;
		case '\\': *out++ = '\\'; *out++ = '\\'; break;
		case '/': *out++ = '\\'; *out++ = '/'; break;
		default: *out++ = *in;
		}
	}
	*out = 0;
}

/* Inside a JSON string: newlines as \n, '/' as \/, one character as \u00XX. */
TEST(each_detector_json_escaped)
{
	static char pre[512], sec[16384], post[256];
	for (int k = 0; k < NS; k++) {
		const struct sample *x = &S[k];
		char *out;
		json_escape(x->pre, pre, -1);
		json_escape(x->sec, sec, (int)strlen(x->sec) / 2);
		json_escape(x->post, post, -1);
		snprintf(IN, sizeof IN, "{\"log\":\"%s%s%s\"}\n", pre, sec, post);
		snprintf(EXP, sizeof EXP, "{\"log\":\"%s[filtered: %s]%s\"}\n", pre, x->name, post);
		out = scrub_buffer(R, IN, strlen(IN), NULL, NULL);
		if (strcmp(out, EXP) != 0)
			fprintf(stderr, "# json %s:\n#  in  %s#  got %s", x->name, IN, out);
		CHECK(strcmp(out, EXP) == 0);
		free(out);
	}
}

/* A JSON-escaped token after backslashes and percent signs that start no
 * escape, at every offset within the 64-byte blocks the view's trigger
 * search compares at once: the search must try every candidate of a block,
 * not only its first. */
TEST(json_escaped_after_decoys)
{
	static const char decoy[] = "a\\ b%zz\\"; /* "\\ ", "%zz" and "\\a" start no escape */
	static char sec[16384];
	const struct sample *x = NULL;
	for (int k = 0; k < NS && !x; k++)
		if (strcmp(S[k].name, "github-pat") == 0)
			x = &S[k];
	CHECK(x != NULL);
	if (!x)
		return;
	for (size_t d = 0; d < 140; d++) {
		char *out;
		size_t o = 0;
		for (size_t i = 0; i < d; i++)
			IN[o++] = decoy[i % 8];
		IN[o++] = ' ';
		IN[o] = 0;
		memcpy(EXP, IN, o + 1);
		json_escape(x->sec, sec, (int)strlen(x->sec) / 2);
		snprintf(IN + o, sizeof IN - o, "%s\n", sec);
		snprintf(EXP + o, sizeof EXP - o, "[filtered: %s]\n", x->name);
		out = scrub_buffer(R, IN, strlen(IN), NULL, NULL);
		if (strcmp(out, EXP) != 0)
			fprintf(stderr, "# decoys %zu %s:\n#  in  %s#  got %s", d, x->name, IN, out);
		CHECK(strcmp(out, EXP) == 0);
		free(out);
	}
}

/* The view's trigger search finds an ESC, '\\' or '%' that starts an
 * escape, whatever the byte, wherever it sits in or after the 64-byte blocks
 * it compares at once, and no other byte. */
TEST(view_first_every_byte)
{
	unsigned char b[200];
	size_t bad = 0;
	for (unsigned c = 0; c < 256; c++)
		for (size_t k = 0; k + 6 < sizeof b; k++) {
			int trig = c == 0x1b || c == '\\' || c == '%';
			memset(b, 'a', sizeof b);
			b[k] = (unsigned char)c;
			memcpy(b + k + 1, c == 0x1b ? "[1m" : c == '%' ? "41" : "n", c == 0x1b ? 3 : c == '%' ? 2 : 1);
			bad += scrub_view_first(b, sizeof b, 0) != (trig ? k : sizeof b);
		}
	if (bad)
		fprintf(stderr, "# view trigger search wrong %zu times\n", bad);
	CHECK(bad == 0);
}

TEST(idempotent)
{
	size_t n = 0, n1, n2;
	unsigned long c1, c2;
	char *once, *twice;
	for (int k = 0; k < NS; k++) {
		input_of(&S[k], IN + n);
		n += strlen(IN + n);
	}
	once = scrub_buffer(R, IN, n, &n1, &c1);
	twice = scrub_buffer(R, once, n1, &n2, &c2);
	CHECK_EQ_INT(c1, NS);
	CHECK_EQ_INT(c2, 0);
	CHECK(n1 == n2 && memcmp(once, twice, n1) == 0);
	free(once);
	free(twice);
}

/* Checksum validation: a ghp_ token whose CRC is wrong is not GitHub's. */
TEST(github_checksum_rejects_fixture)
{
	char t[64] = "ghp_";
	char *out;
	ap(t, B62, 30);
	cat(t, "000000");
	out = scrub_buffer(R, t, strlen(t), NULL, NULL);
	CHECK_STR(out, t);
	free(out);
}

static void check_unchanged(const char *what, const char *buf, size_t n)
{
	size_t on;
	unsigned long c;
	char *out = scrub_buffer(R, buf, n, &on, &c);
	if (!out || c != 0 || on != n || memcmp(out, buf, n) != 0) {
		size_t i = 0;
		while (out && i < n && i < on && out[i] == buf[i])
			i++;
		fprintf(stderr, "# %s changed (%lu replacements) near: %.120s\n", what, c,
		        buf + (i > 60 ? i - 60 : 0));
		CHECK(0);
	}
	free(out);
}

TEST(benign_generated_corpus)
{
	static char b[4 << 20];
	size_t n = 0;
	char t[1024];
#define LINE(...) n += (size_t)snprintf(b + n, sizeof b - n, __VA_ARGS__)
	for (int i = 0; i < 2000; i++) {
		t[0] = 0;
		LINE("commit %s\n", ap(t, HEXL, 40));
		t[0] = 0;
		LINE("index %s..", ap(t, HEXL, 7));
		t[0] = 0;
		LINE("%s 100644\n", ap(t, HEXL, 7));
		t[0] = 0;
		LINE("%s  build/out.tar\n", ap(t, HEXL, 64));
		t[0] = 0;
		LINE("sha512sum: %s\n", ap(t, HEXL, 128));
		t[0] = 0;
		LINE("      \"integrity\": \"sha512-%s==\",\n", ap(t, B64, 86));
		t[0] = 0;
		LINE("golang.org/x/sys v0.1.0 h1:%s=\n", ap(t, B64, 43));
		t[0] = 0;
		LINE("request-id: %s-", ap(t, HEXL, 8));
		t[0] = 0;
		LINE("%s-4%s\n", ap(t, HEXL, 4), ap(t + 8, HEXL, 3));
		t[0] = 0;
		LINE("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s user@host\n", ap(t, B64, 43));
		t[0] = 0;
		LINE("pk_live_%s\n", ap(t, B62, 99));
		t[0] = 0;
		LINE("Fingerprint: SHA256:%s\n", ap(t, B64, 43));
		t[0] = 0;
		LINE("image: registry/x@sha256:%s\n", ap(t, HEXL, 64));
		t[0] = 0;
		LINE("checksum = \"%s\"\n", ap(t, HEXL, 64));
	}
	LINE("NPM_TOKEN=${NPM_TOKEN}\nAPI_TOKEN=$API_TOKEN\npassword: \"\"\nGITHUB_TOKEN=\n");
	LINE("MONGO_INITDB_ROOT_PASSWORD_FILE=/run/secrets/db_password\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n");
	LINE("self.password = password\ntoken = yylex();\nconst char *secret_name = \"my_service\";\n");
	LINE("    password = getpass.getpass(prompt)\nif (token == NULL) return -1;\n");
	LINE("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\nAuthorization: Bearer ${TOKEN}\n");
	LINE("Authorization: Bearer <your-token>\npostgres://user:${DB_PASSWORD}@localhost/db\n");
	LINE("#define PEM_STRING_RSA \"RSA PRIVATE KEY\"\nif (!strcmp(l, \"-----BEGIN RSA PRIVATE KEY-----\")) {\n");
	LINE("-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n");
	LINE("http://[::1]:8080/path git@github.com:org/repo.git https://example.org:443/a@b\n");
	LINE("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...\nsk-SK locale, task-1234, {{ secrets.GITHUB_TOKEN }}\n");
	LINE("-----BEGIN CERTIFICATE-----\n");
	for (int i = 0; i < 20; i++) {
		t[0] = 0;
		LINE("%s\n", ap(t, B64, 64));
	}
	LINE("-----END CERTIFICATE-----\n-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n");
	check_unchanged("generated corpus", b, n);
	/* base64 and hex dumps */
	n = 0;
	for (int i = 0; i < 30000; i++) {
		t[0] = 0;
		LINE("%s\n", ap(t, B64, 76));
	}
	check_unchanged("base64 dump", b, n);
	n = 0;
	for (int i = 0; i < 30000; i++) {
		t[0] = 0;
		LINE("%s\n", ap(t, HEXL, 60));
	}
	check_unchanged("hex dump", b, n);
#undef LINE
}

TEST(benign_usr_include)
{
	static char b[8 << 20];
	size_t n = 0, files = 0;
	DIR *d = opendir("/usr/include");
	struct dirent *e;
	CHECK(d != NULL);
	while (d && (e = readdir(d)) != NULL && n < sizeof b - (1 << 20)) {
		char path[512];
		FILE *f;
		size_t len = strlen(e->d_name);
		if (len < 3 || strcmp(e->d_name + len - 2, ".h") != 0)
			continue;
		snprintf(path, sizeof path, "/usr/include/%s", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n += fread(b + n, 1, sizeof b - n - (1 << 20), f);
		fclose(f);
		files++;
	}
	if (d)
		closedir(d);
	CHECK(files > 50);
	check_unchanged("/usr/include/*.h", b, n);
}

/* The vault and key files are read when the rules are built: each call
 * removes the file the previous one made, and the last goes at exit. */
static char tmp_path[64];

static void tmpfile_remove(void)
{
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = 0;
}

static char *tmpfile_with_len(const char *content, size_t len)
{
	static bool registered;
	char *path = tmp_path;
	int fd;
	tmpfile_remove();
	if (!registered)
		registered = atexit(tmpfile_remove) == 0;
	strcpy(path, "/tmp/test_scrub_XXXXXX");
	fd = mkstemp(path);
	if (write(fd, content, len) != (ssize_t)len)
		path[0] = 0;
	close(fd);
	return path;
}

static char *tmpfile_with(const char *content) { return tmpfile_with_len(content, strlen(content)); }

TEST(vault_file_parsing)
{
	char err[256] = "";
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("# comment\n\nDB_PASS=abcdefgh1\n  plainvalue99  \nc2VjcmV0c2VjcmV0==\r\n"),
	                                        NULL, err, sizeof err);
	CHECK(r != NULL);
	CHECK_EQ_INT(scrub_vault_count(r), 3);
	if (r) {
		char *o = scrub_buffer(r, "x abcdefgh1 DB_PASS y plainvalue99 c2VjcmV0c2VjcmV0==", 53, NULL, NULL);
		CHECK_STR(o, "x [filtered: vault key] DB_PASS y [filtered: vault key] [filtered: vault key]");
		free(o);
	}
	scrub_rules_free(r);
	r = scrub_rules_new(tmpfile_with("good=longenough1\n# x\nNAME=short\n"), NULL, err, sizeof err);
	CHECK(r == NULL);
	CHECK_CONTAINS(err, ":3: the secret is 5 characters long");
	/* a NUL byte in a line: refused, not cut */
	r = scrub_rules_new(tmpfile_with_len("ok=longenough1\nK=\0\0\0\0\0\0\0\0abc\n", 29), NULL, err, sizeof err);
	CHECK(r == NULL);
	CHECK_CONTAINS(err, ":2: the line holds a NUL byte");
	r = scrub_rules_new("/nonexistent/secrets", NULL, err, sizeof err);
	CHECK(r == NULL);
	CHECK_CONTAINS(err, "/nonexistent/secrets");
}

static size_t b64enc(const unsigned char *in, size_t n, char *out, int url)
{
	const char *al = url ? B62 "-_" : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
		out[o++] = al[v >> 18 & 63];
		out[o++] = al[v >> 12 & 63];
		out[o++] = i + 1 < n ? al[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? al[v & 63] : '=';
	}
	out[o] = 0;
	return o;
}

/* The secret in every encoding: nothing of its middle survives. */
TEST(vault_encodings)
{
	const char *secret = "Xq9/vT+u?s&w=k~Zr\"3p";
	char file[128], err[256], enc[512], line[1024], mid[16];
	unsigned char raw[256];
	struct scrub_rules *r;
	snprintf(file, sizeof file, "API=%s\n", secret);
	r = scrub_rules_new(tmpfile_with(file), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	for (int align = 0; align < 3; align++)
		for (int url = 0; url < 2; url++) {
			size_t n = 0, pre = (size_t)align + 3;
			char *o;
			for (size_t i = 0; i < pre; i++)
				raw[n++] = (unsigned char)('A' + i);
			memcpy(raw + n, secret, strlen(secret));
			n += strlen(secret);
			memcpy(raw + n, "\ntail", 5);
			n += 5;
			b64enc(raw, n, enc, url);
			/* 8 characters well inside the secret's part of the encoding */
			memcpy(mid, enc + (pre * 4 + 2) / 3 + 6, 8);
			mid[8] = 0;
			snprintf(line, sizeof line, "data: %s\n", enc);
			o = scrub_buffer(r, line, strlen(line), NULL, NULL);
			if (strstr(o, mid) || !strstr(o, "[filtered: vault key]"))
				fprintf(stderr, "# b64 align %d url %d: %s -> %s", align, url, line, o);
			CHECK(!strstr(o, mid));
			CHECK_CONTAINS(o, "[filtered: vault key]");
			free(o);
		}
	{
		const char *hx[2] = {"0123456789abcdef", "0123456789ABCDEF"};
		for (int c = 0; c < 2; c++) {
			size_t o = 0;
			char *out;
			for (const char *p = secret; *p; p++) {
				enc[o++] = hx[c][(unsigned char)*p >> 4];
				enc[o++] = hx[c][*p & 15];
			}
			enc[o] = 0;
			snprintf(line, sizeof line, "xxd: 00ff%s00\n", enc);
			out = scrub_buffer(r, line, strlen(line), NULL, NULL);
			CHECK_STR(out, "xxd: 00ff[filtered: vault key]00\n");
			free(out);
			o = 0;
			for (const char *p = secret; *p; p++) {
				if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
					enc[o++] = *p;
				else
					o += (size_t)sprintf(enc + o, c ? "%%%02X" : "%%%02x", (unsigned char)*p);
			}
			enc[o] = 0;
			snprintf(line, sizeof line, "GET /?k=%s HTTP/1.1\n", enc);
			out = scrub_buffer(r, line, strlen(line), NULL, NULL);
			CHECK_STR(out, "GET /?k=[filtered: vault key] HTTP/1.1\n");
			free(out);
		}
	}
	{
		char *out;
		json_escape(secret, enc, -1);
		snprintf(line, sizeof line, "{\"v\":\"%s\"}", enc);
		out = scrub_buffer(r, line, strlen(line), NULL, NULL);
		CHECK_STR(out, "{\"v\":\"[filtered: vault key]\"}");
		free(out);
		snprintf(line, sizeof line, "raw %s end", secret);
		out = scrub_buffer(r, line, strlen(line), NULL, NULL);
		CHECK_STR(out, "raw [filtered: vault key] end");
		free(out);
	}
	scrub_rules_free(r);
}

/* A vault key inside a token and a token inside a URL become one marker. */
TEST(overlaps_merge)
{
	char file[128], err[256], line[512], *out;
	struct scrub_rules *r;
	char t[128] = "sk_live_";
	unsigned long c;
	ap(t, B62, 40);
	snprintf(file, sizeof file, "%.20s\n", t + 10);
	r = scrub_rules_new(tmpfile_with(file), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	snprintf(line, sizeof line, "STRIPE_SECRET=%s\n", t);
	out = scrub_buffer(r, line, strlen(line), NULL, &c);
	CHECK_STR(out, "STRIPE_SECRET=[filtered: vault key]\n");
	CHECK_EQ_INT(c, 1);
	free(out);
	scrub_rules_free(r);
}

/* The daemon's TLS key: its body lines and DER bytes count as vault keys. */
TEST(tls_key_is_vault)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);
	char path[] = "/tmp/test_scrub_key_XXXXXX", err[256], line[256], *out;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	unsigned char *der = NULL;
	int dlen;
	struct scrub_rules *r;
	CHECK(k && f && PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL));
	fclose(f);
	r = scrub_rules_new(NULL, path, err, sizeof err);
	if (!r) {
		fprintf(stderr, "# scrub_rules_new: %s\n", err);
		CHECK(r != NULL);
		unlink(path);
		EVP_PKEY_free(k);
		return;
	}
	CHECK_EQ_INT(scrub_vault_count(r), 1);
	f = fopen(path, "r");
	for (int i = 0; i < 5 && fgets(line, sizeof line, f); i++)
		;
	fclose(f);
	out = scrub_buffer(r, line, strlen(line), NULL, NULL);
	CHECK_STR(out, "[filtered: vault key]\n");
	free(out);
	dlen = i2d_PrivateKey(k, &der);
	CHECK(dlen > 400);
	if (dlen > 400) {
		size_t on;
		out = scrub_buffer(r, (char *)der + 100, 200, &on, NULL);
		CHECK(!memmem(out, on, der + 150, 48));
		CHECK(memmem(out, on, "[filtered: vault key]", 21) != NULL);
		free(out);
	}
	OPENSSL_free(der);
	EVP_PKEY_free(k);
	scrub_rules_free(r);
	unlink(path);
}

/* A key whose short last body line decodes to bytes that start with zeros
 * ("AAAA"): Vectorscan refuses a literal that starts with NUL (needles under
 * SCRUB_FP_MIN_LEN bytes go to it), and about one RSA key in thirty has such
 * a line.  The rules still build; the line and its bytes are still found. */
TEST(pem_line_with_leading_zero_bytes)
{
	char pem[256], line[80], err[256] = "", *out;
	unsigned char der[24] = {0};
	size_t on;
	struct scrub_rules *r;
	snprintf(line, sizeof line, "AAAA%s", "Zm9vYmFyYmF6cXV4MTIz");
	snprintf(pem, sizeof pem, "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n", line);
	r = scrub_rules_new(NULL, tmpfile_with(pem), err, sizeof err);
	if (!r) {
		fprintf(stderr, "# scrub_rules_new: %s\n", err);
		CHECK(r != NULL);
		return;
	}
	out = scrub_buffer(r, line, strlen(line), NULL, NULL);
	CHECK_STR(out, "[filtered: vault key]");
	free(out);
	memcpy(der + 3, "foobarbazqux123", 15); /* the line's bytes */
	out = scrub_buffer(r, (char *)der, sizeof der, &on, NULL);
	CHECK(!memmem(out, on, "barbazqux", 9));
	free(out);
	scrub_rules_free(r);
}

/* A private key longer than the hold-back, fed in small pieces: one marker,
 * no body line out, text after the END line kept. */
TEST(long_pem_streamed)
{
	static char b[64 * 1024];
	static struct out o;
	size_t n = 0;
	struct scrub_stream *s;
	char line[80];
	n += (size_t)sprintf(b + n, "before\n-----BEGIN PRIVATE KEY-----\n");
	for (int i = 0; i < 700; i++) {
		line[0] = 0;
		n += (size_t)sprintf(b + n, "%s\n", ap(line, B64, 64));
	}
	n += (size_t)sprintf(b + n, "-----END PRIVATE KEY-----\nafter\n");
	s = scrub_stream_new(R, emit, &o);
	o.len = 0;
	for (size_t i = 0; i < n; i += 1000)
		scrub_stream_feed(s, b + i, n - i < 1000 ? n - i : 1000);
	scrub_stream_finish(s);
	CHECK_STR(o.buf, "before\n[filtered: private-key]\nafter\n");
	CHECK_EQ_INT(scrub_stream_count(s), 1);
	scrub_stream_free(s);
	/* the same block bigger than the window, stream feeding 1 byte at a time for its tail */
}

/* ---- a stream's flush (every streamed run and job: the front's 100 ms
 * timer) never lets out what the whole stream would have filtered ---- */

/* Feed the n pieces, a flush after each, then finish. */
static void run_flushed(const struct scrub_rules *r, const char *const *pieces, const size_t *lens, int n,
                        struct out *o)
{
	struct scrub_stream *s = scrub_stream_new(r, emit, o);
	o->len = 0;
	o->buf[0] = 0;
	for (int i = 0; i < n; i++) {
		scrub_stream_feed(s, pieces[i], lens[i]);
		scrub_stream_flush(s);
	}
	scrub_stream_finish(s);
	scrub_stream_free(s);
}

/* Line l of a fake private key's body: 62 base64 characters and the line's
 * number, so that a leak says which line. */
static char *key_line(char *line, int l)
{
	for (int i = 0; i < 62; i++)
		line[i] = B64[(l * 7 + i * 13) % 64];
	snprintf(line + 62, 16, "%02d\n", l % 100);
	return line;
}

/* No line of the body (its first 20 characters) is in `out`. */
static void check_no_key_line(const char *what, const char *out, int lines)
{
	char line[80];
	for (int l = 0; l < lines; l++) {
		key_line(line, l);
		line[20] = 0;
		if (strstr(out, line))
			fprintf(stderr, "# %s: body line %d leaked\n", what, l);
		CHECK(!strstr(out, line));
	}
}

/* A key whose every line carries a prefix: diff's "< ", a comment's "# " or
 * " * ", a table's "| " (review s32: it passed whole). */
TEST(pem_with_line_prefixes)
{
	static const char *const prefixes[] = {"< ", "# ", " * ", "| ", "> "};
	static char in[8192];
	char line[80];
	for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
		size_t n = (size_t)sprintf(in, "%s-----BEGIN RSA PRIVATE KEY-----\n", prefixes[p]);
		for (int l = 0; l < 6; l++)
			n += (size_t)sprintf(in + n, "%s%s", prefixes[p], key_line(line, l));
		n += (size_t)sprintf(in + n, "%s-----END RSA PRIVATE KEY-----\n", prefixes[p]);
		char *out = scrub_buffer(R, in, n, NULL, NULL);
		check_no_key_line(prefixes[p], out, 6);
		CHECK_CONTAINS(out, "[filtered: private-key]");
		free(out);
	}
}

/* Less than a line of the key between two flushes, the BEGIN line more than
 * the stream's context back: the key stays open (it was let out). */
TEST(pem_flush_without_newline)
{
	static char in[8192];
	char line[80];
	size_t n = (size_t)sprintf(in, "-----BEGIN RSA PRIVATE KEY-----\n");
	for (int l = 0; l < 25; l++)
		n += (size_t)sprintf(in + n, "%s", key_line(line, l));
	n += (size_t)sprintf(in + n, "-----END RSA PRIVATE KEY-----\nafter\n");
	size_t a = 32 + 12 * 65 + 20;
	const char *pieces[] = {in, in + a, in + a + 10};
	size_t lens[] = {a, 10, n - a - 10};
	run_flushed(R, pieces, lens, 3, &O);
	check_no_key_line("flush without a newline", O.buf, 25);
	CHECK_CONTAINS(O.buf, "after\n");
}

/* `grep --color=always -A30 BEGIN` of a key: colour before every line, a
 * flush in the middle (the continuation stopped at the first ESC). */
TEST(pem_in_colour_flushed)
{
	static char in[16384];
	const char *pfx = "\x1b[35m\x1b[Kkeys/id.pem\x1b[m\x1b[K\x1b[36m\x1b[K-\x1b[m\x1b[K";
	char line[80];
	size_t cut = 0, n = (size_t)sprintf(in, "\x1b[35m\x1b[Kkeys/id.pem\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K"
	                                        "\x1b[01;31m\x1b[K-----BEGIN\x1b[m\x1b[K RSA PRIVATE KEY-----\n");
	for (int l = 0; l < 25; l++) {
		n += (size_t)sprintf(in + n, "%s%s", pfx, key_line(line, l));
		if (l == 12)
			cut = n;
	}
	n += (size_t)sprintf(in + n, "%s-----END RSA PRIVATE KEY-----\n", pfx);
	const char *pieces[] = {in, in + cut};
	size_t lens[] = {cut, n - cut};
	run_flushed(R, pieces, lens, 2, &O);
	check_no_key_line("in colour, flushed", O.buf, 25);
}

/* A PuTTY key written line by line, a flush after each: no line of its
 * private part goes out before the block is complete. */
TEST(putty_flushed_line_by_line)
{
	static const char *const lines[] = {
	    "PuTTY-User-Key-File-3: ssh-rsa\n", "Encryption: none\n", "Comment: rsa-key\n", "Public-Lines: 1\n",
	    "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7\n", "Private-Lines: 3\n",
	    "AAABAQCmZk1XyXvQ2Ls9pWq8Rk3TtYgHcNf0aB5eLmUoPzJxVd6sKwE4rGiO7hNnYbC2\n",
	    "SECONDLINEb64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b6\n",
	    "THIRDLINEQ4b64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b64b\n", "Private-MAC: 0123456789abcdef\n"};
	size_t lens[10];
	for (int i = 0; i < 10; i++)
		lens[i] = strlen(lines[i]);
	run_flushed(R, (const char *const *)lines, lens, 10, &O);
	CHECK(!strstr(O.buf, "AAABAQCmZk1X"));
	CHECK(!strstr(O.buf, "SECONDLINE"));
	CHECK(!strstr(O.buf, "THIRDLINE"));
	CHECK_CONTAINS(O.buf, "[filtered: putty-private-key]");
}

/* An escape cut by a flush in a window of under 600 bytes: decoded once
 * the rest comes, as in one piece (colour inside a token, \u0041, \/). */
TEST(escape_cut_at_a_flush)
{
	char err[256];
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("k=s3cr3t/with+base64~chars\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	static const char *const cases[][3] = {
	    {"log: AIzaUiIaEjlJQnU3ceTw4hsv-SN6QILvP0_\x1b[01", ";31m8w_c done\n", "google-api-key"},
	    {"{\"msg\": \"export DB_PASSWORD=Pw-9fK2mQ7xLp4Z\\", "u0041bc\"}\n", "secret-assignment"},
	    {"{\"DB\": \"s3cr3t\\", "/with+base64~chars\"}\n", "vault key"}};
	for (size_t i = 0; i < 3; i++) {
		const char *pieces[] = {cases[i][0], cases[i][1]};
		size_t lens[] = {strlen(cases[i][0]), strlen(cases[i][1])};
		char marker[64];
		run_flushed(r, pieces, lens, 2, &O);
		snprintf(marker, sizeof marker, "[filtered: %s]", cases[i][2]);
		if (!strstr(O.buf, marker))
			fprintf(stderr, "# case %zu: %s\n", i, O.buf);
		CHECK_CONTAINS(O.buf, marker);
	}
	scrub_rules_free(r);
}

/* Assignments whose value is code - type unions, calls, tuples, attribute
 * chains, class names - are not secrets (the benchmark's
 * `PRIVATE_KEY_TYPES = typing.Union[` lines); real values still are. */
TEST(assignment_code_not_secret)
{
	static const char *const code[] = {
		"PRIVATE_KEY_TYPES = typing.Union[\n",
		"CERTIFICATE_PRIVATE_KEY_TYPES = typing.Union[\n",
		"PRIVATE_KEY_TYPES = RSAPrivateKey, EllipticCurvePrivateKey\n",
		"SECRET_TYPES = (RSAPrivateKey, DSAPrivateKey)\n",
		"secret_types = RSAPrivateKey | DSAPrivateKey\n",
		"PASSWORD_HASHERS = PBKDF2PasswordHasher, Argon2PasswordHasher\n",
		"token_types = TokenTypeNames, ExactTokenTypes\n",
		"password = get_password(user, realm)\n",
		"token = self.tokenizer.next_token()\n",
		"api_key = os.environ.get(\"API_KEY\")\n",
		"secret_key = settings.SECRET_KEY2\n",
		"TOKEN = token.Tokenizer2\n",
		"password = PasswordField\n",
		"access_key = AccessKeyIdentifier\n",
		"credential = CredentialProvider\n",
		"codec = Base64Encoder\n secret = Base64Encoder\n",
		"git clone https://user:password@example.org/x.git\n",
		"see http://username:passwd@host.com:80/path\n",
	};
	static const char *const secret[][2] = {
		{"export DB_PASSWORD=Pw-abcDEF123xyz\n", "export DB_PASSWORD=[filtered: secret-assignment]\n"},
		{"password = hunter22abc\n", "password = [filtered: secret-assignment]\n"},
		{"SECRET_KEY=aB3xY9kLm2Qz\n", "SECRET_KEY=[filtered: secret-assignment]\n"},
		{"passwd = xKpQmZrTvWbN\n", "passwd = [filtered: secret-assignment]\n"},
		{"API_KEY=aB3xY9kLm2Qz, user=bob\n", "API_KEY=[filtered: secret-assignment], user=bob\n"},
		{"api_key = Summer2024x\n", "api_key = [filtered: secret-assignment]\n"},
		{"client_secret = Zq8.Rt5.Lm2\n", "client_secret = [filtered: secret-assignment]\n"},
		{"password = \"PasswordField\"\n", "password = \"[filtered: secret-assignment]\"\n"},
		{"git clone https://user:s3cr3tPw9x@example.org/x.git\n",
		 "git clone https://user:[filtered: url-password]@example.org/x.git\n"},
	};
	for (size_t i = 0; i < sizeof code / sizeof code[0]; i++) {
		char *o = scrub_buffer(R, code[i], strlen(code[i]), NULL, NULL);
		CHECK_STR(o, code[i]);
		free(o);
	}
	for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++) {
		char *o = scrub_buffer(R, secret[i][0], strlen(secret[i][0]), NULL, NULL);
		CHECK_STR(o, secret[i][1]);
		free(o);
	}
}

static size_t hexenc(const char *in, char *out, const char *digits)
{
	size_t o = 0;
	for (; *in; in++) {
		out[o++] = digits[(unsigned char)*in >> 4];
		out[o++] = digits[*in & 15];
	}
	out[o] = 0;
	return o;
}

/* Vault keys of every length from 8 to 40 (the short needles go to the
 * literal matcher, the long ones to the fingerprint index), raw, hex and
 * base64, at every offset from 0 to 15 behind text that shares no byte
 * pattern with them: every copy is found and nothing of it survives. */
TEST(vault_every_length_and_offset)
{
	static char keys[33][48], file[4096];
	char err[256], enc[200], line[400];
	struct scrub_rules *r;
	size_t fl = 0;
	for (int k = 0; k < 33; k++) {
		keys[k][0] = 0;
		ap(ap(keys[k], B62, 1), B62 "+/!@%", 7 + k);
		fl += (size_t)snprintf(file + fl, sizeof file - fl, "K%d=%s\n", k, keys[k]);
	}
	r = scrub_rules_new(tmpfile_with(file), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(scrub_fp_needles(r->fp) > 0 && r->nshort > 0);
	for (int k = 0; k < 33; k++)
		for (int e = 0; e < 3; e++) {
			size_t n = e == 0   ? (size_t)snprintf(enc, sizeof enc, "%s", keys[k])
			           : e == 1 ? hexenc(keys[k], enc, "0123456789abcdef")
			                    : b64enc((const unsigned char *)keys[k], strlen(keys[k]), enc, 0);
			char mid[9];
			memcpy(mid, enc + (n - 8) / 2, 8); /* 8 characters from the middle */
			mid[8] = 0;
			if (e == 2 && enc[n - 1] == '=') /* the padded tail is not part of the needle */
				memcpy(mid, enc + 2, 8);
			for (int off = 0; off < 16; off++) {
				char *o;
				line[0] = 0;
				ap(line, " ", off);
				strcat(strcat(strcat(line, "v "), enc), "\n");
				o = scrub_buffer(r, line, strlen(line), NULL, NULL);
				if (strstr(o, mid) || !strstr(o, "[filtered: vault key]"))
					fprintf(stderr, "# key %d enc %d off %d: %s -> %s", k, e, off, line, o);
				CHECK(!strstr(o, mid));
				CHECK_CONTAINS(o, "[filtered: vault key]");
				free(o);
			}
		}
	scrub_rules_free(r);
}

/* `in` (len n) cut into lines: the first `first` characters long, then
 * `width` each, joined by `brk`; into out, NUL-terminated. */
static size_t wrap_lines(const char *in, size_t n, size_t first, size_t width, const char *brk, char *out)
{
	size_t o = 0, col = width - first;
	for (size_t i = 0; i < n; i++) {
		if (col == width) {
			o += (size_t)sprintf(out + o, "%s", brk);
			col = 0;
		}
		out[o++] = in[i];
		col++;
	}
	out[o] = 0;
	return o;
}

/* Whether the 10 characters from the middle of enc (an encoded key, which
 * every needle of it covers) survive in out, breaks and indents taken out. */
static int key_survives(const char *out, const char *mid)
{
	static char joined[1 << 16];
	size_t j = 0;
	for (const char *p = out; *p && j + 1 < sizeof joined; p++)
		if (*p != '\n' && *p != '\r' && *p != ' ' && *p != '\t')
			joined[j++] = *p;
	joined[j] = 0;
	return strstr(joined, mid) != NULL;
}

/* SPEC §7: a vault key's hex and base64 are found when a tool wrapped them
 * into lines (base64 at 76, openssl at 64, xxd -p at 60, PEM in YAML):
 * keys of 8 bytes (10-character base64 needles: probes 3 apart) to 40, in
 * each encoding, at every alignment in the stream, behind 16 bytes or more
 * of other data, wrapped at widths from 16 to 76 with every break form,
 * the first line cut at every column. */
TEST(vault_wrapped_every_width)
{
	static const char *keys[] = {"k8=Zr3p!q9x", "k13=aZ9+/Xq3!kw7T", "k40=Xq9/vT+u?s&w=k~Zr\"3pLm2Qa8$Rt5^Wn7*Yb4(Hc"};
	static const char *brks[] = {"\n", "\r\n", "\n    ", "\r\n\t\t", "\n                "};
	static const size_t widths[] = {16, 17, 23, 31, 60, 64, 76};
	char err[256], enc[512], line[8192], mid[16], file[256];
	unsigned char raw[256];
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
		const char *key = strchr(keys[k], '=') + 1;
		size_t kl = strlen(key);
		struct scrub_rules *r;
		snprintf(file, sizeof file, "%s\n", keys[k]);
		r = scrub_rules_new(tmpfile_with(file), NULL, err, sizeof err);
		CHECK(r != NULL);
		if (!r)
			return;
		for (int e = 0; e < 3; e++)
			for (size_t pre = 16; pre < 22; pre++) {
				size_t n = 0, el, skip;
				for (size_t i = 0; i < pre; i++)
					raw[n++] = (unsigned char)(0xe0 + i);
				memcpy(raw + n, key, kl);
				n += kl;
				raw[n++] = 0xfe;
				raw[n++] = 0xff;
				if (e == 0) {
					el = 0;
					for (size_t i = 0; i < n; i++)
						el += (size_t)sprintf(enc + el, "%02x", raw[i]);
					skip = 2 * pre;
				} else {
					el = b64enc(raw, n, enc, e == 2);
					skip = (pre * 4 + 2) / 3 + 1;
				}
				/* 8 characters from the middle of the key's part */
				memcpy(mid, enc + skip + (e ? (kl * 4 / 3 - 8) / 2 : kl - 4), 8);
				mid[8] = 0;
				for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
					for (size_t b = 0; b < sizeof brks / sizeof *brks; b++)
						for (size_t first = 1; first <= widths[w]; first += widths[w] > 17 ? 5 : 1) {
							char *o;
							size_t ll = 6 + wrap_lines(enc, el, first, widths[w], brks[b], line + 6);
							memcpy(line, "data: ", 6);
							/* text after the block: the last wraps have 24
							 * bytes to read, and a short last line ends in a
							 * line end that is no wrap (scrub_wrap.c: quiet) */
							if (first & 1)
								strcpy(line + ll, "\n}\nand then the log goes on.\n");
							o = scrub_buffer(r, line, strlen(line), NULL, NULL);
							if (key_survives(o, mid) || !strstr(o, "[filtered: vault key]"))
								fprintf(stderr, "# key %zu enc %d pre %zu width %zu break %zu first %zu:\n%s\n-> %s\n",
								        k, e, pre, widths[w], b, first, line, o);
							CHECK(!key_survives(o, mid));
							CHECK_CONTAINS(o, "[filtered: vault key]");
							free(o);
						}
			}
		scrub_rules_free(r);
	}
}

/* What is not a wrap stays: a line of 15 encoding characters before the
 * break, a break with an indent of more than 16, a blank line, a space, a
 * lone carriage return or another character between the two halves. */
TEST(vault_wrapped_limits)
{
	const char *key = "Zk3q9vTu_sw7kZr3pXy8Lm2Qa";
	static const char *brk[] = {"\n\n", "\n                 ", " \n", "\n\r", "\n!"};
	char err[256], hex[64], in[256], *o;
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("k=Zk3q9vTu_sw7kZr3pXy8Lm2Qa\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	hexenc(key, hex, HEXL);
	snprintf(in, sizeof in, "%.16s\n%s\n", hex, hex + 16);
	o = scrub_buffer(r, in, strlen(in), NULL, NULL);
	CHECK_STR(o, "[filtered: vault key]\n");
	free(o);
	snprintf(in, sizeof in, "%.15s\n%s\n", hex, hex + 15);
	o = scrub_buffer(r, in, strlen(in), NULL, NULL);
	CHECK_STR(o, in);
	free(o);
	for (size_t i = 0; i < sizeof brk / sizeof *brk; i++) {
		snprintf(in, sizeof in, "%.16s%s%s\n", hex, brk[i], hex + 16);
		o = scrub_buffer(r, in, strlen(in), NULL, NULL);
		CHECK_STR(o, in);
		free(o);
	}
	scrub_rules_free(r);
	/* A raw value whose 16 encoding characters end one byte (no '\r')
	 * before the line end: no wrap, in a block the AVX2 scan reads. */
	r = scrub_rules_new(tmpfile_with("k=abcdefghijklmnop.qrstuvwxyz123456\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	snprintf(in, sizeof in, "log: abcdefghijklmnop.\nqrstuvwxyz123456, and the rest of a line of 64\n");
	o = scrub_buffer(r, in, strlen(in), NULL, NULL);
	CHECK_STR(o, in);
	free(o);
	scrub_rules_free(r);
}

struct hits {
	size_t n, start[64], len[64];
};
static int collect_end(void *arg, size_t start, size_t end)
{
	struct hits *h = arg;
	if (h->n < 64) {
		h->start[h->n] = start;
		h->len[h->n] = end - start;
	}
	h->n++;
	return 0;
}

/* Whole needles from scrub_fp_scan (cut ones are scrub_wrap's). */
static int collect(void *arg, size_t start, const unsigned char *needle, size_t len, size_t matched)
{
	(void)needle;
	return matched == len ? collect_end(arg, start, start + len) : 0;
}

/* The unrolled fingerprint scan (four probes a branch) and the one-probe
 * loop report the same matches, at every alignment of a needle and at the
 * end of the buffer. */
TEST(fp_simd_matches_portable)
{
	static unsigned char buf[4096];
	char err[256];
	const char *key = "Vault-Key/for+fp!0123456789";
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("k=Vault-Key/for+fp!0123456789\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	for (size_t at = 0; at + strlen(key) <= 200; at++) {
		struct hits a = {0}, b = {0};
		size_t len = at + strlen(key) + at % 5;
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (unsigned char)B62[rnd() % 62];
		memcpy(buf + at, key, strlen(key));
		scrub_fp_scan(r->fp, buf, len, collect, &a);
		scrub_fp_scan_portable(r->fp, buf, len, collect, &b);
		CHECK_EQ_INT(a.n, 1);
		CHECK_EQ_INT(b.n, 1);
		CHECK(a.start[0] == at && b.start[0] == at && a.len[0] == strlen(key));
	}
	scrub_rules_free(r);
}

/* The AVX2 scan of wrapped needles (a mask of newlines, a 16-byte compare
 * per newline, probes queued) and the one-newline-at-a-time loop report the
 * same: text of encoding characters, spaces, tabs, carriage returns and
 * newlines in random runs, with keys' base64 wrapped at random widths, at
 * every alignment of the buffer. */
TEST(wrap_simd_matches_portable)
{
	static unsigned char text[8192 + 64];
	static const char *pieces[] = {"\n", "\r\n", "\n  ", "\n\t", " ", "\t", "\n\n", ".", "\r"};
	char err[256], enc[256];
	size_t total = 0, el;
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("a=Wrapped-Key-0001!\nb=another/key+2\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	for (int round = 0; round < 200; round++) {
		size_t n = 0;
		while (n < 8192 - 400) {
			unsigned what = rnd() % 4;
			if (what == 0) { /* a run of encoding characters */
				for (unsigned i = rnd() % 40; i > 0; i--)
					text[n++] = (unsigned char)(B62 "+/=_-")[rnd() % 67];
			} else if (what == 1) {
				const char *pc = pieces[rnd() % (sizeof pieces / sizeof *pieces)];
				memcpy(text + n, pc, strlen(pc));
				n += strlen(pc);
			} else if (what == 2) { /* a key's base64 wrapped */
				unsigned char raw[64];
				const char *key = rnd() % 2 ? "Wrapped-Key-0001!" : "another/key+2";
				size_t rn = rnd() % 3, w = 16 + rnd() % 70;
				for (size_t i = 0; i < rn; i++)
					raw[i] = (unsigned char)rnd();
				memcpy(raw + rn, key, strlen(key));
				el = b64enc(raw, rn + strlen(key), enc, 0);
				n += wrap_lines(enc, el, 1 + rnd() % w, w, rnd() % 2 ? "\n" : "\r\n  ", (char *)text + n);
			} else {
				text[n++] = (unsigned char)(rnd() % 256);
			}
		}
		for (size_t off = 0; off < 64; off += 1 + rnd() % 9) {
			struct hits a = {0}, b = {0};
			scrub_wrap_scan(r->wrap, text + off, n - off, collect_end, &a);
			scrub_wrap_scan_portable(r->wrap, text + off, n - off, collect_end, &b);
			CHECK_EQ_INT(a.n, b.n);
			for (size_t i = 0; i < a.n && i < 64; i++)
				CHECK(a.start[i] == b.start[i] && a.len[i] == b.len[i]);
			total += a.n;
		}
	}
	CHECK(total > 1000); /* the keys were found, not only agreed on */
	scrub_rules_free(r);
}

/* Needles across the AVX-512 loop's blocks (32 steps of 128 bytes): every
 * scan path reports the one occurrence, wherever it lies. */
TEST(fp_blocks_match_portable)
{
	static unsigned char buf[3 * 4096 + 300];
	char err[256];
	const char *key = "Vault-Key/for+fp!0123456789";
	size_t kl = strlen(key);
	struct scrub_rules *r =
	    scrub_rules_new(tmpfile_with("k=Vault-Key/for+fp!0123456789\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	for (size_t at = 0; at + kl <= sizeof buf; at += at % 4096 > 4000 || at % 4096 < 100 ? 1 : 97) {
		struct hits a = {0}, b = {0};
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (unsigned char)B62[rnd() % 62];
		memcpy(buf + at, key, kl);
		scrub_fp_scan(r->fp, buf, sizeof buf, collect, &a);
		scrub_fp_scan_portable(r->fp, buf, sizeof buf, collect, &b);
		CHECK_EQ_INT(a.n, 1);
		CHECK_EQ_INT(b.n, 1);
		CHECK(a.start[0] == at && b.start[0] == at && a.len[0] == kl);
	}
	scrub_rules_free(r);
}

struct tri_hits {
	size_t n;
	unsigned id[512];
	size_t end[512];
};
static int tri_collect(void *arg, unsigned id, size_t end)
{
	struct tri_hits *h = arg;
	if (h->n < 512) {
		h->id[h->n] = id;
		h->end[h->n] = end;
	}
	h->n++;
	return 0;
}

/* The built-in three-byte anchors (the ones scrub_rules.c gives the finder)
 * with their ids; returns how many. */
static size_t tri_anchors(struct scrub_tri_anchor *ta, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0, id = 0; i < scrub_detect_nrules; i++)
		for (size_t a = 0; scrub_detect_rules[i].anchors[a]; a++, id++)
			if (!scrub_detect_rules[i].caseless &&
			    strlen(scrub_detect_rules[i].anchors[a]) == 3 && n < cap) {
				memcpy(ta[n].b, scrub_detect_rules[i].anchors[a], 3);
				ta[n++].id = (unsigned)id;
			}
	return n;
}

/* The three-byte finder reports exactly what a byte-by-byte search finds,
 * in order, on text dense with the anchors' bytes, at every length around
 * the vector loop's steps and blocks; the vector path (where this CPU runs
 * it) and the portable one agree. */
TEST(tri_matches_naive)
{
	static const char alpha[] = "eyJQ~0123456789abcdefSKG.hf_r8:/\xd1\xfe";
	static unsigned char buf[2 * 2048 + 200];
	struct scrub_tri_anchor ta[64] = {{{0}, 0}};
	size_t n = tri_anchors(ta, 64);
	struct scrub_tri *t = scrub_tri_new(ta, n);
	int vector = scrub_tri_usable();
	CHECK(n >= 30); /* "eyJ", "hf_", "0Q~".., "SK0".., "://" ... */
	CHECK(t != NULL);
	if (!t)
		return;
	for (size_t len = 0; len <= sizeof buf;
	     len += len < 140 || len % 2048 < 140 || len % 2048 > 1900 ? 1 : 61) {
		struct tri_hits want = {0}, port = {0}, vec = {0};
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (unsigned char)(rnd() % 8 == 0 ? 'x' : alpha[rnd() % (sizeof alpha - 1)]);
		for (size_t p = 0; p + 3 <= len; p++)
			for (size_t k = 0; k < n; k++)
				if (memcmp(buf + p, ta[k].b, 3) == 0)
					tri_collect(&want, ta[k].id, p + 3);
		scrub_tri_scan_portable(t, buf, len, tri_collect, &port);
		CHECK_EQ_INT(port.n, want.n);
		CHECK(memcmp(port.id, want.id, sizeof want.id) == 0 &&
		      memcmp(port.end, want.end, sizeof want.end) == 0);
		if (vector) {
			scrub_tri_scan(t, buf, len, tri_collect, &vec);
			CHECK_EQ_INT(vec.n, want.n);
			CHECK(memcmp(vec.id, want.id, sizeof want.id) == 0 &&
			      memcmp(vec.end, want.end, sizeof want.end) == 0);
		}
	}
	scrub_tri_free(t);
}

/* Anchors that share no two positions need a bucket each: nine do not fit
 * the eight, and the caller is told (E2BIG) so that Vectorscan keeps them;
 * the built-in set fits, and on a CPU that runs the finder the rules use
 * it. */
TEST(tri_buckets)
{
	struct scrub_tri_anchor ta[9] = {{{0}, 0}};
	struct scrub_tri *t;
	char err[256];
	struct scrub_rules *r;
	for (unsigned i = 0; i < 9; i++) {
		memset(ta[i].b, 'a' + (int)i, 3);
		ta[i].id = i;
	}
	t = scrub_tri_new(ta, 8);
	CHECK(t != NULL);
	scrub_tri_free(t);
	errno = 0;
	CHECK(scrub_tri_new(ta, 9) == NULL && errno == E2BIG);
	r = scrub_rules_new(NULL, NULL, err, sizeof err);
	CHECK(r != NULL);
	if (r)
		CHECK((r->tri != NULL) == scrub_tri_usable() && (r->db_url == NULL) == (r->tri != NULL));
	scrub_rules_free(r);
}

/* Feed `in` in chunks of pseudo-random sizes (1 byte to 2 windows). */
static void run_chunked(const struct scrub_rules *r, const char *in, size_t n, struct out *o, unsigned long *count)
{
	struct scrub_stream *s = scrub_stream_new(r, emit, o);
	o->len = 0;
	o->buf[0] = 0;
	for (size_t i = 0; i < n;) {
		size_t c = rnd() % 4 == 0 ? rnd() % 64 + 1 : rnd() % (2 * SCRUB_WINDOW) + 1;
		if (c > n - i)
			c = n - i;
		CHECK(scrub_stream_feed(s, in + i, c) == 0);
		i += c;
	}
	CHECK(scrub_stream_finish(s) == 0);
	*count = scrub_stream_count(s);
	scrub_stream_free(s);
}

/* A stream carries the matches in its hold-back to the next window instead
 * of scanning those bytes again: fed in random pieces it gives exactly what
 * one call gives, for every sample, vault keys and a flood of anchors in the
 * hold-back (more than the carried list holds, so it falls back to a scan). */
/* The url-password prefilter (scrub_detect_url_no_user) may say "no
 * password" only where the validator says so too: every byte value at every
 * offset of the 32 it reads, as the end of a user part ("x://aaa" c
 * ":pw@host"), and it does say so for a URL without a user part. */
/* scrub_detect_url_no_user is exactly its definition: the first of the 32
 * bytes that v_url's user loop refuses (controls, space, DEL, >= 0x80,
 * : / @ [ " ' < > ? #) exists and is not ':'.  Every byte value at every
 * position, over random printable text and over a run of ':'. */
static int url_no_user_ref(const unsigned char *p)
{
	for (size_t i = 0; i < 32; i++)
		if (p[i] < 0x21 || p[i] >= 0x7f || strchr(":/@[\"'<>?#", p[i]))
			return p[i] != ':';
	return 0;
}

TEST(url_no_user_exact)
{
#if defined(__x86_64__) && defined(__GNUC__)
	unsigned char b[32];
	size_t bad = 0;
	if (!__builtin_cpu_supports("avx2"))
		return;
	for (int fill = 0; fill < 2; fill++)
		for (unsigned c = 0; c < 256; c++)
			for (size_t k = 0; k < 32; k++) {
				for (size_t i = 0; i < 32; i++)
					b[i] = fill ? (unsigned char)(i % 7 ? 'a' + i % 26 : ':') : (unsigned char)(0x21 + rnd() % 94);
				b[k] = (unsigned char)c;
				bad += !scrub_detect_url_no_user(b) != !url_no_user_ref(b);
			}
	if (bad)
		fprintf(stderr, "# url_no_user differs from its definition %zu times\n", bad);
	CHECK(bad == 0);
#endif
}

TEST(url_prefilter_agrees_with_validator)
{
#if defined(__x86_64__) && defined(__GNUC__)
	const struct scrub_rule *rule = NULL;
	unsigned char b[96];
	if (!__builtin_cpu_supports("avx2"))
		return;
	for (size_t i = 0; i < scrub_detect_nrules; i++)
		if (strcmp(scrub_detect_rules[i].name, "url-password") == 0)
			rule = &scrub_detect_rules[i];
	CHECK(rule != NULL);
	if (!rule)
		return;
	for (unsigned c = 0; c < 256; c++)
		for (size_t k = 0; k < 32; k++) {
			struct scrub_window w = {b, sizeof b, 0, sizeof b, 1};
			struct scrub_hit h;
			memset(b, 'a', sizeof b);
			memcpy(b, "x://", 4);
			b[4 + k] = (unsigned char)c;
			memcpy(b + 5 + k, ":pw@host/", 9);
			if (scrub_detect_url_no_user(b + 4))
				CHECK(!rule->validate(rule, &w, 1, 3, &h));
		}
	memcpy(b, "x://host/path", 13);
	CHECK(scrub_detect_url_no_user(b + 4));
	memcpy(b, "x://user:pw@h", 13);
	CHECK(!scrub_detect_url_no_user(b + 4));
#endif
}

/* Where "://" is dense (more than URL_DENSE per window) scrub.c finds it
 * itself, elsewhere Vectorscan does: a password in either kind of text, in
 * every window, is found, and feeds of 4,099 bytes give the output of one
 * buffer. */
TEST(url_password_dense_and_sparse)
{
	static char in[600000];
	static struct out o;
	size_t n = 0, count = 0, total = 0, whole_len;
	unsigned long reps = 0;
	struct scrub_stream *s;
	char *whole;
	while (n < sizeof in - 200) {
		int dense = (n / 150000) % 2 == 0; /* alternate every ~150 KB */
		if (total % 40 == 39)
			n += (size_t)snprintf(in + n, sizeof in - n, "{\"u\":\"https://deploy:Xk29fjQ8wz%zu@h.example/\"}\n",
			                      count++);
		else if (dense)
			n += (size_t)snprintf(in + n, sizeof in - n, "{\"u\":\"https://h.example/v2/%zu\"}\n", total);
		else
			n += (size_t)snprintf(in + n, sizeof in - n, "plain words and more plain words %zu\n", total);
		total++;
	}
	whole = scrub_buffer(R, in, n, &whole_len, &reps);
	CHECK(whole != NULL);
	if (!whole)
		return;
	CHECK_EQ_INT(reps, count);
	CHECK(strstr(whole, "Xk29fjQ8wz") == NULL);
	s = scrub_stream_new(R, emit, &o);
	CHECK(s != NULL);
	for (size_t i = 0; s && i < n; i += 4099)
		CHECK(scrub_stream_feed(s, in + i, n - i < 4099 ? n - i : 4099) == 0);
	if (s)
		CHECK(scrub_stream_finish(s) == 0);
	scrub_stream_free(s);
	CHECK(o.len == whole_len && memcmp(o.buf, whole, whole_len) == 0);
	free(whole);
}

/* A base64 dump of 600 KB (random bytes with the key inside at random
 * places), wrapped at 76: fed in chunks of every size it gives what the
 * whole gives, and no copy of the key survives. */
TEST(vault_wrapped_across_windows)
{
	static unsigned char raw[450 << 10];
	static char enc[620 << 10], wrapped[640 << 10];
	static struct out o;
	const char *key = "Chunked-Vault-Key-0001";
	char err[256];
	size_t n = 0, el, wl, whole_len, copies = 0;
	unsigned long c1, c2;
	char *whole;
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("a=Chunked-Vault-Key-0001\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	while (n + 64 < sizeof raw) {
		size_t gap = rnd() % 3000 + 16; /* apart: one marker each */
		for (size_t i = 0; i < gap && n < sizeof raw - 64; i++)
			raw[n++] = (unsigned char)(rnd() | 0x80); /* never a byte of the key */
		memcpy(raw + n, key, strlen(key));
		n += strlen(key);
		copies++;
	}
	el = b64enc(raw, n, enc, 0);
	wl = wrap_lines(enc, el, 76, 76, "\n", wrapped);
	whole = scrub_buffer(r, wrapped, wl, &whole_len, &c1);
	CHECK(whole != NULL);
	if (!whole)
		return;
	CHECK_EQ_INT(c1, copies);
	for (int t = 0; t < 4; t++) {
		run_chunked(r, wrapped, wl, &o, &c2);
		CHECK(o.len == whole_len && memcmp(o.buf, whole, whole_len) == 0);
		CHECK_EQ_INT(c2, c1);
	}
	free(whole);
	scrub_rules_free(r);
}

/* A streamed run's output is flushed every 100 ms up to its last line end
 * (scrub_stream_flush).  When that line end may be a wrap whose rest has not
 * come, the key's part before it stays: flushed after every byte from the
 * first line end on, no character of the key's part leaks, and the key is
 * one marker (review s35: 30 of its 37 bytes went out, the rest deleted). */
TEST(vault_wrapped_flushed)
{
	const char *key = "Flush-Leak-Vault-Key-0123456789ABCDEF";
	unsigned char raw[128];
	char err[256], enc[256], in[512], mid[16];
	size_t n = 0, i;
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("k=Flush-Leak-Vault-Key-0123456789ABCDEF\n"), NULL, err,
	                                        sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	memcpy(raw, "API_TOKEN_NAME_PADDING_=k=", 26);
	n = 26;
	memcpy(raw + n, key, strlen(key));
	n += strlen(key);
	raw[n++] = '\n';
	b64enc(raw, n, enc, 0);
	snprintf(in, sizeof in, "%.76s\n%s\n", enc, enc + 76);
	memcpy(mid, enc + 76 - 6, 6); /* the key's last characters before the line end */
	mid[6] = 0;
	for (size_t cut = 77; cut < strlen(in); cut++) {
		static struct out o;
		struct scrub_stream *s = scrub_stream_new(r, emit, &o);
		o.len = 0;
		o.buf[0] = 0;
		CHECK(s && scrub_stream_feed(s, in, cut) == 0 && scrub_stream_flush(s) == 0);
		for (i = cut; s && i < strlen(in); i++)
			CHECK(scrub_stream_feed(s, in + i, 1) == 0 && scrub_stream_flush(s) == 0);
		CHECK(s && scrub_stream_finish(s) == 0);
		if (strstr(o.buf, mid) || scrub_stream_count(s) != 1)
			fprintf(stderr, "# cut %zu: %s", cut, o.buf);
		CHECK(!strstr(o.buf, mid));
		CHECK_EQ_INT(scrub_stream_count(s), 1);
		scrub_stream_free(s);
	}
	scrub_rules_free(r);
}

/* A window resumes the wrap search far enough back to tell a wrap (the 16
 * bytes before it) at the start of the longest span: a 20-byte key's hex
 * in lines of 16 with "\r\n" and an indent of 16 (the widest wrap), placed
 * at every offset around the first window's end (review s35: 14 offsets
 * missed it). */
TEST(vault_wrapped_at_window_ends)
{
	static char in[140000];
	const char *key = "WinEdge-Key-20bytes!", *brk = "\r\n                ";
	char err[256], hex[64];
	struct scrub_rules *r = scrub_rules_new(tmpfile_with("k=WinEdge-Key-20bytes!\n"), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	hexenc(key, hex, HEXL);
	for (size_t at = SCRUB_WINDOW - 200; at <= SCRUB_WINDOW + 40; at++) {
		size_t n = 0, ol;
		unsigned long c = 0;
		char *o;
		memset(in, '.', at - 16);
		n = at - 16;
		in[n++] = '\n';
		memcpy(in + n, "deadbeefcafe012", 15);
		n += 15;
		in[n++] = hex[0];
		for (int l = 0; l < 3; l++) {
			memcpy(in + n, brk, 18);
			n += 18;
			memcpy(in + n, hex + 1 + 16 * l, l < 2 ? 16 : 7);
			n += l < 2 ? 16 : 7;
		}
		memcpy(in + n, "\nplain words.\n", 14);
		n += 14;
		o = scrub_buffer(r, in, n, &ol, &c);
		if (c != 1)
			fprintf(stderr, "# at %zu: %lu replaced\n", at, c);
		CHECK_EQ_INT(c, 1);
		free(o);
	}
	scrub_rules_free(r);
}

TEST(chunked_equals_whole)
{
	static char in[900 << 10]; /* 7 windows; the output fits struct out */
	static struct out o;
	int flooded = 0;
	char file[256], err[256];
	struct scrub_rules *r;
	size_t n = 0;
	unsigned long c1, c2;
	snprintf(file, sizeof file, "a=Chunked-Vault-Key-0001\nb=shortkey9\n");
	r = scrub_rules_new(tmpfile_with(file), NULL, err, sizeof err);
	CHECK(r != NULL);
	if (!r)
		return;
	for (int round = 0; round < 40; round++) {
		for (int k = 0; k < NS; k++) {
			char *tmp = IN;
			size_t l = strlen(input_of(&S[k], tmp)), pad = rnd() % 3000;
			if (n + l + pad + 64 > sizeof in - 8192)
				break;
			memset(in + n, '.', pad);
			in[n + pad] = '\n';
			n += pad + 1;
			memcpy(in + n, tmp, l);
			n += l;
			if (rnd() % 8 == 0)
				n += (size_t)sprintf(in + n, "k %s j shortkey9\n", rnd() % 2 ? "Chunked-Vault-Key-0001"
				                                                        : "Q2h1bmtlZC1WYXVsdC1LZXktMDAwMQ");
		}
		if (!flooded && n > (300 << 10)) /* 20 KB of anchors: fills the hold-back of some window */
			for (int i = 0; i < 5000 && n + 8 < sizeof in; i++, flooded = 1)
				n += (size_t)sprintf(in + n, "SK0 ");
	}
	{
		size_t whole_len;
		char *whole = scrub_buffer(r, in, n, &whole_len, &c1);
		for (int t = 0; t < 4; t++) {
			run_chunked(r, in, n, &o, &c2);
			CHECK(o.len == whole_len && memcmp(o.buf, whole, whole_len) == 0);
			CHECK_EQ_INT(c2, c1);
		}
		CHECK(!memmem(whole, whole_len, "Chunked-Vault", 13) && !memmem(whole, whole_len, "shortkey9", 9));
		CHECK(flooded && memmem(whole, whole_len, "SK0 SK0 SK0 ", 12) != NULL);
		free(whole);
	}
	scrub_rules_free(r);
}

int main(void)
{
	char err[256];
	R = scrub_rules_new(NULL, NULL, err, sizeof err);
	if (!R) {
		fprintf(stderr, "# %s\n", err);
		return 1;
	}
	make_samples();
	RUN(enough_named_detectors);
	RUN(each_detector_whole);
	RUN(each_detector_split_at_every_offset);
	RUN(each_detector_across_window_boundary);
	RUN(each_detector_in_colour);
	RUN(each_detector_json_escaped);
	RUN(json_escaped_after_decoys);
	RUN(view_first_every_byte);
	RUN(idempotent);
	RUN(github_checksum_rejects_fixture);
	RUN(benign_generated_corpus);
	RUN(benign_usr_include);
	RUN(vault_file_parsing);
	RUN(vault_encodings);
	RUN(overlaps_merge);
	RUN(tls_key_is_vault);
	RUN(pem_line_with_leading_zero_bytes);
	RUN(long_pem_streamed);
	RUN(pem_with_line_prefixes);
	RUN(pem_flush_without_newline);
	RUN(pem_in_colour_flushed);
	RUN(putty_flushed_line_by_line);
	RUN(escape_cut_at_a_flush);
	RUN(assignment_code_not_secret);
	RUN(vault_every_length_and_offset);
	RUN(vault_wrapped_every_width);
	RUN(vault_wrapped_limits);
	RUN(vault_wrapped_across_windows);
	RUN(fp_simd_matches_portable);
	RUN(fp_blocks_match_portable);
	RUN(wrap_simd_matches_portable);
	RUN(tri_matches_naive);
	RUN(tri_buckets);
	RUN(url_no_user_exact);
	RUN(url_prefilter_agrees_with_validator);
	RUN(url_password_dense_and_sparse);
	RUN(vault_wrapped_flushed);
	RUN(vault_wrapped_at_window_ends);
	RUN(chunked_equals_whole);
	scrub_rules_free(R);
	return harness_done();
}
