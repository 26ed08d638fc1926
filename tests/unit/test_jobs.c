/*
 * test_jobs.c - reading a job's output from offsets (daemon/front/jobs.c,
 * GET /v0/jobs/{id}/output?since=N): a reader that follows `next` must move
 * on with every read and reach the end, also when a UTF-8 character lies
 * across the end of the kept head (its rest dropped by the cap: U+FFFD) or
 * across the end of one read (its rest kept: held back, whole next time).
 */
#include "harness.h"
#include "jobs.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static const char *ID = "0123456789abcdef0123456789abcdef";
static const char *FP = "aa";

static void nokill(void *arg)
{
	(void)arg;
}

/* A finished job with `out` as its stdout, under the output cap `cap`. */
static struct jobs *job_with(const char *out, size_t len, size_t cap)
{
	struct jobs *j = jobs_new(8, 0, 600);
	char why[200] = "";
	struct job *b = jobs_add(j, ID, FP, "cn", "analyse", cap, 60, nokill, NULL, why, sizeof(why));
	job_output(b, 0, out, len);
	job_finish(b, "{\"exit\":0}", NULL);
	return j;
}

/* Follows `next` from 0: every read's data, joined (malloc'd), or NULL when
 * a read did not move on while it said "more", or the end was not reached
 * in 20 reads. */
static char *read_all(struct jobs *j, size_t *reads)
{
	uint64_t since = 0;
	size_t len = 0;
	char *all = calloc(1, 1);
	bool more = true;
	for (*reads = 0; more && *reads < 20 && all; (*reads)++) {
		char *o = jobs_output(j, ID, FP, 0, since);
		cJSON *r = cJSON_Parse(o);
		free(o);
		const char *data = cJSON_GetStringValue(cJSON_GetObjectItem(r, "data"));
		uint64_t next = (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "next"));
		more = cJSON_IsTrue(cJSON_GetObjectItem(r, "more"));
		bool moved = next > since;
		if (data) {
			char *grown = realloc(all, len + strlen(data) + 1);
			if (!grown) {
				free(all);
				cJSON_Delete(r);
				return NULL;
			}
			memcpy(grown + len, data, strlen(data) + 1);
			len += strlen(data);
			all = grown;
		}
		cJSON_Delete(r);
		if (more && !moved) {
			free(all);
			return NULL;
		}
		since = next;
	}
	if (more) {
		free(all);
		return NULL;
	}
	return all;
}

/* Cap 1024: head 512, tail 512.  `pre` 'a's, ten copies of the character
 * `ch`, 2000 'b's: a character lies across byte 512 for pre 509-511. */
TEST(character_across_the_heads_end)
{
	static const char *chars[] = {"\xc3\xa9", "\xe2\x94\x80", "\xf0\x9f\x98\x80"};
	char buf[4096];
	for (size_t c = 0; c < 3; c++)
		for (size_t pre = 505; pre <= 512; pre++) {
			size_t n = pre, cl = strlen(chars[c]);
			memset(buf, 'a', pre);
			for (int i = 0; i < 10; i++, n += cl)
				memcpy(buf + n, chars[c], cl);
			memset(buf + n, 'b', 2000);
			n += 2000;
			struct jobs *j = job_with(buf, n, 1024);
			size_t reads;
			char *all = read_all(j, &reads);
			CHECK(all != NULL);
			if (!all)
				fprintf(stderr, "# stuck: a %zu-byte character after %zu bytes\n", cl, pre);
			CHECK(reads <= 2);
			/* The head's whole characters, U+FFFD for a cut one, the tail. */
			size_t whole = (512 - pre) / cl;
			bool cut = pre + whole * cl < 512;
			CHECK(all && strspn(all, "a") == pre);
			const char *after = all ? all + pre + whole * cl : NULL;
			CHECK(after && (cut ? strncmp(after, "\xef\xbf\xbd", 3) == 0 : after[0] == 'b'));
			CHECK(all && strlen(all) >= 512 && strspn(all + strlen(all) - 512, "b") == 512);
			CHECK(all && utf8_valid(all, strlen(all)));
			free(all);
			jobs_free(j);
		}
}

/* Cap 4 MiB: the head (2 MiB) is read in two reads of JOB_READ_MAX; a
 * character across the first read's end is kept whole, in the second. */
TEST(character_across_a_reads_end_stays_whole)
{
	size_t n = 3 * JOB_READ_MAX;
	char *buf = malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = 'a';
	buf[JOB_READ_MAX - 1] = '\xe2'; /* U+2500 across the first read's end */
	buf[JOB_READ_MAX] = '\x94';
	buf[JOB_READ_MAX + 1] = '\x80';
	struct jobs *j = job_with(buf, n, 4u * 1024 * 1024);
	size_t reads;
	char *all = read_all(j, &reads);
	CHECK(all != NULL);
	CHECK(all && strlen(all) == n);
	CHECK(all && memcmp(all + JOB_READ_MAX - 1, "\xe2\x94\x80", 3) == 0);
	CHECK(all && !strstr(all, "\xef\xbf\xbd"));
	free(all);
	free(buf);
	jobs_free(j);
}

/* One read of stdout from `since`: its data, next and more as expected. */
static void check_read(struct jobs *j, uint64_t since, const char *data, uint64_t next, bool more)
{
	char *o = jobs_output(j, ID, FP, 0, since);
	cJSON *r = cJSON_Parse(o);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(r, "data")), data);
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "next")), next);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r, "more")) == more);
	cJSON_Delete(r);
	free(o);
}

/* A running job whose output so far ends inside a character: the read
 * holds it back (no U+FFFD) and says no "more" (a follower waits); once the
 * rest came, the next read has it whole. */
TEST(running_jobs_last_character_waits_for_its_rest)
{
	struct jobs *j = jobs_new(8, 0, 600);
	char why[200] = "";
	struct job *b = jobs_add(j, ID, FP, "cn", "analyse", 4096, 60, nokill, NULL, why, sizeof(why));
	job_output(b, 0, "a\xe2\x94", 3);
	check_read(j, 0, "a", 1, false);
	check_read(j, 1, "", 1, false); /* nothing new: the same answer, nothing read */
	job_output(b, 0, "\x80" "b", 2);
	check_read(j, 1, "\xe2\x94\x80" "b", 5, false);
	/* Ended inside a character: its bytes go out as U+FFFD, and the end. */
	job_output(b, 0, "\xe2", 1);
	job_finish(b, "{\"exit\":0}", NULL);
	check_read(j, 5, "\xef\xbf\xbd", 6, false);
	jobs_free(j);
}

/* DELETE frees the job's max_jobs place at once, as the 429 says to do,
 * although the job reads "running" until its run's end has come in. */
TEST(a_killed_job_frees_its_place_at_once)
{
	struct jobs *j = jobs_new(1, 0, 600);
	char why[300] = "";
	const char *state = NULL;
	CHECK(jobs_add(j, ID, FP, "cn", "analyse", 4096, 60, nokill, NULL, why, sizeof(why)) != NULL);
	CHECK(!jobs_may_start(j, FP, 0, why, sizeof(why)));
	CHECK_EQ_INT(jobs_kill(j, ID, FP, &state), 0);
	CHECK_STR(state, "killed");
	why[0] = '\0';
	CHECK(jobs_may_start(j, FP, 0, why, sizeof(why)));
	jobs_free(j);
}

/* One certificate's jobs leave a run slot free (review s37 front 4):
 * max_jobs 8 with max_runs 3 is 2; max_jobs below max_runs stands. */
TEST(a_certificates_jobs_leave_a_run_slot)
{
	struct jobs *j = jobs_new(8, 3, 600);
	char why[300] = "";
	CHECK(jobs_may_start(j, FP, 1, why, sizeof(why)));
	CHECK(!jobs_may_start(j, FP, 2, why, sizeof(why)));
	CHECK_CONTAINS(why, "one fewer than max_runs");
	CHECK(jobs_may_start(j, "another", 1, why, sizeof(why)));
	jobs_free(j);
	j = jobs_new(2, 3, 600);
	why[0] = '\0';
	CHECK(!jobs_may_start(j, FP, 2, why, sizeof(why)));
	CHECK_CONTAINS(why, "the most max_jobs allows");
	jobs_free(j);
}

int main(void)
{
	RUN(a_killed_job_frees_its_place_at_once);
	RUN(a_certificates_jobs_leave_a_run_slot);
	RUN(character_across_the_heads_end);
	RUN(character_across_a_reads_end_stays_whole);
	RUN(running_jobs_last_character_waits_for_its_rest);
	return harness_done();
}
