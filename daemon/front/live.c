/*
 * live.c - the events of a streamed run (live.h).  Two holders (the run, the
 * response): the last frees.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "live.h"
#include "log.h"
#include "utf8.h"

struct live {
	char *buf;
	size_t len, off;     /* bytes in buf; sent so far */
	bool done, gone;
	bool full;           /* the run was told to stop reading */
	bool suspended;      /* the reader found nothing and suspended conn */
	bool lost;	     /* an event could not be kept: the stream ends in an error */
	size_t lost_sent;    /* bytes of lost_line sent */
	int holders;
	struct MHD_Connection *conn;
	void (*pressure)(void *arg, bool full);
	void *arg;
	char carry[2][4];    /* a UTF-8 character cut by a read, per stream */
	size_t carry_len[2];
};

struct live *live_new(void (*pressure)(void *arg, bool full), void *arg)
{
	struct live *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->holders = 2;
	l->pressure = pressure;
	l->arg = arg;
	return l;
}

void live_attach(struct live *l, struct MHD_Connection *c)
{
	l->conn = c;
	if (!c)
		l->suspended = false;
}

static void wake_reader(struct live *l)
{
	if (l->suspended && l->conn) {
		l->suspended = false;
		MHD_resume_connection(l->conn);
	}
}

/* The last event when an event could not be kept (live_read sends it once
 * what was kept is out).  Static: no memory is left to build one. */
static const char lost_line[] =
    "{\"event\":\"error\",\"error\":{\"code\":\"internal\",\"message\":\"The front ran out of memory "
    "for this stream's output: the stream ends here and the run is killed.\",\"status\":500}}\n";

/* An event that could not be kept must not vanish while the stream goes
 * on ("data keeps all of the output"): nothing more is put, the run stops
 * being read, and the stream ends with lost_line; its end before the exit
 * event kills the run as a hang-up does (runflow_completed). */
static void lose(struct live *l)
{
	if (l->lost || l->gone)
		return;
	l->lost = true;
	log_warn("a streamed run's output could not be kept (out of memory): its stream ends with an error");
	if (!l->full && !l->done && l->pressure) {
		l->full = true;
		l->pressure(l->arg, true);
	}
	wake_reader(l);
}

/* Append one line.  What was sent goes first once it is at least as much
 * as what is unread: the buffer then holds under twice the unread bytes
 * (kept near LIVE_BUFFER_MAX by the pressure) plus the line, however long
 * the stream, and each byte moves at most once per byte sent before it. */
static void put_line(struct live *l, const char *line, size_t n)
{
	if (l->gone || l->lost)
		return;
	if (l->off && l->off >= l->len - l->off) {
		memmove(l->buf, l->buf + l->off, l->len - l->off);
		l->len -= l->off;
		l->off = 0;
	}
	char *nb = realloc(l->buf, l->len + n + 1);
	if (!nb) {
		lose(l);
		return;
	}
	l->buf = nb;
	memcpy(l->buf + l->len, line, n);
	l->len += n;
	l->buf[l->len++] = '\n';
	if (!l->full && !l->done && l->len - l->off > LIVE_BUFFER_MAX && l->pressure) {
		l->full = true;
		l->pressure(l->arg, true);
	}
	wake_reader(l);
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
	else
		lose(l);
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
	if (l->gone || len == 0)
		return;
	/* The carried bytes first, then all but a new cut character. */
	size_t total = l->carry_len[which] + len;
	char *joined = malloc(total);
	if (!joined) {
		lose(l);
		return;
	}
	memcpy(joined, l->carry[which], l->carry_len[which]);
	memcpy(joined + l->carry_len[which], buf, len);
	size_t keep = cut_char(joined, total);
	l->carry_len[which] = keep;
	memcpy(l->carry[which], joined + total - keep, keep);
	if (total > keep)
		put_event(l, which, joined, total - keep);
	free(joined);
}

void live_finish(struct live *l, const char *json)
{
	for (int w = 0; w < 2; w++)
		if (l->carry_len[w]) { /* a character the run never completed: U+FFFD */
			put_event(l, w, l->carry[w], l->carry_len[w]);
			l->carry_len[w] = 0;
		}
	if (json)
		put_line(l, json, strlen(json));
	l->done = true;
	wake_reader(l);
}

ssize_t live_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct live *l = arg;
	(void)pos;
	if (l->off < l->len) {
		size_t take = l->len - l->off < max ? l->len - l->off : max;
		memcpy(buf, l->buf + l->off, take);
		l->off += take;
		if (l->full && !l->lost && l->len - l->off <= LIVE_BUFFER_MAX / 2) {
			l->full = false;
			l->pressure(l->arg, false);
		}
		return (ssize_t)take;
	}
	if (l->lost && l->lost_sent < sizeof(lost_line) - 1) {
		size_t left = sizeof(lost_line) - 1 - l->lost_sent;
		size_t take = left < max ? left : max;
		memcpy(buf, lost_line + l->lost_sent, take);
		l->lost_sent += take;
		return (ssize_t)take;
	}
	if (l->done || l->lost)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (l->gone || !l->conn)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	/* Nothing yet: off libmicrohttpd's loop until the next line. */
	l->suspended = true;
	MHD_suspend_connection(l->conn);
	return 0;
}

void live_release(struct live *l)
{
	if (--l->holders > 0)
		return;
	free(l->buf);
	free(l);
}

bool live_lost(const struct live *l)
{
	return l->lost;
}

void live_gone(void *arg)
{
	struct live *l = arg;
	l->gone = true;
	l->suspended = false;
	l->conn = NULL;
	live_release(l);
}
