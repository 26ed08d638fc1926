/*
 * scrub.c - the secret filter's streams (SPEC §7): bytes in, bytes out with
 * every vault key and named token replaced by "[filtered: NAME]".
 *
 * How a stream works (research E.1):
 *   - Input collects in a fixed window of WINDOW bytes (copied in by
 *     scrub_stream_feed, or read(2) straight into it).  When it is full (or
 *     at finish) the window is scanned: Vectorscan finds every anchor and
 *     short vault needle ("://" too, unless URLs are dense: URL_DENSE), or,
 *     where the CPU runs scrub_tri.c, every anchor of four bytes or more
 *     while scrub_tri.c finds the three-byte ones and "://"; the
 *     fingerprint index (scrub_fp.c) every long vault
 *     needle, and scrub_wrap.c every vault needle that a wrapped line cuts
 *     (base64 or hex a tool wrapped into lines); each anchor's validator
 *     decides on a span, and spans are sorted
 *     and merged (overlaps become one marker, named by priority: vault >
 *     vendor token > context rule).
 *   - Everything up to `commit` = end - HOLD is emitted; the last HOLD bytes
 *     stay and are looked at again with the next input, so a token split
 *     across reads is seen whole.  HOLD exceeds the longest token any
 *     validator accepts, so a token can never start before `commit` and end
 *     after the window.  A span that starts before `commit` moves `commit` to
 *     its end.
 *   - The kept bytes are not scanned again (that cost 14% of every scan):
 *     the prefilter matches lying in them are kept (struct pmatch) and
 *     replayed through their validators with the next window, and the
 *     prefilters resume just early enough to see a literal or needle that
 *     straddles the old end.  Replaying gives the same spans as rescanning,
 *     since a literal match depends only on its own bytes.  Past PM_MAX
 *     kept matches the next window is scanned whole instead.
 *   - The CONTEXT bytes before the window were already emitted but are kept
 *     for validators that look back (a KEY name, a URL scheme).
 *   - A PEM private key longer than HOLD is redacted to the end of the window
 *     and the stream stays "inside the key" until its END line.
 *   - If the window holds ESC, a JSON or a percent escape, the decoded view
 *     is scanned too and its spans are mapped back to raw bytes.
 * Memory per stream is fixed: the window, the kept matches, the view and its
 * map (allocated on first use), the span list (bounded by the window) and a
 * Vectorscan scratch.
 *
 * Idempotence: a marker "[filtered: x]" contains no anchor a validator would
 * accept (names are followed by ']', values starting with '[' are
 * placeholders), so filtering filtered output changes nothing.
 *
 * Trust: the input is hostile command output.
 */
#include "scrub.h"
#include "scrub_detect.h"
#include "scrub_fp.h"
#include "scrub_rules.h"
#include "scrub_tri.h"
#include "scrub_view.h"
#include "scrub_wrap.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW SCRUB_WINDOW
#define HOLD SCRUB_HOLD
#define CONTEXT SCRUB_DETECT_MAX_LOOKBACK

_Static_assert(HOLD >= SCRUB_DETECT_MAX_TOKEN + SCRUB_DETECT_MAX_LOOKBACK + 3 * 1024,
               "the hold-back must cover the longest token and vault needle");
_Static_assert(HOLD >= SCRUB_WRAP_MAX_SPAN + SCRUB_DETECT_MAX_LOOKBACK,
               "the hold-back must cover the longest wrapped vault needle");

static const char vault_name[] = "vault key";

struct span {
	size_t s, e;
	const char *name;
	int prio;
	int silent; /* continues a span whose marker was already emitted */
	int open;   /* PEM block continues past the window */
};

/* A prefilter match kept for the next window: the bytes it lies in stay (the
 * hold-back), so instead of scanning them again the next window replays it
 * through its validator, which then sees the bytes that followed. */
struct pmatch {
	uint32_t id; /* Vectorscan id, PM_FP for a fingerprint hit, PM_WRAP for a wrapped one */
	uint32_t start, len;
};

#define PM_FP UINT32_MAX
#define PM_WRAP (UINT32_MAX - 1)
/* Matches replayed per window at most; more (a flood of anchors in the
 * hold-back) and the next window scans everything again instead: memory
 * stays fixed either way. */
#define PM_MAX 2048u

/* More "://" than this in a window (one per KiB) and the next window finds
 * them with scan_url instead of Vectorscan (scrub_rules.h: url_id).
 * Measured on bench-filter-classes (session 7): the SIMD pass costs
 * about 0.06 ns/byte, each report by Vectorscan ~40 ns (session 5: 0.15
 * ns/byte for the 163,000 of 40 MB of JSON).  Build logs (~210
 * per window) ran 3% faster and JSON records (~600) 12% faster with the
 * pass; prose (~20) 6-8% and source code (~2) 6-9% faster without it.
 * Both ways report the same matches, so the choice changes time only. */
#define URL_DENSE 128u

struct scrub_stream {
	const struct scrub_rules *r;
	scrub_emit_fn emit;
	void *arg;
	hs_scratch_t *scratch;
	unsigned char *buf;
	size_t len, ctx; /* buf[0, ctx) already emitted, buf[ctx, len) pending */
	int pem_open;
	unsigned long count;
	struct span *sp;
	size_t nsp, capsp;
	unsigned char *view;
	uint32_t *map;
	/* buf[0, done) was scanned and pm[cur] holds its matches that start in
	 * it, unless `rescan` (the list overflowed). */
	struct pmatch *pm[2];
	size_t npm[2];
	int cur, rescan;
	size_t done;
	/* The most of buf and of view ever filled: only those bytes held
	 * output, so only they are wiped at the end (a short run's output
	 * touches a page of the 128 KiB window, not all 32). */
	size_t buf_used, view_used;
	size_t clean; /* buf[0, clean) holds no escape the view would decode */
	size_t nurl;  /* "://" found in this window's raw scan */
	int url_dense; /* the last window held many: find "://" without Vectorscan */
	/* during one scan */
	struct scrub_window win;
	const unsigned char *raw; /* set while scanning the view */
	size_t rawlen;
	size_t off;      /* where the buffer given to the prefilter starts */
	size_t skip_to;  /* raw matches ending here or before were replayed */
	size_t rec_from; /* raw matches starting here or later are kept */
	int overflow;
	int oom;
};

static void add_span(struct scrub_stream *s, size_t st, size_t e, const char *name, int prio, int silent,
                     int open)
{
	if (e <= st)
		return;
	if (s->raw) { /* the scan ran on the view: map back */
		size_t rs = s->map[st], re = scrub_view_raw_end(s->raw, s->rawlen, s->map, e - 1);
		st = rs;
		e = re;
	}
	if (s->nsp == s->capsp) {
		size_t cap = s->capsp ? s->capsp * 2 : 256;
		struct span *sp = realloc(s->sp, cap * sizeof *sp);
		if (!sp) {
			s->oom = 1;
			return;
		}
		s->sp = sp;
		s->capsp = cap;
	}
	s->sp[s->nsp++] = (struct span){st, e, name, prio, silent, open};
}

static void record(struct scrub_stream *s, uint32_t id, size_t start, size_t len)
{
	struct pmatch *pm = s->pm[!s->cur];
	if (s->raw || start < s->rec_from)
		return;
	if (s->npm[!s->cur] == PM_MAX) {
		s->overflow = 1;
		return;
	}
	pm[s->npm[!s->cur]++] = (struct pmatch){id, (uint32_t)start, (uint32_t)len};
}

/* A prefilter match ending at `to`: a short vault needle, or an anchor for
 * its rule's validator. */
static void handle(struct scrub_stream *s, unsigned id, size_t to)
{
	const struct scrub_rules *r = s->r;
	if (id >= r->nanchors) {
		size_t len = r->short_len[id - r->nanchors];
		record(s, id, to - len, len);
		add_span(s, to - len, to, vault_name, SCRUB_PRIO_VAULT, 0, 0);
	} else {
		const struct scrub_anchor *a = &r->anchors[id];
		const struct scrub_rule *rule = &scrub_detect_rules[a->rule];
		struct scrub_hit h;
		record(s, id, to - a->len, a->len);
		if (rule->validate && rule->validate(rule, &s->win, to - a->len, a->len, &h) &&
		    !scrub_detect_next_to_marker(&s->win, h.start, h.end))
			add_span(s, h.start, h.end, h.name, h.prio, 0, h.open);
	}
}

/* A vault needle found by the fingerprint index or across line breaks. */
static void handle_vault(struct scrub_stream *s, uint32_t id, size_t start, size_t len)
{
	record(s, id, start, len);
	add_span(s, start, start + len, vault_name, SCRUB_PRIO_VAULT, 0, 0);
}

/* Whether the "://" ending at `end` of the scanned data surely starts no
 * url-password (scrub_detect_url_no_user: most URLs have no user part),
 * so that its validator need not run. */
static int url_no_user(const struct scrub_stream *s, size_t end)
{
	return s->r->avx2 && end + 32 <= s->win.len && scrub_detect_url_no_user(s->win.buf + end);
}

/* An anchor or short needle `id` ending at `to` of the prefiltered data,
 * from Vectorscan or the three-byte finder.  Returns non-zero to stop. */
static int report(struct scrub_stream *s, unsigned id, size_t to)
{
	size_t end = s->off + to;
	if (id == s->r->url_id) {
		s->nurl += !s->raw;
		if (url_no_user(s, end))
			return s->oom;
	}
	if (end > s->skip_to)
		handle(s, id, end);
	return s->oom; /* non-zero stops the scan */
}

static int on_match(unsigned int id, unsigned long long from, unsigned long long to, unsigned int flags,
                    void *arg)
{
	(void)from;
	(void)flags;
	return report(arg, id, (size_t)to);
}

static int on_tri(void *arg, unsigned id, size_t to)
{
	return report(arg, id, to);
}

/* A long needle from the fingerprint index: whole, or cut by a line end
 * and then followed across a wrap (scrub_wrap_cut). */
static int on_fp(void *arg, size_t start, const unsigned char *needle, size_t len, size_t matched)
{
	struct scrub_stream *s = arg;
	size_t end = start + len;
	uint32_t id = PM_FP;
	if (matched < len) {
		if (!scrub_wrap_cut(s->r->wrap, s->win.buf + s->off, s->win.len - s->off, start, needle, len, matched,
		                    &end))
			return s->oom;
		id = PM_WRAP;
	}
	if (s->off + end > s->skip_to)
		handle_vault(s, id, s->off + start, end - start);
	return s->oom;
}

static int on_wrap(void *arg, size_t start, size_t end)
{
	struct scrub_stream *s = arg;
	if (s->off + end > s->skip_to)
		handle_vault(s, PM_WRAP, s->off + start, end - start);
	return s->oom;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2"))) static size_t scan_url_avx2(struct scrub_stream *s, const unsigned char *d,
                                                            size_t len)
{
	const __m256i colon = _mm256_set1_epi8(':'), slash = _mm256_set1_epi8('/');
	size_t p = 0;
	for (; p + 66 <= len && !s->oom; p += 64) {
		__m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)(d + p));
		__m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(d + p + 1));
		__m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(d + p + 32));
		__m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(d + p + 33));
		uint64_t m = (uint32_t)_mm256_movemask_epi8(
			_mm256_and_si256(_mm256_cmpeq_epi8(a0, colon), _mm256_cmpeq_epi8(b0, slash)));
		m |= (uint64_t)(uint32_t)_mm256_movemask_epi8(
			     _mm256_and_si256(_mm256_cmpeq_epi8(a1, colon), _mm256_cmpeq_epi8(b1, slash)))
		     << 32;
		for (; m && !s->oom; m &= m - 1) {
			size_t at = p + (size_t)__builtin_ctzll(m);
			if (d[at + 2] == '/') /* at + 2 < p + 66 <= len */
				report(s, s->r->url_id, at + 3);
		}
	}
	return p;
}
#endif

/* Every "://" in data[0, len) (scrub_rules.h: url_id), reported as the
 * literal matcher would: by its end.  With AVX2, two compares and an and
 * per 32 bytes find ":/" (rare outside URLs) and the third byte is checked
 * per candidate: a full three-byte compare cost 5-8% of the filter on text
 * without URLs.  memchr for ':' otherwise. */
static void scan_url(struct scrub_stream *s, const unsigned char *d, size_t len)
{
	size_t p = 0;
	const unsigned char *q;
	if (s->r->url_id == SCRUB_NO_ANCHOR)
		return;
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx2"))
		p = scan_url_avx2(s, d, len);
#endif
	while (p + 3 <= len && !s->oom && (q = memchr(d + p, ':', len - 2 - p)) != NULL) {
		p = (size_t)(q - d);
		if (d[p + 1] == '/' && d[p + 2] == '/')
			report(s, s->r->url_id, p + 3);
		p++;
	}
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->silent > y->silent ? -1 : x->silent < y->silent; /* silent first: it began earlier */
}

/* Sort and merge overlapping or touching spans in place; returns the count. */
static size_t merge(struct span *sp, size_t n)
{
	size_t o = 0;
	if (n == 0)
		return 0;
	qsort(sp, n, sizeof *sp, cmp_span);
	for (size_t i = 1; i < n; i++) {
		struct span *m = &sp[o];
		if (sp[i].s <= m->e) {
			if (sp[i].e > m->e)
				m->e = sp[i].e;
			if (sp[i].prio > m->prio) {
				m->prio = sp[i].prio;
				m->name = sp[i].name;
			}
			m->open |= sp[i].open;
		} else {
			sp[++o] = sp[i];
		}
	}
	return o + 1;
}

/* Run the prefilters over data[0, len) (the window or its view) and every
 * match's validator.  For the raw window, bytes before `done` were scanned
 * by the previous window: their matches are replayed, and the prefilters
 * start just early enough to see every match that ends after `done`. */
static int scan(struct scrub_stream *s, const unsigned char *data, size_t len, size_t ctx, size_t commit,
                int eof, size_t done)
{
	const struct scrub_rules *r = s->r;
	size_t from, back, wrap_back;
	s->win = (struct scrub_window){data, len, ctx, commit, eof};
	s->skip_to = done;
	if (len == 0)
		return 0;
	for (size_t i = 0; done && i < s->npm[s->cur]; i++) {
		const struct pmatch *m = &s->pm[s->cur][i];
		if (m->id == PM_FP || m->id == PM_WRAP)
			handle_vault(s, m->id, m->start, m->len);
		else
			handle(s, m->id, (size_t)m->start + m->len);
	}
	from = done > r->maxlit ? done - r->maxlit : 0;
	s->off = from;
	if (hs_scan(r->tri || s->url_dense ? r->db : r->db_url, (const char *)data + from,
	            (unsigned)(len - from), 0, s->scratch, on_match, s) != HS_SUCCESS &&
	    !s->oom)
		return -1;
	if (r->tri) { /* the three-byte anchors, "://" among them */
		if (!s->oom && scrub_tri_scan(r->tri, data + from, len - from, on_tri, s) != 0 && !s->oom)
			return -1;
	} else if (s->url_dense) {
		scan_url(s, data + from, len - from);
	}
	/* A needle across wraps starts up to the longest span before `done`,
	 * and a wrap is told by the 16 bytes before it: the fingerprint index
	 * (which finds needles a wrap cuts: on_fp) and the wrap scan resume
	 * that much earlier. */
	wrap_back = scrub_wrap_maxspan(r->wrap) + SCRUB_WRAP_LINE;
	back = r->fp_maxlen > wrap_back ? r->fp_maxlen : wrap_back;
	from = done > back ? done - back : 0;
	s->off = from;
	if (!s->oom && scrub_fp_scan(r->fp, data + from, len - from, on_fp, s) != 0 && !s->oom)
		return -1;
	from = done > wrap_back ? done - wrap_back : 0;
	s->off = from;
	if (!s->oom && scrub_wrap_scan(r->wrap, data + from, len - from, on_wrap, s) != 0 && !s->oom)
		return -1;
	s->off = 0;
	return s->oom ? -1 : 0;
}

/* Where view offsets start to correspond to raw offsets >= x. */
static size_t view_index(const uint32_t *map, size_t vlen, size_t x)
{
	size_t lo = 0, hi = vlen;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (map[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void emit_marker(struct scrub_stream *s, const char *name)
{
	char m[96];
	int n = snprintf(m, sizeof m, "[filtered: %s]", name);
	s->emit(s->arg, m, (size_t)n);
	s->count++;
}

enum { PROCESS_FULL, PROCESS_EOF, PROCESS_FLUSH };

/* Scan the window, emit what is decided, keep the rest.  Returns 0 or -1.
 * PROCESS_FLUSH (a streamed run's output, every 100 ms: scrub_stream_flush)
 * also emits up to the window's last line end: no token a validator accepts
 * holds a newline or a carriage return (a PEM key, which does, is followed
 * by its own state), so a token cut by the flush is still whole in what is
 * kept.  A vault needle wrapped into lines does hold one: when that line
 * end may be a wrap, the flush stops the longest wrapped needle's span
 * before the end of the input (scrub_wrap_may_go_on).  The kept bytes may
 * then exceed HOLD, so the next window is scanned whole instead of
 * replaying kept matches. */
static int process(struct scrub_stream *s, int mode)
{
	int eof = mode == PROCESS_EOF;
	size_t len = s->len, ctx = s->ctx, pos = ctx, n, keep, first;
	size_t commit = eof ? len : (len > HOLD && len - HOLD > ctx ? len - HOLD : ctx);
	if (mode == PROCESS_FLUSH) {
		size_t end = len, span = scrub_wrap_maxspan(s->r->wrap);
		while (end > ctx && s->buf[end - 1] != '\n' && s->buf[end - 1] != '\r')
			end--;
		/* a vault needle may cross that line end into what is yet to come */
		if (end > ctx && scrub_wrap_may_go_on(s->buf, len, end) && len - end < span)
			end = len > span ? len - span : 0;
		if (end > commit)
			commit = end;
	}
	s->nsp = 0;
	s->raw = NULL;
	if (s->pem_open) {
		struct scrub_window w = {s->buf, len, ctx, commit, eof};
		int still;
		size_t e = scrub_detect_pem_continue(&w, ctx, &still);
		add_span(s, ctx, e, scrub_detect_pem_name, SCRUB_PRIO_TOKEN, 1, still);
		s->pem_open = 0;
	}
	s->rec_from = eof ? (size_t)-1 : len > HOLD + CONTEXT ? len - HOLD - CONTEXT : 0;
	s->npm[!s->cur] = 0;
	s->overflow = 0;
	s->nurl = 0;
	if (scan(s, s->buf, len, ctx, commit, eof, s->rescan ? 0 : s->done) < 0)
		return -1;
	first = scrub_view_first(s->buf, len, s->clean);
	if (first < len) {
		size_t vlen;
		if (!s->view) {
			s->view = malloc(WINDOW);
			s->map = malloc((WINDOW + 1) * sizeof *s->map);
			if (!s->view || !s->map)
				return -1;
		}
		vlen = scrub_view_build(s->buf, len, first, s->view, s->map);
		if (vlen > s->view_used)
			s->view_used = vlen;
		s->raw = s->buf;
		s->rawlen = len;
		if (scan(s, s->view, vlen, view_index(s->map, vlen, ctx), view_index(s->map, vlen, commit), eof, 0) <
		    0)
			return -1;
		s->raw = NULL;
	}
	n = merge(s->sp, s->nsp);
	for (size_t i = 0; i < n; i++) {
		struct span *m = &s->sp[i];
		if (m->e <= ctx)
			continue; /* redacted in an earlier window */
		if (m->s < ctx) {
			m->s = ctx; /* its marker went out with the earlier window */
			m->silent = 1;
		}
		if (m->s >= commit && !m->silent)
			break; /* undecided: scanned again with more input */
		if (m->s > pos)
			s->emit(s->arg, (const char *)s->buf + pos, m->s - pos);
		if (!m->silent)
			emit_marker(s, m->name);
		if (m->e > pos)
			pos = m->e;
		if (pos > commit)
			commit = pos;
		if (m->open) {
			s->pem_open = 1;
			commit = pos = len;
		}
	}
	if (commit > pos)
		s->emit(s->arg, (const char *)s->buf + pos, commit - pos);
	/* Keep CONTEXT emitted bytes plus everything after commit. */
	keep = commit > CONTEXT ? commit - CONTEXT : 0;
	memmove(s->buf, s->buf + keep, len - keep);
	s->len = len - keep;
	s->ctx = commit - keep;
	/* No escape before `first`; bytes near the end may yet start one once
	 * more input completes it (an OSC sequence is up to 512 bytes). */
	if (first + 600 > len)
		first = len > 600 ? len - 600 : 0;
	s->clean = first > keep ? first - keep : 0;
	/* The kept bytes are scanned: carry the matches that lie in them. */
	s->cur = !s->cur;
	s->rescan = s->overflow || mode == PROCESS_FLUSH;
	s->url_dense = s->nurl > URL_DENSE;
	s->done = s->rescan ? 0 : s->len;
	n = 0;
	for (size_t i = 0; !s->rescan && i < s->npm[s->cur]; i++) {
		struct pmatch m = s->pm[s->cur][i];
		if (m.start >= keep) {
			m.start -= (uint32_t)keep;
			s->pm[s->cur][n++] = m;
		}
	}
	s->npm[s->cur] = n;
	return 0;
}

struct scrub_stream *scrub_stream_new(const struct scrub_rules *r, scrub_emit_fn emit, void *arg)
{
	struct scrub_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->r = r;
	s->emit = emit;
	s->arg = arg;
	s->buf = malloc(WINDOW);
	s->pm[0] = malloc(PM_MAX * sizeof *s->pm[0]);
	s->pm[1] = malloc(PM_MAX * sizeof *s->pm[1]);
	if (!s->buf || !s->pm[0] || !s->pm[1] || hs_clone_scratch(r->scratch, &s->scratch) != HS_SUCCESS) {
		scrub_stream_free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

int scrub_stream_feed(struct scrub_stream *s, const char *buf, size_t len)
{
	while (len > 0) {
		size_t room = WINDOW - s->len, n = len < room ? len : room;
		memcpy(s->buf + s->len, buf, n);
		if (scrub_stream_wrote(s, n) < 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

char *scrub_stream_space(struct scrub_stream *s, size_t *room)
{
	*room = WINDOW - s->len; /* never 0: a full window is processed at once */
	return (char *)s->buf + s->len;
}

int scrub_stream_wrote(struct scrub_stream *s, size_t n)
{
	if (n > WINDOW - s->len)
		n = WINDOW - s->len;
	s->len += n;
	if (s->len > s->buf_used)
		s->buf_used = s->len;
	if (s->len == WINDOW && process(s, PROCESS_FULL) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int scrub_stream_flush(struct scrub_stream *s)
{
	if (s->len <= s->ctx)
		return 0; /* nothing new since the last emit */
	if (process(s, PROCESS_FLUSH) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int scrub_stream_finish(struct scrub_stream *s)
{
	if (process(s, PROCESS_EOF) < 0) {
		errno = ENOMEM;
		return -1;
	}
	s->len = s->ctx = 0;
	s->pem_open = 0;
	s->done = s->clean = 0;
	s->npm[0] = s->npm[1] = 0;
	s->rescan = 0;
	s->url_dense = 0;
	return 0;
}

unsigned long scrub_stream_count(const struct scrub_stream *s)
{
	return s->count;
}

void scrub_stream_free(struct scrub_stream *s)
{
	if (!s)
		return;
	if (s->buf) {
		explicit_bzero(s->buf, s->buf_used);
		free(s->buf);
	}
	if (s->view) {
		explicit_bzero(s->view, s->view_used);
		free(s->view);
	}
	free(s->map);
	free(s->pm[0]);
	free(s->pm[1]);
	free(s->sp);
	hs_free_scratch(s->scratch);
	free(s);
}

struct growbuf {
	char *p;
	size_t len, cap;
	int oom;
};

static void grow_emit(void *arg, const char *buf, size_t len)
{
	struct growbuf *g = arg;
	if (g->oom)
		return;
	if (g->len + len + 1 > g->cap) {
		size_t cap = g->cap ? g->cap : 256;
		char *p;
		while (cap < g->len + len + 1)
			cap *= 2;
		p = realloc(g->p, cap);
		if (!p) {
			g->oom = 1;
			return;
		}
		g->p = p;
		g->cap = cap;
	}
	memcpy(g->p + g->len, buf, len);
	g->len += len;
}

char *scrub_buffer(const struct scrub_rules *r, const char *buf, size_t len, size_t *out_len,
                   unsigned long *count)
{
	struct growbuf g = {0};
	struct scrub_stream *s = scrub_stream_new(r, grow_emit, &g);
	int rc;
	if (!s)
		return NULL;
	rc = scrub_stream_feed(s, buf, len);
	if (rc == 0)
		rc = scrub_stream_finish(s);
	if (count)
		*count = scrub_stream_count(s);
	scrub_stream_free(s);
	grow_emit(&g, "", 0);
	if (rc < 0 || g.oom) {
		free(g.p);
		errno = ENOMEM;
		return NULL;
	}
	g.p[g.len] = 0;
	if (out_len)
		*out_len = g.len;
	return g.p;
}
