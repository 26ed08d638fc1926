/*
 * live.c - the events of a streamed run, from the run's thread to the
 * thread that sends them (live.h).
 *
 * The run's thread appends whole NDJSON lines; the sender takes what is
 * there.  Unread bytes are bounded (LIVE_BUFFER_MAX): past it the run's
 * thread waits, so its pipes fill and the command blocks on its output as
 * it would on a terminal that is not read - the supervisor's timeout still
 * ends it.  When the client goes away, libmicrohttpd says so (live_gone):
 * nothing waits any more, and the run's own watch of the client's socket
 * kills the run.  Two holders (the run, the response): the last frees.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "live.h"
#include "utf8.h"

struct live {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf;
	size_t len, off;     /* bytes in buf; sent so far */
	bool done, gone;
	int holders;
	char carry[2][4];    /* a UTF-8 character cut by a read, per stream */
	size_t carry_len[2];
};

struct live *live_new(void)
{
	struct live *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	l->holders = 2;
	return l;
}

/* Append one line; waits for room.  Called with mu held. */
static void put_line(struct live *l, const char *line, size_t n)
{
	while (!l->gone && l->len - l->off + n > LIVE_BUFFER_MAX && l->len > l->off)
		pthread_cond_wait(&l->cv, &l->mu);
	if (l->gone)
		return;
	if (l->off == l->len)
		l->off = l->len = 0;
	char *nb = realloc(l->buf, l->len + n + 1);
	if (!nb)
		return; /* out of memory: the event is lost, the final reply is not */
	l->buf = nb;
	memcpy(l->buf + l->len, line, n);
	l->len += n;
	l->buf[l->len++] = '\n';
	pthread_cond_broadcast(&l->cv);
}

static void put_event(struct live *l, int which, const char *data, size_t len)
{
	bool replaced = false;
	char *clean = utf8_clean(data, len, &replaced);
	cJSON *o = cJSON_CreateObject();
	char *line = NULL;
	if (clean && o && cJSON_AddStringToObject(o, "event", which ? "stderr" : "stdout") &&
	    cJSON_AddStringToObject(o, "data", clean))
		line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	free(clean);
	if (line)
		put_line(l, line, strlen(line));
	free(line);
}

/* How many bytes at the end of buf[0..len) start a UTF-8 character that is
 * not complete yet (0 to 3). */
static size_t cut_char(const char *buf, size_t len)
{
	for (size_t back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = (unsigned char)buf[len - back];
		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: look further back */
		size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		return need > back ? back : 0;
	}
	return 0;
}

void live_output(void *arg, int which, const char *buf, size_t len)
{
	struct live *l = arg;
	which = which ? 1 : 0;
	pthread_mutex_lock(&l->mu);
	if (!l->gone && len > 0) {
		/* The carried bytes first, then all but a new cut character. */
		size_t total = l->carry_len[which] + len;
		char *joined = malloc(total);
		if (joined) {
			memcpy(joined, l->carry[which], l->carry_len[which]);
			memcpy(joined + l->carry_len[which], buf, len);
			size_t keep = cut_char(joined, total);
			l->carry_len[which] = keep;
			memcpy(l->carry[which], joined + total - keep, keep);
			if (total > keep)
				put_event(l, which, joined, total - keep);
			free(joined);
		}
	}
	pthread_mutex_unlock(&l->mu);
}

void live_finish(struct live *l, const char *json)
{
	pthread_mutex_lock(&l->mu);
	for (int w = 0; w < 2; w++)
		if (l->carry_len[w]) { /* a character the run never completed: U+FFFD */
			put_event(l, w, l->carry[w], l->carry_len[w]);
			l->carry_len[w] = 0;
		}
	if (json)
		put_line(l, json, strlen(json));
	l->done = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

ssize_t live_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct live *l = arg;
	(void)pos;
	pthread_mutex_lock(&l->mu);
	while (l->off == l->len && !l->done && !l->gone)
		pthread_cond_wait(&l->cv, &l->mu);
	ssize_t n;
	if (l->off < l->len) {
		size_t take = l->len - l->off < max ? l->len - l->off : max;
		memcpy(buf, l->buf + l->off, take);
		l->off += take;
		n = (ssize_t)take;
		pthread_cond_broadcast(&l->cv); /* room for the run's thread */
	} else {
		n = l->gone ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
	}
	pthread_mutex_unlock(&l->mu);
	return n;
}

bool live_is_gone(struct live *l)
{
	pthread_mutex_lock(&l->mu);
	bool g = l->gone;
	pthread_mutex_unlock(&l->mu);
	return g;
}

void live_release(struct live *l)
{
	pthread_mutex_lock(&l->mu);
	bool last = --l->holders == 0;
	pthread_mutex_unlock(&l->mu);
	if (!last)
		return;
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l->buf);
	free(l);
}

void live_gone(void *arg)
{
	struct live *l = arg;
	pthread_mutex_lock(&l->mu);
	l->gone = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	live_release(l);
}
