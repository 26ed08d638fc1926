/*
 * capture.h - one output stream kept within a fixed budget: the first half
 * of the cap as the head, the last half as a ring-buffer tail, and a marker
 * between them when bytes were dropped.  Memory never exceeds the cap, so a
 * flood cannot grow the daemon.
 *
 * Trust: bytes are already filtered command output; not thread-safe.
 */
#ifndef SHARNESS_CAPTURE_H
#define SHARNESS_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

struct capture {
	size_t cap;          /* total bytes kept */
	char *head;          /* grows up to cap - cap/2 bytes */
	size_t head_len, head_alloc;
	char *tail;          /* ring of cap/2 bytes, allocated once the head is full */
	size_t tail_cap, tail_start, tail_len;
	size_t total;        /* bytes seen */
	bool failed;         /* out of memory: capture_result returns NULL */
};

int capture_init(struct capture *c, size_t cap); /* allocates nothing yet */
void capture_append(void *c, const char *buf, size_t len); /* scrub_emit_fn-compatible */
bool capture_truncated(const struct capture *c);
/* The kept bytes, with "\n[... N bytes truncated ...]\n" between head and
 * tail when truncated.  Returns malloc'd memory, *len set. */
char *capture_result(const struct capture *c, size_t *len);
void capture_free(struct capture *c);

#endif
