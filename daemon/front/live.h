/*
 * live.h - the events of a streamed run (SPEC §15.3, issue 14): NDJSON lines
 * in a buffer between the run (execute.c, which puts them) and
 * libmicrohttpd's content reader (which sends them), both on the front's
 * loop thread.
 *
 * When the buffer is empty, the reader suspends the connection (returning 0
 * alone would make libmicrohttpd ask again at once) and the next line
 * resumes it.  Past LIVE_BUFFER_MAX unread bytes the run is told to stop
 * reading the command's pipes (`pressure`), so the command blocks on its
 * output as it would on a terminal that is not read - its timeout still
 * ends it - and told again once half of it was sent.
 *
 * Trust: front; the bytes are already filtered output.
 */
#ifndef SHARNESS_LIVE_H
#define SHARNESS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LIVE_BUFFER_MAX (1024 * 1024) /* unread events before the run stops reading */

struct live;
struct MHD_Connection;

/* `pressure(arg, full)`: stop (full) or go on reading the run's output. */
struct live *live_new(void (*pressure)(void *arg, bool full), void *arg);
/* The connection the stream goes out on (before its response is queued). */
void live_attach(struct live *l, struct MHD_Connection *c);
/* The run's output as it comes (execute_env.output): held back to whole
 * UTF-8 characters, then sent as {"event":"stdout"|"stderr","data":...}. */
void live_output(void *live, int which, const char *buf, size_t len);
/* The last event (one JSON object, without the newline), then the end. */
void live_finish(struct live *l, const char *json);
/* libmicrohttpd's content reader: what is there, else suspend until more
 * comes, or the end (MHD_CONTENT_READER_END_OF_STREAM). */
ssize_t live_read(void *live, uint64_t pos, char *buf, size_t max);
/* The stream ended early because the front ran out of memory for it (its
 * last event said so): the run's end is then that, not a hang-up. */
bool live_lost(const struct live *l);
/* libmicrohttpd is done with the stream (sent, or the client went away). */
void live_gone(void *live);
/* Each side drops its hold (the run: live_release; the response:
 * live_gone); the last one frees. */
void live_release(struct live *l);

#endif
