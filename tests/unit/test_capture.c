/*
 * test_capture.c - the secret filter in front of the bounded capture (SPEC §7:
 * "no fragment of a secret long enough to matter (8+ characters) ever
 * reaches the reply", also across the head/tail truncation point).
 *
 * The daemon wires them as execute.c does: a scrub_stream whose emitter is
 * capture_append, so the head/tail cut (capture.c) only ever sees filtered
 * bytes.  Here a secret is moved byte by byte across both cuts - the end of
 * the head and the start of the tail - with the input fed in uneven pieces,
 * and no 8-character piece of it may be in capture_result.  The same input
 * captured without the filter does leave pieces: the check can fail.
 */
#include "harness.h"
#include "rules_fixture.h"
#include "capture.h"
#include "scrub.h"
#include "scrub_detect.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define CAP 4096 /* head 2048 bytes, tail 2048 bytes */

static struct scrub_rules *R;

static uint64_t rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 32);
}

/* Whether any 8 consecutive bytes of secret appear in buf. */
static int has_fragment(const char *buf, size_t n, const char *secret)
{
	size_t sl = strlen(secret);
	for (size_t i = 0; i + 8 <= sl; i++)
		if (memmem(buf, n, secret + i, 8))
			return 1;
	return 0;
}

/* filler + secret + filler through the filter (or not) into a capture; the
 * pieces fed are of uneven sizes as pipe reads are.  Returns the result. */
static char *capture_of(const char *in, size_t n, int filtered, size_t *len)
{
	struct capture c;
	struct scrub_stream *s = NULL;
	char *out;
	if (capture_init(&c, CAP) < 0)
		return NULL;
	if (filtered)
		s = scrub_stream_new(R, capture_append, &c);
	for (size_t i = 0; i < n;) {
		size_t k = rnd() % 700 + 1;
		if (k > n - i)
			k = n - i;
		if (s)
			scrub_stream_feed(s, in + i, k);
		else
			capture_append(&c, in + i, k);
		i += k;
	}
	if (s) {
		scrub_stream_finish(s);
		scrub_stream_free(s);
	}
	out = capture_result(&c, len);
	capture_free(&c);
	return out;
}

static void filler(char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (i % 61 == 60) ? '\n' : "the quick brown fox jumps over "[i % 31];
}

/* Move `secret` (placed as "pre secret post") so that the head cut and then
 * the tail cut fall at every byte inside it. */
static void sweep(const char *pre, const char *secret, const char *post, int *leaks_unfiltered)
{
	static char in[4 * CAP];
	size_t sl = strlen(secret), pl = strlen(pre), ql = strlen(post);
	for (int cut = 0; cut < 2; cut++)
		for (size_t d = 0; d < sl + pl + 2; d++) {
			/* cut 0: the secret starts d bytes before the head's end;
			 * cut 1: the tail (the last CAP/2 bytes) starts d bytes
			 * after the secret's start, with head+gap before it. */
			size_t before = cut == 0 ? CAP / 2 - d : CAP + 1000;
			size_t after = cut == 0 ? 3 * CAP : CAP / 2 + d - (sl + pl + ql);
			size_t n = 0, len;
			char *out;
			if (cut == 1 && CAP / 2 + d < sl + pl + ql)
				continue;
			filler(in, before);
			n = before;
			memcpy(in + n, pre, pl);
			n += pl;
			memcpy(in + n, secret, sl);
			n += sl;
			memcpy(in + n, post, ql);
			n += ql;
			filler(in + n, after);
			n += after;
			out = capture_of(in, n, 1, &len);
			CHECK(out != NULL);
			if (out && has_fragment(out, len, secret)) {
				fprintf(stderr, "# %s: fragment left with cut %d at offset %zu\n", secret, cut, d);
				CHECK(0);
			}
			free(out);
			out = capture_of(in, n, 0, &len);
			if (out && has_fragment(out, len, secret))
				(*leaks_unfiltered)++;
			free(out);
		}
}

TEST(secret_across_truncation_points)
{
	char gh[48] = "ghp_", sum[7];
	static const char B62[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int leaks = 0;
	for (int i = 0; i < 30; i++)
		gh[4 + i] = B62[rnd() % 62];
	scrub_detect_base62_crc((const unsigned char *)gh + 4, 30, sum);
	memcpy(gh + 34, sum, 7);
	sweep("token ", gh, "\n", &leaks);
	sweep(" pw=", "Capture-Vault-Key-7781-xyz", " end\n", &leaks); /* a vault key */
	sweep("key: ", "AKIAQYLPMN5HHHFPZAM2", "\n", &leaks);
	/* Without the filter the cut keeps a piece of the secret on one side
	 * or the other at almost every offset: the checks above can fail. */
	CHECK(leaks > 50);
}

int main(void)
{
	R = fixture_rules("cap=Capture-Vault-Key-7781-xyz\n");
	if (!R)
		return 1;
	RUN(secret_across_truncation_points);
	scrub_rules_free(R);
	return harness_done();
}
