/*
 * harness.h - the unit-test harness: TAP-like lines the runner counts.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_EQ_INT(a, b); CHECK_STR(s, "x"); }
 *   int main(void) { RUN(name); return harness_done(); }
 *
 * Each RUN prints "ok - name" or "not ok - name" (after the failing checks'
 * file:line messages); harness_done() returns 1 when any test failed.
 */
#ifndef SHARNESS_HARNESS_H
#define SHARNESS_HARNESS_H

#include <stdio.h>
#include <string.h>

static int harness_failed_tests;
static int harness_current_failed;

#define TEST(name) static void test_##name(void)
#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "# %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			harness_current_failed = 1;                                      \
		}                                                                        \
	} while (0)
#define CHECK_EQ_INT(a, b)                                                               \
	do {                                                                             \
		long long va_ = (long long)(a), vb_ = (long long)(b);                    \
		if (va_ != vb_) {                                                        \
			fprintf(stderr, "# %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, va_, vb_); \
			harness_current_failed = 1;                                      \
		}                                                                        \
	} while (0)
#define CHECK_STR(a, b)                                                                  \
	do {                                                                             \
		const char *sa_ = (a), *sb_ = (b);                                       \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                             \
			fprintf(stderr, "# %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
			        sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");             \
			harness_current_failed = 1;                                      \
		}                                                                        \
	} while (0)
#define CHECK_CONTAINS(hay, needle)                                                      \
	do {                                                                             \
		const char *h_ = (hay), *n_ = (needle);                                  \
		if (!h_ || !strstr(h_, n_)) {                                            \
			fprintf(stderr, "# %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
			        h_ ? h_ : "(null)", n_);                                 \
			harness_current_failed = 1;                                      \
		}                                                                        \
	} while (0)
#define RUN(name)                                                                        \
	do {                                                                             \
		harness_current_failed = 0;                                              \
		test_##name();                                                           \
		printf("%s - %s\n", harness_current_failed ? "not ok" : "ok", #name);   \
		fflush(stdout);                                                          \
		harness_failed_tests += harness_current_failed;                          \
	} while (0)

static inline int harness_done(void)
{
	return harness_failed_tests ? 1 : 0;
}

#endif
