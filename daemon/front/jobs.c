/*
 * jobs.c - the front's table of jobs (jobs.h).
 *
 * Each job keeps, per stream, the first half of the profile's output cap as
 * the head and the last half as a rolling tail, with the absolute offset of
 * every byte, so a reader that asks for `since=N` gets the bytes from N on
 * - or, when N fell in what was dropped between head and tail, the tail's
 * start and `skipped` bytes - and the next offset to ask for.  Memory per
 * job is its cap at most; a finished job gives back what it did not use,
 * and goes `retain_s` after it ended (looked at on every call: no timer),
 * or earlier when the table needs room (evict_one).
 *
 * Everything runs on the front's loop thread: no lock.  A running job is
 * never freed; its run stops touching it at job_finish.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jobs.h"
#include "utf8.h"

struct job_out {
	char *head;
	size_t head_len, head_cap;
	char *tail;              /* ring of tail_cap bytes */
	size_t tail_cap, tail_start, tail_len;
	uint64_t total;          /* bytes seen */
};

struct job {
	char id[33];
	char owner_fp[65];
	char owner_cn[128];
	char profile[32];
	bool running, killed;
	time_t started_wall, ended_wall;
	struct timespec ended;   /* monotonic: retention */
	unsigned timeout_s;
	void (*kill)(void *arg); /* ends the run (its owner, runflow.c) */
	void *kill_arg;
	struct job_out out[2];
	char *exit_json;         /* the exit record, once ended */
	char *error_json;        /* or the error, when the run failed */
};

struct jobs {
	struct job *v[JOBS_TOTAL_MAX];
	size_t n;
	unsigned max_live, retain_s;
	bool slot_bound; /* max_live is max_runs - 1, below max_jobs */
};

struct jobs *jobs_new(unsigned max_jobs, unsigned max_runs, unsigned retain_s)
{
	struct jobs *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->slot_bound = max_runs >= 2 && max_jobs >= max_runs;
	j->max_live = j->slot_bound ? max_runs - 1 : max_jobs;
	j->retain_s = retain_s;
	return j;
}

static void job_free(struct job *b)
{
	for (int i = 0; i < 2; i++) {
		free(b->out[i].head);
		free(b->out[i].tail);
	}
	free(b->exit_json);
	free(b->error_json);
	free(b);
}

void jobs_free(struct jobs *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		if (!j->v[i]->running)
			job_free(j->v[i]);
	free(j);
}

/* Finished jobs past their retention go. */
static void sweep(struct jobs *j)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	size_t k = 0;
	for (size_t i = 0; i < j->n; i++) {
		struct job *b = j->v[i];
		if (!b->running && now.tv_sec - b->ended.tv_sec >= (time_t)j->retain_s)
			job_free(b);
		else
			j->v[k++] = b;
	}
	j->n = k;
}

static struct job *find(struct jobs *j, const char *id, const char *owner_fp)
{
	if (!id || strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32 || !owner_fp || !owner_fp[0])
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->v[i]->id, id) == 0 && strcmp(j->v[i]->owner_fp, owner_fp) == 0)
			return j->v[i];
	return NULL;
}

/* The output a job keeps once finished (0 while it runs). */
static size_t job_kept(const struct job *b)
{
	return b->running ? 0 : b->out[0].head_len + b->out[0].tail_len + b->out[1].head_len + b->out[1].tail_len;
}

static size_t kept_bytes(const struct jobs *j)
{
	size_t n = 0;
	for (size_t i = 0; i < j->n; i++)
		n += job_kept(j->v[i]);
	return n;
}

static int by_owner(const void *a, const void *b)
{
	return strcmp((*(struct job *const *)a)->owner_fp, (*(struct job *const *)b)->owner_fp);
}

/* Makes room: the oldest finished job of the certificate that holds the
 * most goes early, so that no certificate can push out another's jobs
 * while it holds more itself: the most jobs, or the most kept bytes when
 * those are what the table is short of (`by_bytes`).  false: none has
 * finished.  The jobs are grouped by owner first: counting each job's
 * owner's among all of them cost 10 ms of the loop per start at a full
 * table (review s37 front 6). */
static bool evict_one(struct jobs *j, bool by_bytes)
{
	static struct job *sorted[JOBS_TOTAL_MAX];
	memcpy(sorted, j->v, j->n * sizeof(struct job *));
	qsort((void *)sorted, j->n, sizeof(struct job *), by_owner);
	struct job *pick = NULL;
	size_t pick_held = 0;
	for (size_t g = 0; g < j->n;) {
		size_t end = g, held = 0;
		struct job *oldest = NULL; /* the group's oldest finished job */
		for (; end < j->n && strcmp(sorted[end]->owner_fp, sorted[g]->owner_fp) == 0; end++) {
			held += by_bytes ? job_kept(sorted[end]) : 1;
			if (!sorted[end]->running && (!oldest || sorted[end]->ended.tv_sec < oldest->ended.tv_sec))
				oldest = sorted[end];
		}
		if (oldest && (!pick || held > pick_held ||
		               (held == pick_held && oldest->ended.tv_sec < pick->ended.tv_sec))) {
			pick = oldest;
			pick_held = held;
		}
		g = end;
	}
	if (!pick)
		return false;
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i] == pick) {
			job_free(pick);
			j->v[i] = j->v[--j->n];
			break;
		}
	return true;
}

bool jobs_may_start(struct jobs *j, const char *owner_fp, unsigned pending, char *why, size_t whylen)
{
	unsigned live = 0;
	/* A killed job's run ends within moments: its place is free at once,
	 * as the 429's own hint (kill one) promises. */
	for (size_t i = 0; i < j->n; i++)
		live += j->v[i]->running && !j->v[i]->killed && strcmp(j->v[i]->owner_fp, owner_fp) == 0;
	if (live + pending < j->max_live)
		return true;
	const char *most = j->slot_bound ? "the most one certificate may have (one fewer than max_runs, so that "
	                                   "other runs keep a slot)"
	                                 : "the most max_jobs allows";
	if (pending)
		snprintf(why, whylen, "This certificate has %u jobs running and %u waiting to start, %s; wait for one to end, or kill a running one (DELETE /v0/jobs/ID).", live, pending, most);
	else
		snprintf(why, whylen, "This certificate has %u jobs running, %s; wait for one or kill one (DELETE /v0/jobs/ID).", live, most);
	return false;
}

void jobs_drop(struct jobs *j, struct job *job)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i] == job) {
			job_free(job);
			j->v[i] = j->v[--j->n];
			return;
		}
}

struct job *jobs_add(struct jobs *j, const char *id, const char *owner_fp, const char *owner_cn,
                     const char *profile, size_t out_cap, unsigned timeout_s, void (*kill)(void *arg), void *kill_arg, char *why,
                     size_t whylen)
{
	sweep(j);
	struct job *b = NULL;
	if (jobs_may_start(j, owner_fp, 0, why, whylen)) {
		for (;;) {
			bool too_many = j->n >= JOBS_TOTAL_MAX;
			if (!too_many && kept_bytes(j) <= JOBS_KEPT_MAX)
				break;
			if (!evict_one(j, !too_many))
				break;
		}
		if (j->n >= JOBS_TOTAL_MAX)
			snprintf(why, whylen, "The daemon holds %d jobs; try again later.", JOBS_TOTAL_MAX);
	}
	if (!why[0] && (b = calloc(1, sizeof(*b)))) {
		snprintf(b->id, sizeof(b->id), "%s", id);
		snprintf(b->owner_fp, sizeof(b->owner_fp), "%s", owner_fp);
		snprintf(b->owner_cn, sizeof(b->owner_cn), "%s", owner_cn);
		snprintf(b->profile, sizeof(b->profile), "%s", profile);
		b->running = true;
		b->started_wall = time(NULL);
		b->timeout_s = timeout_s;
		b->kill = kill;
		b->kill_arg = kill_arg;
		for (int i = 0; i < 2; i++) {
			b->out[i].head_cap = out_cap - out_cap / 2;
			b->out[i].tail_cap = out_cap / 2;
		}
		j->v[j->n++] = b;
	} else if (!why[0]) {
		snprintf(why, whylen, "The front is out of memory.");
	}
	return b;
}

static void out_append(struct job_out *o, const char *buf, size_t len)
{
	o->total += len;
	size_t room = o->head_cap - o->head_len;
	if (room) {
		size_t n = len < room ? len : room;
		char *nh = realloc(o->head, o->head_len + n);
		if (!nh)
			return;
		o->head = nh;
		memcpy(o->head + o->head_len, buf, n);
		o->head_len += n;
		buf += n;
		len -= n;
	}
	if (!len || !o->tail_cap)
		return;
	if (!o->tail && !(o->tail = malloc(o->tail_cap)))
		return;
	if (len >= o->tail_cap) { /* only the last tail_cap bytes stay */
		memcpy(o->tail, buf + len - o->tail_cap, o->tail_cap);
		o->tail_start = 0;
		o->tail_len = o->tail_cap;
		return;
	}
	for (size_t i = 0; i < len; i++) {
		size_t at = (o->tail_start + o->tail_len) % o->tail_cap;
		o->tail[at] = buf[i];
		if (o->tail_len < o->tail_cap)
			o->tail_len++;
		else
			o->tail_start = (o->tail_start + 1) % o->tail_cap;
	}
}

void job_output(void *arg, int which, const char *buf, size_t len)
{
	struct job *b = arg;
	out_append(&b->out[which ? 1 : 0], buf, len);
}

void job_finish(struct job *b, const char *exit_json, const char *error_json)
{
	b->exit_json = exit_json ? strdup(exit_json) : NULL;
	b->error_json = error_json ? strdup(error_json) : NULL;
	b->running = false;
	b->ended_wall = time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &b->ended);
	b->kill = NULL;
	/* What it did not use goes back (100 finished jobs keep memory flat). */
	for (int i = 0; i < 2; i++) {
		struct job_out *o = &b->out[i];
		if (o->tail && o->tail_len < o->tail_cap) {
			char *t = realloc(o->tail, o->tail_len ? o->tail_len : 1);
			if (t) {
				o->tail = t;
				o->tail_cap = o->tail_len ? o->tail_len : 1;
			}
		}
	}
}

static void add_times(cJSON *o, const struct job *b)
{
	char t[32];
	struct tm tm;
	gmtime_r(&b->started_wall, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(o, "started", t);
	if (!b->running) {
		gmtime_r(&b->ended_wall, &tm);
		strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm);
		cJSON_AddStringToObject(o, "ended", t);
	}
}

static const char *state_of(const struct job *b)
{
	if (b->running)
		return "running";
	if (b->killed)
		return "killed";
	return b->error_json ? "failed" : "exited";
}

static cJSON *summary(const struct job *b)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "job_id", b->id);
	cJSON_AddStringToObject(o, "state", state_of(b));
	cJSON_AddStringToObject(o, "profile", b->profile);
	add_times(o, b);
	cJSON_AddNumberToObject(o, "stdout_bytes", (double)b->out[0].total);
	cJSON_AddNumberToObject(o, "stderr_bytes", (double)b->out[1].total);
	return o;
}

char *jobs_status(struct jobs *j, const char *id, const char *owner_fp)
{
	sweep(j);
	struct job *b = find(j, id, owner_fp);
	char *out = NULL;
	if (b) {
		cJSON *o = summary(b);
		/* The exit record's fields (exit, signal, timed_out, usage, denials, ...). */
		cJSON *ex = b->exit_json ? cJSON_Parse(b->exit_json) : NULL;
		cJSON *it;
		cJSON_ArrayForEach(it, ex) {
			if (strcmp(it->string, "event") != 0 && !cJSON_HasObjectItem(o, it->string))
				cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, true));
		}
		cJSON_Delete(ex);
		cJSON *er = b->error_json ? cJSON_Parse(b->error_json) : NULL;
		if (er)
			cJSON_AddItemToObject(o, "error", er);
		if (!b->running)
			cJSON_AddNumberToObject(o, "retained_s", j->retain_s);
		out = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
	}
	return out;
}

/* Whether the cap dropped bytes between the head and the tail. */
static bool gap(const struct job_out *o)
{
	return o->head_len < o->total - o->tail_len;
}

/* Bytes from absolute offset `since` on, at most max: where they are. */
static size_t read_from(const struct job_out *o, uint64_t since, char *dst, size_t max, uint64_t *from)
{
	uint64_t tail_first = o->total - o->tail_len; /* the tail's first byte's offset */
	size_t n = 0;
	*from = since;
	if (since < o->head_len) {
		size_t take = o->head_len - (size_t)since < max ? o->head_len - (size_t)since : max;
		memcpy(dst, o->head + since, take);
		n = take;
		since += take;
		if (since < tail_first) /* the rest was dropped: stop at the gap */
			return n;
	}
	if (since < tail_first) { /* asked for dropped bytes: from the tail's start */
		since = tail_first;
		if (n == 0)
			*from = since;
	}
	while (n < max && since < o->total) {
		size_t idx = (size_t)(since - tail_first);
		dst[n++] = o->tail[(o->tail_start + idx) % o->tail_cap];
		since++;
	}
	return n;
}

char *jobs_output(struct jobs *j, const char *id, const char *owner_fp, int which, uint64_t since)
{
	sweep(j);
	struct job *b = find(j, id, owner_fp);
	char *out = NULL;
	if (b) {
		const struct job_out *o = &b->out[which ? 1 : 0];
		char *buf = malloc(JOB_READ_MAX);
		uint64_t from = since;
		size_t n = 0;
		if (buf && since < o->total)
			n = read_from(o, since, buf, JOB_READ_MAX, &from);
		/* End on a whole UTF-8 character when the rest of it is kept
		 * right after: the next read starts with it.  A read that stopped
		 * at the head's end, where the cap dropped bytes, has no such
		 * rest: its cut character goes out as U+FFFD (utf8_clean), as the
		 * tail's first bytes do when it starts inside one - held back, it
		 * would be read and held back again forever. */
		size_t cut = n;
		/* A running job's last bytes may be the start of a character
		 * whose rest is still to come: held back, and no "more" until
		 * it came (a follower then waits instead of asking again). */
		bool at_live_end = b->running && from + n == o->total;
		bool rest_follows = (from + n < o->total || at_live_end) && !(from + n == o->head_len && gap(o));
		if (n && rest_follows)
			for (size_t back = 1; back <= 3 && back <= n; back++) {
				unsigned char ch = (unsigned char)buf[n - back];
				if ((ch & 0xc0) == 0x80)
					continue;
				size_t need = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc0 ? 2 : 1;
				if (need > back)
					cut = n - back;
				break;
			}
		if (cut == 0 && !at_live_end)
			cut = n; /* never "more" with nothing read: every read moves on */
		bool replaced = false;
		char *clean = buf ? utf8_clean(buf, cut, &replaced) : NULL;
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "job_id", b->id);
		cJSON_AddStringToObject(r, "stream", which ? "stderr" : "stdout");
		cJSON_AddNumberToObject(r, "since", (double)since);
		if (from > since)
			cJSON_AddNumberToObject(r, "skipped", (double)(from - since));
		cJSON_AddStringToObject(r, "data", clean ? clean : "");
		uint64_t next = since > o->total ? since : from + cut;
		cJSON_AddNumberToObject(r, "next", (double)next);
		cJSON_AddNumberToObject(r, "total", (double)o->total);
		cJSON_AddBoolToObject(r, "more", next < o->total && !at_live_end);
		cJSON_AddStringToObject(r, "state", state_of(b));
		out = cJSON_PrintUnformatted(r);
		cJSON_Delete(r);
		free(clean);
		free(buf);
	}
	return out;
}

char *jobs_list(struct jobs *j, const char *owner_fp)
{
	sweep(j);
	cJSON *o = cJSON_CreateObject();
	cJSON *a = cJSON_AddArrayToObject(o, "jobs");
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->v[i]->owner_fp, owner_fp) == 0)
			cJSON_AddItemToArray(a, summary(j->v[i]));
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}

int jobs_kill(struct jobs *j, const char *id, const char *owner_fp, const char **state)
{
	sweep(j);
	struct job *b = find(j, id, owner_fp);
	if (!b)
		return -1;
	if (b->running && b->kill) {
		b->killed = true;
		b->kill(b->kill_arg); /* the run is killed; job_finish comes with its end */
	}
	*state = b->killed ? "killed" : state_of(b);
	return 0;
}
