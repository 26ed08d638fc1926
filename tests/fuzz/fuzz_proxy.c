/*
 * fuzz_proxy.c - libFuzzer target for the egress proxy's request parser
 * (proxy_parse_head in daemon/front/proxy.c): the bytes a run sends to
 * its proxy, which are hostile.
 *
 * Input: a request head; "\r\n\r\n" is appended when it does not end so.
 * Properties beyond "no crash, no UB":
 *   - a refusal has one sentence;
 *   - an accepted head has no bare CR or LF, no NUL and no control byte
 *     but HT (so the proxy and its upstream agree where it ends);
 *   - an accepted request has an upper-case method, a host the host parser
 *     canonicalised (never empty, no '/', '@' or whitespace) and a port in
 *     1..65535; a plain request's path lies inside the head.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > PROXY_HEAD_MAX)
		return 0;
	char *h = malloc(size + 4);
	if (!h)
		return 0;
	memcpy(h, data, size);
	size_t len = size;
	if (len < 4 || memcmp(h + len - 4, "\r\n\r\n", 4) != 0) {
		memcpy(h + len, "\r\n\r\n", 4);
		len += 4;
	}
	struct proxy_request rq;
	char why[400];
	why[0] = '\0';
	if (proxy_parse_head(h, len, &rq, why, sizeof(why)) < 0) {
		FUZZ_ASSERT(why[0] && strnlen(why, sizeof(why)) < sizeof(why), "a refusal without a sentence");
		free(h);
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)h[i];
		FUZZ_ASSERT(c != 0 && (c >= 0x20 || c == '\t' || c == '\r' || c == '\n') && c != 0x7f, "byte %zu", i);
		if (c == '\r')
			FUZZ_ASSERT(i + 1 < len && h[i + 1] == '\n', "a bare CR at %zu", i);
		if (c == '\n')
			FUZZ_ASSERT(i > 0 && h[i - 1] == '\r', "a bare LF at %zu", i);
	}
	FUZZ_ASSERT(rq.method[0], "no method");
	for (const char *m = rq.method; *m; m++)
		FUZZ_ASSERT(*m >= 'A' && *m <= 'Z', "method '%s'", rq.method);
	FUZZ_ASSERT(rq.host.text[0] && !strpbrk(rq.host.text, "/@ \t\r\n"), "host '%s'", rq.host.text);
	FUZZ_ASSERT(rq.port >= 1 && rq.port <= 65535, "port %u", rq.port);
	if (!rq.connect)
		FUZZ_ASSERT(rq.target_path >= h && rq.target_path + rq.target_path_len <= h + len, "path outside");
	free(h);
	return 0;
}
