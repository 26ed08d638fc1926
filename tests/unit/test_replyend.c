/*
 * test_replyend.c - where an HTTP/1.1 reply ends (client/replyend.c, the
 * relay's check before it hands a connection to the next client): each
 * reply fed whole, byte by byte and split at every offset must give the
 * same verdict.  The client is its own program (client/client.mk), so its
 * one source is compiled in here.
 */
#include "harness.h"

#include "../../client/replyend.c"

/* The verdict for `s` fed in two parts split at `at` (and whole: at 0). */
static bool verdict(const char *s, size_t at)
{
	static struct replyend e; /* large: not on the stack */
	memset(&e, 0, sizeof e);
	size_t n = strlen(s);
	replyend_feed(&e, s, at);
	replyend_feed(&e, s + at, n - at);
	return replyend_reusable(&e);
}

static bool bytewise(const char *s)
{
	static struct replyend e;
	memset(&e, 0, sizeof e);
	for (size_t i = 0; s[i]; i++)
		replyend_feed(&e, s + i, 1);
	return replyend_reusable(&e);
}

/* Every split gives `want`. */
static bool all_splits(const char *s, bool want)
{
	for (size_t at = 0; at <= strlen(s); at++)
		if (verdict(s, at) != want)
			return false;
	return bytewise(s) == want;
}

TEST(content_length)
{
	CHECK(all_splits(
	    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: application/json\r\n\r\nhello", true));
	CHECK(all_splits("HTTP/1.1 200 OK\r\ncontent-length:  0 \r\n\r\n", true));
	/* Not yet complete, or more than the reply. */
	CHECK(all_splits("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello", false));
	CHECK(all_splits("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nhello", false));
}

TEST(chunked)
{
	const char *r =
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/x-ndjson\r\n\r\n"
	    "19\r\n{\"event\":\"stdout\",\"a\":1}\n\r\n3;ext=1\r\nabc\r\n0\r\nX-Trailer: y\r\n\r\n";
	CHECK(all_splits(r, true));
	CHECK(all_splits("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", true));
	CHECK(all_splits("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", false));
	CHECK(
	    all_splits("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n", false));
	CHECK(all_splits("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false));
}

TEST(never_reused)
{
	CHECK(all_splits("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false));
	CHECK(all_splits("HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nok", false));
	CHECK(all_splits("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false));
	CHECK(all_splits("HTTP/1.1 200 OK\r\n\r\nuntil the end", false));	     /* no length */
	CHECK(all_splits("HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nok", false)); /* not a number */
	CHECK(all_splits("HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", false));
	CHECK(all_splits("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok", false));
}

TEST(no_body_and_interim)
{
	CHECK(all_splits("HTTP/1.1 204 No Content\r\n\r\n", true));
	CHECK(
	    all_splits("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true));
	CHECK(all_splits("HTTP/1.1 204 No Content\r\n\r\nX", false));
}

TEST(oversized_head)
{
	static char big[REPLYEND_HEAD_MAX + 64];
	strcpy(big, "HTTP/1.1 200 OK\r\nX: ");
	size_t n = strlen(big);
	memset(big + n, 'a', REPLYEND_HEAD_MAX);
	strcpy(big + n + REPLYEND_HEAD_MAX, "\r\nContent-Length: 0\r\n\r\n");
	CHECK(!verdict(big, 0));
	CHECK(!bytewise(big));
}

/* Keep-Alive's timeout, as the relay reads it to know when the daemon cuts
 * an idle connection: 0 when absent or without a timeout. */
static unsigned keep_alive(const char *s)
{
	static struct replyend e;
	memset(&e, 0, sizeof e);
	replyend_feed(&e, s, strlen(s));
	return e.keep_alive_s;
}

TEST(keep_alive_timeout)
{
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=15\r\nContent-Length: 0\r\n\r\n") == 15);
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nkeep-alive: max=100, Timeout=3\r\nContent-Length: 0\r\n\r\n") == 3);
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nKeep-Alive: max=100\r\nContent-Length: 0\r\n\r\n") == 0);
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=\r\nContent-Length: 0\r\n\r\n") == 0);
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nX-Keep-Alive: timeout=9\r\nContent-Length: 0\r\n\r\n") == 0);
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") == 0);
	/* The final reply's, not an interim one's; absurd values stay bounded. */
	CHECK(keep_alive("HTTP/1.1 100 Continue\r\nKeep-Alive: timeout=7\r\n\r\n"
	                 "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=2\r\nContent-Length: 0\r\n\r\n") == 2);
	CHECK(keep_alive("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=99999999999999\r\nContent-Length: 0\r\n\r\n") <
	      100000000);
	/* Fed in two parts split anywhere, or byte by byte: the same. */
	static const char split[] = "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=15\r\nContent-Length: 2\r\n\r\nok";
	CHECK(all_splits(split, true));
	static struct replyend e;
	for (size_t at = 0; at <= strlen(split); at++) {
		memset(&e, 0, sizeof e);
		replyend_feed(&e, split, at);
		replyend_feed(&e, split + at, strlen(split) - at);
		CHECK(e.keep_alive_s == 15);
	}
	memset(&e, 0, sizeof e);
	for (size_t i = 0; split[i]; i++)
		replyend_feed(&e, split + i, 1);
	CHECK(e.keep_alive_s == 15);
}

/* The client's side (review s36): one whole request and nothing after it,
 * at every split. */
static bool one_request(const char *s, size_t at)
{
	static struct requestend e;
	memset(&e, 0, sizeof e);
	size_t n = strlen(s);
	requestend_feed(&e, s, at);
	requestend_feed(&e, s + at, n - at);
	return requestend_one(&e);
}

static bool one_request_everywhere(const char *s, bool want)
{
	for (size_t at = 0; at <= strlen(s); at++)
		if (one_request(s, at) != want)
			return false;
	return true;
}

TEST(requests)
{
	const char *get = "GET /v0/profiles HTTP/1.1\r\nHost: x\r\n\r\n";
	const char *post = "POST /v0/run HTTP/1.1\r\nHost: x\r\ncontent-length: 12\r\n\r\n{\"cmd\":\"ls\"}";
	char two[512];
	CHECK(one_request_everywhere(get, true));
	CHECK(one_request_everywhere(post, true));
	/* a second request pipelined behind the first, or one byte more */
	snprintf(two, sizeof two, "%s%s", get, post);
	CHECK(one_request_everywhere(two, false));
	snprintf(two, sizeof two, "%s%s", post, get);
	CHECK(one_request_everywhere(two, false));
	snprintf(two, sizeof two, "%sx", post);
	CHECK(one_request_everywhere(two, false));
	/* a body not all sent yet, a head not ended */
	CHECK(one_request_everywhere("POST /v0/run HTTP/1.1\r\nContent-Length: 12\r\n\r\n{}", false));
	CHECK(one_request_everywhere("GET /v0/profiles HTTP/1.1\r\nHost: x\r\n", false));
	/* framing it does not take: a line ending in a bare LF or CR (the
	 * daemon may end a head there), a folded line, a second length */
	CHECK(one_request_everywhere("GET /v0/profiles HTTP/1.1\nHost: x\n\n", false));
	CHECK(one_request_everywhere("GET /v0/profiles HTTP/1.1\r\nHost: x\r\n\n", false));
	CHECK(one_request_everywhere("GET /v0/profiles HTTP/1.1\rHost: x\r\n\r\n", false));
	CHECK(one_request_everywhere("GET /v0/profiles HTTP/1.1\r\nHost: x\r\n y\r\n\r\n", false));
	CHECK(one_request_everywhere("POST /v0/run HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", false));
	/* framing it does not take */
	CHECK(one_request_everywhere("POST /v0/run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false));
	CHECK(one_request_everywhere("POST /v0/run HTTP/1.1\r\nContent-Length: +2\r\n\r\n{}", false));
	CHECK(one_request_everywhere("POST /v0/run HTTP/1.1\r\nContent-Length: 2x\r\n\r\n{}", false));
	static struct requestend e;
	static char big[REPLYEND_HEAD_MAX + 64];
	memset(&e, 0, sizeof e);
	memset(big, 'a', sizeof big);
	requestend_feed(&e, big, sizeof big);
	CHECK(!requestend_one(&e));
}

int main(void)
{
	RUN(content_length);
	RUN(chunked);
	RUN(never_reused);
	RUN(no_body_and_interim);
	RUN(oversized_head);
	RUN(keep_alive_timeout);
	RUN(requests);
	return harness_done();
}
