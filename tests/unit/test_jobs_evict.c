/*
 * test_jobs_evict.c - when the front's table of jobs is full (JOBS_TOTAL_MAX
 * jobs, or JOBS_KEPT_MAX bytes of output kept by finished ones), the job that
 * goes early is the oldest finished one of the certificate that holds the
 * most (jobs, or bytes when those are short): a certificate that fills the
 * table pushes out its own jobs, never another's that holds fewer.  Before, the oldest finished job of any
 * certificate went, so one client could make another's job 404 at will.
 */
#include "harness.h"
#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>

static struct job *add(struct jobs *j, unsigned n, const char *owner, size_t cap)
{
	char id[33], why[256] = "";
	snprintf(id, sizeof(id), "%032x", n);
	struct job *b = jobs_add(j, id, owner, "cn", "build", cap, 60, NULL, NULL, why, sizeof(why));
	if (!b)
		fprintf(stderr, "# jobs_add: %s\n", why);
	return b;
}

static bool exists(struct jobs *j, unsigned n, const char *owner)
{
	char id[33];
	snprintf(id, sizeof(id), "%032x", n);
	char *s = jobs_status(j, id, owner);
	free(s);
	return s != NULL;
}

TEST(a_full_table_evicts_the_biggest_holder)
{
	struct jobs *j = jobs_new(JOBS_TOTAL_MAX, 0, 600);
	/* B's one job finished first: the oldest of all. */
	struct job *b = add(j, 0, "B", 1024);
	CHECK(b != NULL);
	job_finish(b, "{}", NULL);
	for (unsigned i = 1; i < JOBS_TOTAL_MAX; i++) {
		struct job *a = add(j, i, "A", 1024);
		CHECK(a != NULL);
		if (a)
			job_finish(a, "{}", NULL);
	}
	/* Full: A's next job pushes out A's oldest, not B's. */
	CHECK(add(j, JOBS_TOTAL_MAX, "A", 1024) != NULL);
	CHECK(exists(j, 0, "B"));
	CHECK(!exists(j, 1, "A"));
	CHECK(exists(j, 2, "A"));
	jobs_free(j);
}

TEST(kept_output_is_bounded)
{
	/* Finished jobs that kept 1 MiB each: past JOBS_KEPT_MAX the oldest go. */
	struct jobs *j = jobs_new(JOBS_TOTAL_MAX, 0, 600);
	static char mib[1 << 20];
	unsigned n = (unsigned)(JOBS_KEPT_MAX >> 20) + 8;
	for (unsigned i = 0; i < n; i++) {
		struct job *a = add(j, i, "A", 2u << 20);
		CHECK(a != NULL);
		if (!a)
			break;
		job_output(a, 0, mib, sizeof(mib));
		job_finish(a, "{}", NULL);
	}
	CHECK(!exists(j, 0, "A"));
	CHECK(exists(j, n - 1, "A"));
	jobs_free(j);
}

/* The bytes budget is what is short: the certificate that keeps the most
 * bytes gives them back, not the one with the most (small) jobs.  Before,
 * A's ten small jobs went down to one to make room for B's big ones. */
TEST(a_full_budget_evicts_the_biggest_holder_of_bytes)
{
	struct jobs *j = jobs_new(JOBS_TOTAL_MAX, 0, 600);
	static char mib[1 << 20];
	for (unsigned i = 0; i < 10; i++) {
		struct job *a = add(j, i, "A", 1024);
		CHECK(a != NULL);
		if (a) {
			job_output(a, 0, "small", 5);
			job_finish(a, "{}", NULL);
		}
	}
	/* B: three jobs of 100 MiB, fewer jobs than A but past the budget. */
	for (unsigned i = 0; i < 3; i++) {
		struct job *b = add(j, 100 + i, "B", 256u << 20);
		CHECK(b != NULL);
		if (!b)
			break;
		for (int m = 0; m < 100; m++)
			job_output(b, 0, mib, sizeof(mib));
		job_finish(b, "{}", NULL);
	}
	CHECK(add(j, 99, "A", 1024) != NULL);
	for (unsigned i = 0; i < 10; i++)
		CHECK(exists(j, i, "A"));
	CHECK(!exists(j, 100, "B"));
	CHECK(exists(j, 101, "B"));
	CHECK(exists(j, 102, "B"));
	jobs_free(j);
}

int main(void)
{
	RUN(a_full_budget_evicts_the_biggest_holder_of_bytes);
	RUN(a_full_table_evicts_the_biggest_holder);
	RUN(kept_output_is_bounded);
	return harness_done();
}
