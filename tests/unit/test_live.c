/*
 * test_live.c - a streamed run's event buffer (daemon/front/live.c) driven
 * as runflow.c and libmicrohttpd drive it, without a connection: the run
 * puts output while the pressure lets it, the reader takes a bit less than
 * the run writes.  The buffer's memory must follow what is unread, not what
 * was streamed; and an event the front cannot keep must end the stream with
 * an error event, never vanish from a stream that goes on.
 *
 * live.c is compiled in, its allocator wrapped: the largest block it asks
 * for is its memory, and an allocation can be made to fail.
 */
#include "harness.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static size_t largest;	    /* the largest block live.c asked for */
static int fail_after = -1; /* allocations until one fails; -1: never */

static bool should_fail(void)
{
	if (fail_after < 0)
		return false;
	return fail_after-- == 0;
}

static void *test_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	largest = n > largest ? n : largest;
	return malloc(n);
}

static void *test_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	largest = n > largest ? n : largest;
	return realloc(p, n);
}

#define malloc	test_malloc
#define realloc test_realloc
#include "../../daemon/front/live.c"
#undef malloc
#undef realloc

static bool paused;
static void pressure(void *arg, bool full)
{
	(void)arg;
	paused = full;
}

/* What the reader can take now, at most `most` bytes, appended to out
 * (NULL: counted only).  Returns the live_read result that stopped it (0
 * when `most` was reached). */
static ssize_t drain(struct live *l, char *out, size_t *out_len, size_t most)
{
	static char b[16 * 1024];
	size_t got = 0;
	for (;;) {
		size_t want = most - got < sizeof(b) ? most - got : sizeof(b);
		if (want == 0)
			return 0;
		ssize_t n = live_read(l, 0, b, want);
		if (n <= 0)
			return n;
		if (out)
			memcpy(out + *out_len, b, (size_t)n);
		*out_len += (size_t)n;
		got += (size_t)n;
	}
}

/* A reader a little slower than the run (48 KiB taken per 64 KiB put):
 * unread stays between half of LIVE_BUFFER_MAX and all of it, so the
 * buffer is never empty while the run streams 70 MiB. */
TEST(memory_follows_what_is_unread)
{
	struct live *l = live_new(pressure, NULL);
	static char chunk[64 * 1024];
	memset(chunk, 'x', sizeof(chunk));
	paused = false;
	largest = 0;
	size_t produced = 0, sent = 0;
	bool emptied = false;
	for (int it = 0; it < 1500; it++) {
		if (!paused) {
			live_output(l, 0, chunk, sizeof(chunk));
			produced += sizeof(chunk);
		}
		if (drain(l, NULL, &sent, 48 * 1024) != 0) /* nothing left unread */
			emptied = true;
	}
	live_finish(l, "{\"event\":\"exit\"}");
	CHECK_EQ_INT(drain(l, NULL, &sent, SIZE_MAX), MHD_CONTENT_READER_END_OF_STREAM);
	CHECK(!emptied);		      /* the reader never caught up */
	CHECK(produced >= 64u * 1024 * 1024); /* far more than the bound */
	CHECK(sent > produced);		      /* all of it, and the JSON around it */
	CHECK(largest <= 3u * LIVE_BUFFER_MAX);
	fprintf(stderr, "# %zu MiB streamed, the largest block was %zu KiB\n", produced >> 20, largest >> 10);
	live_release(l);
	live_gone(l);
}

/* Every byte arrives once, in order, at a reader's pace that makes the
 * pressure stop and start the run. */
TEST(bytes_arrive_whole)
{
	struct live *l = live_new(pressure, NULL);
	static char out[8 * 1024 * 1024];
	size_t out_len = 0, want = 0, events = 0;
	char piece[3000];
	bool stopped = false;
	paused = false;
	for (int it = 0; it < 1500; it++) {
		for (size_t i = 0; i < sizeof(piece); i++)
			piece[i] = (char)('a' + (want + i) % 26);
		if (!paused) {
			live_output(l, it & 1, piece, sizeof(piece));
			want += sizeof(piece);
			events++;
		}
		stopped |= paused;
		drain(l, out, &out_len, 2000);
	}
	live_finish(l, "{\"event\":\"exit\"}");
	CHECK_EQ_INT(drain(l, out, &out_len, sizeof(out) - 1 - out_len), MHD_CONTENT_READER_END_OF_STREAM);
	out[out_len] = '\0';
	/* The data fields in order make the input back. */
	size_t got = 0, lines = 0;
	bool ordered = true;
	for (char *p = out; (p = strstr(p, "\"data\":\"")); lines++) {
		p += 8;
		for (; *p != '"'; p++, got++)
			ordered &= *p == (char)('a' + got % 26);
	}
	CHECK(stopped);
	CHECK(ordered);
	CHECK_EQ_INT(got, want);
	CHECK_EQ_INT(lines, events);
	CHECK(out_len > 17 && strcmp(out + out_len - 17, "{\"event\":\"exit\"}\n") == 0);
	live_release(l);
	live_gone(l);
}

/* The front runs out of memory for one event: what was kept is sent, then
 * an error event ends the stream; the run is told to stop and nothing put
 * later (more output, the exit event) appears after the error. */
TEST(lost_event_ends_the_stream)
{
	struct live *l = live_new(pressure, NULL);
	paused = false;
	static char out[64 * 1024];
	size_t out_len = 0;
	live_output(l, 0, "first\n", 6);
	CHECK(!live_lost(l));
	fail_after = 0; /* the next event's allocation fails */
	live_output(l, 0, "second\n", 7);
	fail_after = -1;
	CHECK(paused);
	CHECK(live_lost(l)); /* runflow audits the run's end as 500 internal, not a hang-up */
	live_output(l, 1, "third\n", 6);
	live_finish(l, "{\"event\":\"exit\",\"exit\":0}");
	ssize_t r;
	while ((r = live_read(l, 0, out + out_len, 10)) > 0) /* small reads: the error line in pieces */
		out_len += (size_t)r;
	out[out_len] = '\0';
	CHECK(r == MHD_CONTENT_READER_END_OF_STREAM);
	CHECK_CONTAINS(out, "{\"event\":\"stdout\",\"data\":\"first\\n\"}\n");
	CHECK(!strstr(out, "second"));
	CHECK(!strstr(out, "third"));
	CHECK(!strstr(out, "\"exit\""));
	const char *err = strstr(out, "{\"event\":\"error\"");
	CHECK(err && strstr(err, "\"status\":500}}\n") && err[strlen(err) - 1] == '\n' &&
	      strchr(err, '\n') == err + strlen(err) - 1); /* the last line */
	live_release(l);
	live_gone(l);
}

int main(void)
{
	RUN(memory_follows_what_is_unread);
	RUN(bytes_arrive_whole);
	RUN(lost_event_ends_the_stream);
	return harness_done();
}
