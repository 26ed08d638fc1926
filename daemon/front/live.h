/*
 * live.h - the events of a streamed run (SPEC §15.3, issue 14), between the
 * thread that runs it and libmicrohttpd's thread that sends them: NDJSON
 * lines in a bounded buffer, with back-pressure.
 *
 * Trust: front; the bytes are already filtered output.
 */
#ifndef SHARNESS_LIVE_H
#define SHARNESS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LIVE_BUFFER_MAX (1024 * 1024) /* unread events before the run waits */

struct live;

struct live *live_new(void);
/* The run's output as it comes (execute_env.output): held back to whole
 * UTF-8 characters, then sent as {"event":"stdout"|"stderr","data":...}.
 * Waits while LIVE_BUFFER_MAX bytes are unread, as a pipe would; returns at
 * once once the client is gone. */
void live_output(void *live, int which, const char *buf, size_t len);
/* The last event (one JSON object, without the newline), then the end. */
void live_finish(struct live *l, const char *json);
/* libmicrohttpd's content reader: blocks until an event, the end (-1 as
 * MHD_CONTENT_READER_END_OF_STREAM) or the client's departure. */
ssize_t live_read(void *live, uint64_t pos, char *buf, size_t max);
/* libmicrohttpd is done with the stream (sent, or the client went away). */
void live_gone(void *live);
/* Has the client gone away? */
bool live_is_gone(struct live *l);
/* Each side drops its hold; the last one frees. */
void live_release(struct live *l);

#endif
