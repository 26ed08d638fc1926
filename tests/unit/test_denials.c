/*
 * test_denials.c - the reply's denial details (denials.c) and the cut they
 * rely on (utf8_cut, utf8.c).  A detail quotes what the run chose - a path,
 * a socket's address, a host name - so it must leave the front as the
 * run's output does: filtered, valid UTF-8, and never cut inside a
 * character (SPEC §15.3; a stray byte makes the client refuse the whole
 * reply, the command's output and exit code with it).
 */
#include "harness.h"
#include "rules_fixture.h"
#include "denials.h"
#include "scrub.h"
#include "utf8.h"

#include <stdlib.h>
#include <unistd.h>

#define SECRET "sk-vault-unit-secret-13579"

static struct scrub_rules *R;

TEST(cut_keeps_whole_characters)
{
	const char *s = "a\xc3\xa9"
			"b\xe2\x94\x80"
			"c\xf0\x9f\x98\x80"; /* a é b ─ c 😀: 1+2+1+3+1+4 bytes */
	size_t len = strlen(s);
	/* Where each cut lands: before the character it would split. */
	static const size_t want[] = {0, 1, 1, 3, 4, 4, 4, 7, 8, 8, 8, 8, 12};
	for (size_t max = 0; max <= len; max++)
		CHECK_EQ_INT(utf8_cut(s, len, max), want[max]);
	CHECK_EQ_INT(utf8_cut(s, len, len + 5), len); /* nothing to cut */
	/* Bytes that are no UTF-8 are left to utf8_clean. */
	CHECK_EQ_INT(utf8_cut("ab\xff\xff", 4, 3), 3);
	CHECK_EQ_INT(utf8_cut("\x80\x80\x80\x80\x80", 5, 4), 4);
	/* A lead byte whose character is broken anyway is not searched for. */
	CHECK_EQ_INT(utf8_cut("a\xe2\x94z", 4, 2), 2);
}

/* Every cut of a valid string stays valid. */
TEST(cut_of_valid_text_is_valid)
{
	const char *s = "\xc3\xa9\xe2\x94\x80x\xf0\x9f\x98\x80\xc3\xa9\xe2\x94\x80";
	size_t len = strlen(s);
	for (size_t max = 0; max <= len; max++) {
		size_t n = utf8_cut(s, len, max);
		CHECK(n <= max);
		CHECK(utf8_valid(s, n));
		CHECK(max - n < 4);
	}
}

static void collect(struct run_denials *d, struct privsep_exit *ex, const char (*proxy)[PROXY_DENIAL_DETAIL], size_t n_proxy)
{
	static struct profile p;
	struct denial_facts f = {.profile = &p, .ex = ex, .proxy = proxy, .n_proxy = n_proxy, .scrub = R};
	denials_collect(d, &f);
}

static void set_denial(struct privsep_exit *ex, size_t i, uint32_t kind, const char *detail, size_t len)
{
	ex->denied[i].kind = kind;
	memcpy(ex->denied[i].detail, detail, len);
	if (len < sizeof(ex->denied[i].detail))
		ex->denied[i].detail[len] = '\0';
	ex->n_denied++;
}

/* A path with a byte that is no UTF-8, as `mkdir $'d\xff/.git'` gives it. */
TEST(detail_with_a_stray_byte_is_valid_utf8)
{
	struct privsep_exit ex = {0};
	struct run_denials d;
	const char raw[] = "mkdir d\xff/.git: it would create or change a .git";
	set_denial(&ex, 0, PRIVSEP_DENIAL_GIT, raw, sizeof(raw) - 1);
	collect(&d, &ex, NULL, 0);
	CHECK_EQ_INT(d.n, 1);
	CHECK_STR(d.v[0].lock, "git");
	CHECK_STR(d.v[0].detail, "refused mkdir d\xef\xbf\xbd/.git: it would create or change a .git");
	CHECK(utf8_valid(d.v[0].detail, strlen(d.v[0].detail)));
	CHECK_EQ_INT(d.filtered, 0);
}

/* A secret in a path, a socket's address or a host name is filtered. */
TEST(detail_is_filtered)
{
	struct privsep_exit ex = {0};
	struct run_denials d;
	const char git[] = "mkdir " SECRET "/.git: it would create or change a .git";
	const char sock[] =
	    "a connect to the unix socket /ws/" SECRET ".sock: its listener is not this run's";
	set_denial(&ex, 0, PRIVSEP_DENIAL_GIT, git, sizeof(git) - 1);
	set_denial(&ex, 1, PRIVSEP_DENIAL_UNIX, sock, sizeof(sock) - 1);
	char proxy[1][PROXY_DENIAL_DETAIL] = {"host '" SECRET
			      ".example' port 443 is not on the allowlist of profile 'build'"};
	collect(&d, &ex, (const char(*)[PROXY_DENIAL_DETAIL])proxy, 1);
	CHECK_EQ_INT(d.n, 3);
	for (size_t i = 0; i < d.n; i++) {
		CHECK(strstr(d.v[i].detail, SECRET) == NULL);
		CHECK(strstr(d.v[i].detail, "unit-secret") == NULL);
		CHECK_CONTAINS(d.v[i].detail, "[filtered: vault key]");
	}
	CHECK_STR(d.v[0].detail,
		  "the egress proxy refused: host '[filtered: vault key].example' port 443 is not on "
		  "the allowlist of profile 'build'");
	CHECK_EQ_INT(d.filtered, 3);
}

/* The supervisor's field is full (no NUL) and ends inside a character;
 * the detail is cut again at its own size, and the count of further
 * refusals is appended: each cut falls between characters. */
TEST(detail_cut_between_characters)
{
	struct privsep_exit ex = {0};
	struct run_denials d;
	char raw[sizeof(ex.denied[0].detail)];
	memcpy(raw, "mkdir x", 7);
	for (size_t i = 7; i + 1 < sizeof(raw); i += 2)
		memcpy(raw + i, "\xc3\xa9", 2);
	raw[sizeof(raw) - 1] = '\xc3'; /* the first byte of an é whose second the field had no room for */
	set_denial(&ex, 0, PRIVSEP_DENIAL_GIT, raw, sizeof(raw));
	collect(&d, &ex, NULL, 0);
	CHECK_EQ_INT(d.n, 1);
	CHECK(utf8_valid(d.v[0].detail, strlen(d.v[0].detail)));

	/* 4 distinct kept, 9 in all: " (and 5 more refusals)" after a detail
	 * that is all stray bytes, each U+FFFD (3 bytes) once clean: past the
	 * detail's size, so both the cut and the room for the count apply. */
	memset(&ex, 0, sizeof(ex));
	char wide[sizeof(ex.denied[0].detail)];
	memset(wide, 0xff, sizeof(wide));
	memcpy(wide, "mkdir ", 6);
	wide[sizeof(wide) - 1] = '\0';
	for (size_t i = 0; i < PRIVSEP_DENIALS_MAX; i++) {
		wide[6] = (char)('a' + i); /* distinct */
		set_denial(&ex, i, PRIVSEP_DENIAL_GIT, wide, strlen(wide));
	}
	ex.n_denied = 9;
	collect(&d, &ex, NULL, 0);
	const char *last = d.v[d.n - 1].detail;
	CHECK_EQ_INT(d.n, PRIVSEP_DENIALS_MAX);
	CHECK(utf8_valid(d.v[0].detail, strlen(d.v[0].detail)));
	CHECK_EQ_INT(strlen(d.v[0].detail), 8 + 1 + 3 * 76); /* "refused " "a", 76 whole U+FFFD */
	CHECK(utf8_valid(last, strlen(last)));
	CHECK(strlen(last) < sizeof(d.v[0].detail));
	size_t ll = strlen(last), sl = strlen(" (and 5 more refusals)");
	CHECK(ll >= sl && strcmp(last + ll - sl, " (and 5 more refusals)") == 0);
}

int main(void)
{
	R = fixture_rules(SECRET "\n");
	if (!R)
		return 1;
	RUN(cut_keeps_whole_characters);
	RUN(cut_of_valid_text_is_valid);
	RUN(detail_with_a_stray_byte_is_valid_utf8);
	RUN(detail_is_filtered);
	RUN(detail_cut_between_characters);
	scrub_rules_free(R);
	return harness_done();
}
