/*
 * scrub_detect.c - the named token detectors (SPEC §7, research/secrets.md
 * table A): a literal anchor found by the prefilter, then a validator in C
 * that checks boundaries, charset, length, fixed markers and checksums.
 *
 * Trust: the window holds hostile command output.  Validators never read
 * outside [0, w->len), never loop further than a rule's maximum, and decline
 * (return 0) when a token touches the end of a window that is not the end of
 * the stream: the stream keeps those bytes and asks again with more input.
 *
 * Why no regexes here: anchors make the prefilter cheap, and a validator can
 * check what a regex cannot (a CRC, a decoded JWT header, placeholders).
 * Why boundaries everywhere: base64 dumps and hashes contain every short
 * prefix by chance (research C.14); requiring a non-token byte on both sides
 * is what keeps `AIza`, `SK`, `eyJ` quiet in random data.
 */
#include "scrub_detect.h"
#include "scrub.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

enum {
	CLS_NONE = 0,
	CLS_B62,     /* A-Za-z0-9 */
	CLS_B64U,    /* A-Za-z0-9_- */
	CLS_B64,     /* A-Za-z0-9+/ */
	CLS_B64P,    /* A-Za-z0-9+/= */
	CLS_B64ALL,  /* A-Za-z0-9+/=_- */
	CLS_HEXL,    /* 0-9a-f */
	CLS_HEX,     /* 0-9a-fA-F */
	CLS_B32,     /* A-Z2-7: AWS key ids */
	CLS_W,       /* A-Za-z0-9_ */
	CLS_DASHED,  /* A-Za-z0-9- */
	CLS_DOTTED,  /* A-Za-z0-9_.- */
	CLS_LOWNUM,  /* a-z0-9 */
	CLS_UPNUM,   /* A-Z0-9 */
	CLS_UPDOT,   /* A-Z0-9. */
	CLS_HEXDASH, /* 0-9a-f- */
	CLS_PATH,    /* A-Za-z0-9_/- : webhook URL paths */
	CLS_TEAMS,   /* A-Za-z0-9_/@- */
	CLS_BECH32,  /* bech32 upper case alphabet */
	CLS_DIGIT,
	CLS_NAME,    /* A-Za-z0-9_.- : KEY names */
};

static int is_dig(unsigned c) { return c - '0' < 10; }
static int is_low(unsigned c) { return c - 'a' < 26; }
static int is_up(unsigned c) { return c - 'A' < 26; }
static int is_aln(unsigned c) { return is_dig(c) || is_low(c) || is_up(c); }

static int in_cls(int cls, unsigned char ch)
{
	unsigned c = ch;
	switch (cls) {
	case CLS_B62: return is_aln(c);
	case CLS_B64U: return is_aln(c) || c == '_' || c == '-';
	case CLS_B64: return is_aln(c) || c == '+' || c == '/';
	case CLS_B64P: return is_aln(c) || c == '+' || c == '/' || c == '=';
	case CLS_B64ALL: return is_aln(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
	case CLS_HEXL: return is_dig(c) || c - 'a' < 6;
	case CLS_HEX: return is_dig(c) || c - 'a' < 6 || c - 'A' < 6;
	case CLS_B32: return is_up(c) || c - '2' < 6;
	case CLS_W: return is_aln(c) || c == '_';
	case CLS_DASHED: return is_aln(c) || c == '-';
	case CLS_DOTTED:
	case CLS_NAME: return is_aln(c) || c == '_' || c == '.' || c == '-';
	case CLS_LOWNUM: return is_low(c) || is_dig(c);
	case CLS_UPNUM: return is_up(c) || is_dig(c);
	case CLS_UPDOT: return is_up(c) || is_dig(c) || c == '.';
	case CLS_HEXDASH: return is_dig(c) || c - 'a' < 6 || c == '-';
	case CLS_PATH: return is_aln(c) || c == '_' || c == '/' || c == '-';
	case CLS_TEAMS: return is_aln(c) || c == '_' || c == '/' || c == '-' || c == '@';
	case CLS_BECH32: return (is_up(c) || is_dig(c)) && c != '1' && c != 'B' && c != 'I' && c != 'O';
	case CLS_DIGIT: return is_dig(c);
	default: return 0;
	}
}

/* Length of the run of `cls` bytes at `i`, looking at most `max + 1` bytes
 * far.  Sets *open when the run reaches the end of a window that more input
 * may extend: then nothing about the token is known yet. */
static size_t run_len(const struct scrub_window *w, size_t i, int cls, size_t max, int *open)
{
	size_t n = 0;
	while (i + n < w->len && n <= max && in_cls(cls, w->buf[i + n]))
		n++;
	*open = (i + n == w->len && n <= max && !w->eof);
	return n;
}

/* Same, backwards from i (exclusive). */
static size_t run_back(const struct scrub_window *w, size_t i, int cls, size_t max)
{
	size_t n = 0;
	while (n < i && n <= max && in_cls(cls, w->buf[i - n - 1]))
		n++;
	return n;
}

static int left_ok(const struct scrub_window *w, size_t at, int cls)
{
	return at == 0 || !in_cls(cls ? cls : CLS_B62, w->buf[at - 1]);
}

static int hit(struct scrub_hit *out, const struct scrub_rule *r, size_t s, size_t e, int prio)
{
	out->start = s;
	out->end = e;
	out->name = r->name;
	out->prio = prio;
	out->open = 0;
	return 1;
}

/* ---- checksums --------------------------------------------------------- */

unsigned long scrub_detect_crc32(const unsigned char *p, size_t n)
{
	/* Bitwise: it runs only on a candidate token, 30-40 bytes, never on the
	 * stream, so a 1 KiB table would buy nothing. */
	unsigned long crc = 0xffffffffUL;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320UL & (0UL - (crc & 1)));
	}
	return crc ^ 0xffffffffUL;
}

void scrub_detect_base62_crc(const unsigned char *body, size_t n, char out[7])
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	unsigned long v = scrub_detect_crc32(body, n);
	for (int i = 5; i >= 0; i--) {
		out[i] = digits[v % 62];
		v /= 62;
	}
	out[6] = 0;
}

/* GitHub `gh?_` and npm `npm_`: 30 random base62 characters, then the
 * base62 CRC-32 of those 30, zero-padded to 6 (GitHub changelog 2021-03-04,
 * npm token format 2021-09-23).  The check is what lets fixtures such as
 * ghp_000...0 and prose pass while every real token is caught. */
static int check_crc62(const unsigned char *tok, size_t len)
{
	const unsigned char *body = memchr(tok, '_', len);
	char sum[7];
	if (!body || (size_t)(tok + len - body) != 37)
		return 0;
	body++;
	scrub_detect_base62_crc(body, 30, sum);
	return memcmp(body + 30, sum, 6) == 0;
}

/* AWS documents AKIAIOSFODNN7EXAMPLE; gitleaks allow-lists the suffix. */
static int check_not_example(const unsigned char *tok, size_t len)
{
	return !(len >= 7 && memcmp(tok + len - 7, "EXAMPLE", 7) == 0);
}

static int check_suffix_aa(const unsigned char *tok, size_t len)
{
	return len > 2 && tok[len - 2] == 'A' && tok[len - 1] == 'A';
}

/* SendGrid: SG.<22>.<43>. */
static int check_sendgrid(const unsigned char *tok, size_t len)
{
	return len == 69 && tok[25] == '.' && !memchr(tok + 3, '.', 22) && !memchr(tok + 26, '.', 43);
}

/* Dynatrace: dt0c01.<24>.<64>. */
static int check_dynatrace(const unsigned char *tok, size_t len)
{
	return len == 96 && tok[31] == '.';
}

/* A body that is one repeated character or only 'x' is a placeholder. */
static int check_not_filler(const unsigned char *tok, size_t len)
{
	const unsigned char *u = memchr(tok, '_', len);
	size_t i = u ? (size_t)(u - tok) + 1 : 0, same = 0;
	for (size_t k = i + 1; k < len; k++)
		same += tok[k] == tok[i];
	return len - i < 2 || same + 1 < len - i;
}

/* ---- generic: literal prefix + body run --------------------------------- */

static int v_prefix(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                    struct scrub_hit *out)
{
	int open;
	size_t n;
	if (!left_ok(w, at, r->lbound))
		return 0;
	n = run_len(w, at + alen, r->cls, r->max, &open);
	if (open || n < r->min || n > r->max)
		return 0;
	if (at + alen + n < w->len && is_aln(w->buf[at + alen + n]))
		return 0; /* the token runs on in letters its class lacks */
	if (r->check && !r->check(w->buf + at, alen + n))
		return 0;
	return hit(out, r, at, at + alen + n, SCRUB_PRIO_TOKEN);
}

/* ---- formats anchored in the middle ------------------------------------- */

/* OpenAI keys embed T3BlbkFJ (base64 "OpenAI"): find the token around it and
 * require it to start with sk-. */
static int v_openai(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                    struct scrub_hit *out)
{
	int open;
	size_t back = run_back(w, at, CLS_B64U, 200), fwd;
	size_t s = at - back;
	if (back > 200 || back < 20 || w->len - s < 3 || memcmp(w->buf + s, "sk-", 3) != 0)
		return 0;
	fwd = run_len(w, at + alen, CLS_B64U, 200, &open);
	if (open || fwd < 20 || fwd > 200)
		return 0;
	return hit(out, r, s, at + alen + fwd, SCRUB_PRIO_TOKEN);
}

/* Azure AD client secret: 3 chars, a digit, "Q~", 31-34 more.  The anchors
 * are "0Q~" to "9Q~": a 2-byte literal costs the literal matcher more than ten
 * 3-byte ones (measured: ~7% of the scan for "SK", "Q~" and ":AA"). */
static int v_azure_ad(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                      struct scrub_hit *out)
{
	int open;
	size_t n, s;
	at += alen - 2; /* the anchor is the digit before "Q~" and "Q~" */
	alen = 2;
	if (at < 4 || !is_dig(w->buf[at - 1]))
		return 0;
	s = at - 4;
	for (size_t i = s; i < at - 1; i++)
		if (!(is_aln(w->buf[i]) || w->buf[i] == '_' || w->buf[i] == '~' || w->buf[i] == '.'))
			return 0;
	if (!left_ok(w, s, CLS_DOTTED) || (s > 0 && w->buf[s - 1] == '~'))
		return 0;
	n = 0;
	while (at + alen + n < w->len && n <= 34 &&
	       (in_cls(CLS_DOTTED, w->buf[at + alen + n]) || w->buf[at + alen + n] == '~'))
		n++;
	open = at + alen + n == w->len && !w->eof;
	if (open || n < 31 || n > 34)
		return 0;
	return hit(out, r, s, at + alen + n, SCRUB_PRIO_TOKEN);
}

/* Terraform Cloud: <14 base62>.atlasv1.<60-70 base64url>. */
static int v_atlas(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                   struct scrub_hit *out)
{
	int open;
	size_t back = run_back(w, at, CLS_B62, 14), n;
	if (back != 14 || !left_ok(w, at - 14, CLS_B64U))
		return 0;
	n = run_len(w, at + alen, CLS_B64U, 70, &open);
	if (open || n < 60 || n > 70)
		return 0;
	return hit(out, r, at - 14, at + alen + n, SCRUB_PRIO_TOKEN);
}

/* Telegram bot token: 8-10 digits ":" "AA" + 33 base64url (anchors "0:AA"
 * to "9:AA"). */
static int v_telegram(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                      struct scrub_hit *out)
{
	int open;
	size_t back, n;
	at += alen - 3; /* the anchor is the bot id's last digit and ":AA" */
	alen = 3;
	back = run_back(w, at, CLS_DIGIT, 10);
	if (back < 8 || back > 10) /* "bot123:AA.." in API URLs: letters may precede */
		return 0;
	n = run_len(w, at + alen, CLS_B64U, 33, &open);
	if (open || n != 33)
		return 0;
	return hit(out, r, at + 1, at + alen + n, SCRUB_PRIO_TOKEN); /* keep the bot id */
}

/* Slack/Discord/Teams webhooks: the secret is the URL path after the anchor. */
static int v_webhook(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                     struct scrub_hit *out)
{
	int open;
	size_t n = run_len(w, at + alen, r->cls, r->max, &open);
	if (open || n < r->min || n > r->max)
		return 0;
	return hit(out, r, at + alen, at + alen + n, SCRUB_PRIO_TOKEN);
}

/* ---- JWT ---------------------------------------------------------------- */

static int b64url_val(unsigned char c)
{
	if (is_up(c)) return c - 'A';
	if (is_low(c)) return c - 'a' + 26;
	if (is_dig(c)) return c - '0' + 52;
	if (c == '-' || c == '+') return 62;
	if (c == '_' || c == '/') return 63;
	return -1;
}

/* Decode up to 96 bytes of base64url; returns the decoded length. */
static size_t b64url_decode(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
	unsigned long acc = 0;
	int bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < n && o < cap; i++) {
		int v = b64url_val(in[i]);
		if (v < 0)
			break;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return o;
}

/* header.payload.signature, each base64url, header decoding to JSON with an
 * "alg" or "typ" member: a bare eyJ... base64 blob is not a JWT. */
static int v_jwt(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                 struct scrub_hit *out)
{
	int open;
	size_t h, p, sig, e;
	unsigned char dec[96];
	size_t dn;
	(void)alen;
	if (!left_ok(w, at, CLS_B64U) || (at > 0 && w->buf[at - 1] == '.'))
		return 0;
	h = run_len(w, at, CLS_B64U, 2048, &open);
	if (open || h < 10 || h > 2048 || at + h >= w->len || w->buf[at + h] != '.')
		return 0;
	dn = b64url_decode(w->buf + at, h < 128 ? h : 128, dec, sizeof dec);
	if (!memmem(dec, dn, "\"alg\"", 5) && !memmem(dec, dn, "\"typ\"", 5))
		return 0;
	p = run_len(w, at + h + 1, CLS_B64U, 6000, &open);
	if (open || p < 10 || p > 6000 || at + h + 1 + p >= w->len || w->buf[at + h + 1 + p] != '.')
		return 0;
	sig = run_len(w, at + h + p + 2, CLS_B64U, 1024, &open);
	e = at + h + p + 2 + sig;
	if (open || sig < 16 || sig > 1024 || (e < w->len && w->buf[e] == '.'))
		return 0;
	return hit(out, r, at, e, SCRUB_PRIO_TOKEN);
}

/* ---- PEM private key blocks --------------------------------------------- */

const char scrub_detect_pem_name[] = "private-key";

/* Bytes a PEM body (and its RFC 1421 / RFC 4880 headers) may contain:
 * base64, whitespace, "Proc-Type: 4,ENCRYPTED"-style headers, diff and
 * quote markers.  Source code quoting the BEGIN line has quotes, semicolons,
 * parentheses and so never looks like a body. */
static int pem_body_byte(unsigned char c)
{
	return in_cls(CLS_B64P, c) || c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == ':' ||
	       c == ',' || c == '-' || c == '.' || c == '>' || c == '<' || c == '#' || c == '|' || c == '*';
}

/* From `from`, the end of the END line, or the first byte that cannot be in
 * a body (*status 1 = END found, 0 = stopped, 2 = reached the window end). */
static size_t pem_scan(const struct scrub_window *w, size_t from, size_t *b64, int *status)
{
	size_t i = from;
	*b64 = 0;
	while (i < w->len) {
		unsigned char c = w->buf[i];
		if (c == '-' && w->len - i >= 9 && memcmp(w->buf + i, "-----END ", 9) == 0) {
			size_t j = i + 9;
			while (j < w->len && j - i < 80 && (is_up(w->buf[j]) || is_dig(w->buf[j]) || w->buf[j] == ' '))
				j++;
			if (w->len - j >= 5 && memcmp(w->buf + j, "-----", 5) == 0) {
				*status = 1;
				return j + 5;
			}
			if (j == w->len || w->len - j < 5) {
				*status = 2;
				return w->len;
			}
			*status = 0;
			return i;
		}
		if (c == 0x1b && (i + 1 == w->len || w->buf[i + 1] == '[')) { /* colour: grep --color, ls */
			size_t k = i + 2;
			while (k < w->len && k - i < 32 && w->buf[k] >= 0x20 && w->buf[k] <= 0x3f)
				k++;
			if (k >= w->len) {
				*status = 2;
				return w->len;
			}
			if (w->buf[k] >= 0x40 && w->buf[k] <= 0x7e) {
				i = k + 1;
				continue;
			}
		}
		if (!pem_body_byte(c)) {
			*status = 0;
			return i;
		}
		*b64 += is_aln(c);
		i++;
	}
	*status = 2;
	return i;
}

static int v_pem(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                 struct scrub_hit *out)
{
	size_t i = at + alen, label = i, b64, end;
	int status;
	const char *name = r->name;
	while (i < w->len && i - label < 64 && (is_up(w->buf[i]) || is_dig(w->buf[i]) || w->buf[i] == ' '))
		i++;
	if (w->len - i < 5) /* header itself incomplete */
		return 0;
	if (memcmp(w->buf + i, "-----", 5) != 0 || !memmem(w->buf + label, i - label, "PRIVATE KEY", 11))
		return 0;
	if (memmem(w->buf + label, i - label, "OPENSSH", 7))
		name = "openssh-private-key";
	else if (memmem(w->buf + label, i - label, "PGP", 3))
		name = "pgp-private-key";
	end = pem_scan(w, i + 5, &b64, &status);
	if (status == 1 || (status == 0 && b64 >= 64)) {
		/* An END line, or a body cut short by foreign text (a truncated
		 * paste): redact what was key material. */
		if (b64 < 32)
			return 0; /* a template like "...", or the BEGIN line quoted in code */
		hit(out, r, at, end, SCRUB_PRIO_TOKEN);
		out->name = name;
		return 1;
	}
	if (status == 0)
		return 0;
	/* Body runs to the end of the window. */
	if (w->eof) {
		if (b64 < 32)
			return 0;
		hit(out, r, at, w->len, SCRUB_PRIO_TOKEN);
		out->name = name;
		return 1;
	}
	if (at >= w->commit)
		return 0; /* undecided: the stream holds these bytes and asks again */
	/* A block longer than the hold-back: fail closed, redact to the end of
	 * the window and keep redacting until its END line. */
	hit(out, r, at, w->len, SCRUB_PRIO_TOKEN);
	out->name = name;
	out->open = 1;
	return 1;
}

size_t scrub_detect_pem_continue(const struct scrub_window *w, size_t from, int *still_open)
{
	size_t b64;
	int status;
	size_t end = pem_scan(w, from, &b64, &status);
	*still_open = status == 2 && !w->eof;
	return end;
}

/* PuTTY: "Private-Lines: N" then N lines of base64. */
static int v_putty(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                   struct scrub_hit *out)
{
	size_t i = at + alen, lines = 0, start;
	while (i < w->len && is_dig(w->buf[i]) && lines < 1000)
		lines = lines * 10 + (w->buf[i++] - '0');
	if (lines == 0 || lines > 200)
		return 0;
	while (i < w->len && (w->buf[i] == '\r' || w->buf[i] == '\n'))
		i++;
	start = i;
	for (size_t l = 0; l < lines; l++) {
		while (i < w->len && in_cls(CLS_B64P, w->buf[i]))
			i++;
		if (i == w->len) {
			if (i == start || (!w->eof && at >= w->commit))
				return 0; /* undecided: the stream holds these bytes */
			hit(out, r, start, i, SCRUB_PRIO_TOKEN);
			out->open = !w->eof; /* a flush would emit the lines so far: fail closed */
			return 1;
		}
		if (l + 1 < lines) {
			if (w->buf[i] == '\r')
				i++;
			if (i < w->len && w->buf[i] == '\n')
				i++;
		}
	}
	return i > start ? hit(out, r, start, i, SCRUB_PRIO_TOKEN) : 0;
}

/* ---- context rules: values behind names --------------------------------- */

/* Placeholders and templates are not secrets (research C.10, C.11). */
static int placeholder(const unsigned char *v, size_t n)
{
	static const char *const words[] = {"xxxx", "XXXX", "****", "REDACTED", "redacted", "changeme",
	                                    "[filtered", "example", "EXAMPLE", "your_", "YOUR_", "<", "...",
	                                    "${", "{{", "$("};
	/* The name standing in for the value, as in the docs' favourite
	 * "https://user:password@host". */
	static const char *const names[] = {"password", "passwd", "pass", "pwd", "secret", "token"};
	if (n == 0 || v[0] == '$' || v[0] == '%' || v[0] == '<' || v[0] == '[' || v[0] == '{' || v[0] == '*')
		return 1;
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
		if (strlen(names[k]) == n && strncasecmp((const char *)v, names[k], n) == 0)
			return 1;
	for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
		if (memmem(v, n, words[k], strlen(words[k])))
			return 1;
	return 0;
}

/* Something worth hiding: not an identifier, a path, a number or code. */
static int secret_value(const unsigned char *v, size_t n)
{
	int lo = 0, up = 0, dg = 0, sym = 0, seen[256] = {0}, distinct = 0;
	if (n < 8 || n > 256 || placeholder(v, n) || v[0] == '/' || v[0] == '.' || v[0] == '~')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = v[i];
		if (c == '(' || c == ')' || c == ';' || c == '"' || c == '\'' || c == '>' || c == '\\' ||
		    c == ',' || c == '`' || c == '[' || c == ']' || c == '{' || c == '}' || c == '|' ||
		    c < 0x20 || c >= 0x7f)
			return 0; /* code, or a quoted list, not a value */
		lo |= is_low(c);
		up |= is_up(c);
		dg |= is_dig(c);
		sym |= !is_aln(c) && c != '_' && c != '-' && c != '.';
		distinct += !seen[c]++;
	}
	if (!dg && !sym && !(lo && up && distinct >= 10 && !memchr(v, '_', n) && !memchr(v, '.', n)))
		return 0; /* an identifier: `self.password = password_field`, `x.Token` */
	if (!lo && !up && !sym)
		return 0; /* a number */
	return distinct >= 5;
}

/* A name part that reads as words: letters and '_', all lower case, all upper
 * case, or CamelCase (every lower-case run at least 2 letters, one of them 3
 * or more: "RSAPrivateKey"), with numbers only where names put them: at the
 * end or between words ("Tokenizer2", "PBKDF2PasswordHasher",
 * "Base64Encoder").  Random strings alternate case in short runs and have
 * digits anywhere. */
static int wordlike(const unsigned char *v, size_t n)
{
	size_t run = 0, longest = 0;
	int lo = 0, up = 0, short_run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = v[i];
		if (is_low(c)) {
			run++;
			lo = 1;
			continue;
		}
		if (is_dig(c)) {
			size_t j = i;
			while (j < n && is_dig(v[j]))
				j++;
			if (j < n && (i == 0 || !(is_up(v[i - 1]) || run >= 3) || !(is_up(v[j]) || v[j] == '_')))
				return 0;
			i = j - 1;
		} else if (!is_up(c) && c != '_') {
			return 0;
		}
		up |= is_up(c);
		if (run == 1 && up)
			short_run = 1;
		if (run > longest)
			longest = run;
		run = 0;
	}
	if (run == 1 && up)
		short_run = 1;
	if (run > longest)
		longest = run;
	return n > 0 && (!(lo && up) || (!short_run && longest >= 3));
}

/* Whether v[0, n) is a dotted chain of identifiers, each wordlike when
 * `words`; returns the number of parts, 0 if not such a chain. */
static size_t ident_chain(const unsigned char *v, size_t n, int words)
{
	size_t parts = 0, i = 0;
	while (i < n) {
		size_t s = i;
		if (!(is_up(v[i]) || is_low(v[i]) || v[i] == '_'))
			return 0;
		while (i < n && (is_aln(v[i]) || v[i] == '_'))
			i++;
		if (words && !wordlike(v + s, i - s))
			return 0;
		parts++;
		if (i < n && (v[i] != '.' || ++i == n))
			return 0;
	}
	return parts;
}

/* An unquoted value that reads as code, not data: an attribute chain
 * (`settings.SECRET_KEY2`), a type name (`PasswordField`), or the first item
 * of a list, tuple or union of names (`RSAPrivateKey, DSAPrivateKey`,
 * `A | B`).  `after` is the byte after the value and what follows. */
static int code_value(const unsigned char *v, size_t n, const unsigned char *after, size_t left)
{
	size_t parts = ident_chain(v, n, 1), i = 0;
	if (parts >= 2 || (parts == 1 && wordlike(v, n) && !is_dig(v[n - 1])))
		return 1;
	if (!parts)
		return 0;
	while (i < left && after[i] == ' ')
		i++;
	if (i == left || (after[i] != ',' && after[i] != '|'))
		return 0;
	for (i++; i < left && after[i] == ' '; i++)
		;
	return i < left && (is_up(after[i]) || is_low(after[i]) || after[i] == '_');
}

/* Names that look secret but hold something else. */
static int name_is_indirect(const unsigned char *n, size_t len)
{
	static const char *const sfx[] = {"_file", "_path", "_id", "_name", "_type", "_len", "_length",
	                                  "_size", "_count", "_dir", "_url", "_uri", "_env", "_header",
	                                  "_max", "_min", "_ttl", "_expiry", "_expires"};
	for (size_t k = 0; k < sizeof sfx / sizeof sfx[0]; k++) {
		size_t sl = strlen(sfx[k]);
		if (len >= sl && strncasecmp((const char *)n + len - sl, sfx[k], sl) == 0)
			return 1;
	}
	return 0;
}

/* Whether the name starting at ns directly follows one of our own markers
 * ("[filtered: x]").  The name's characters before the marker were part of
 * what it replaced: in the first pass they made the name longer than a name
 * may be, so the second pass must not see a short one (idempotence; found
 * by fuzz_scrub). */
static int after_marker(const struct scrub_window *w, size_t ns)
{
	const unsigned char *b = w->buf;
	if (ns == 0 || b[ns - 1] != ']')
		return 0;
	for (size_t k = ns - 1; k > 0 && ns - k < 64; k--)
		if (b[k - 1] == '[')
			return ns - k >= 11 && memcmp(b + k - 1, "[filtered: ", 11) == 0;
	return 0;
}

int scrub_detect_next_to_marker(const struct scrub_window *w, size_t s, size_t e)
{
	return after_marker(w, s) || (w->len - e >= 11 && memcmp(w->buf + e, "[filtered: ", 11) == 0);
}

/* KEY=value, KEY: value, "key": "value", --key=value where the name holds a
 * secret word.  Only the value is redacted. */
static int v_assign(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                    struct scrub_hit *out)
{
	const unsigned char *b = w->buf;
	size_t ns = at - run_back(w, at, CLS_NAME, 64), ne = at + alen, i, vs, ve;
	unsigned char q = 0;
	while (ne < w->len && ne - ns <= 80 && in_cls(CLS_NAME, b[ne]))
		ne++;
	if (ne - ns > 80 || name_is_indirect(b + ns, ne - ns) || after_marker(w, ns))
		return 0;
	i = ne;
	if (i < w->len && (b[i] == '"' || b[i] == '\''))
		i++;
	while (i < w->len && b[i] == ' ')
		i++;
	if (i >= w->len)
		return 0;
	if (b[i] == ':' && i + 1 < w->len && b[i + 1] == '=')
		i++;
	if ((b[i] != '=' && b[i] != ':') || (b[i] == ':' && i + 1 < w->len && b[i + 1] == ':'))
		return 0; /* C++ `AsmToken::Kind` is a scope, not an assignment */
	i++;
	while (i < w->len && (b[i] == ' ' || b[i] == '\t') && i - ne < 16)
		i++;
	if (i < w->len && (b[i] == '"' || b[i] == '\''))
		q = b[i++];
	vs = i;
	while (i < w->len && i - vs <= 256 && b[i] != '\n' && b[i] != '\r' &&
	       (q ? b[i] != q : (b[i] != ' ' && b[i] != '\t' && b[i] != '"' && b[i] != '\'' && b[i] != ';' &&
	                         b[i] != ',' && b[i] != '&')))
		i++;
	if (i == w->len && !w->eof)
		return 0;
	ve = i;
	if (q && (i >= w->len || b[i] != q))
		return 0;
	if (!secret_value(b + vs, ve - vs) || (!q && code_value(b + vs, ve - vs, b + ve, w->len - ve)))
		return 0;
	return hit(out, r, vs, ve, SCRUB_PRIO_GENERIC);
}

/* Authorization: <scheme> <credentials> (also Proxy-Authorization, JSON and
 * curl -H forms).  The scheme stays, the credentials go. */
static int v_authz(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                   struct scrub_hit *out)
{
	const unsigned char *b = w->buf;
	size_t i = at + alen, ws, vs;
	if (!left_ok(w, at, CLS_B62) && b[at - 1] != '-')
		return 0;
	if (i < w->len && (b[i] == '"' || b[i] == '\''))
		i++;
	while (i < w->len && b[i] == ' ')
		i++;
	if (i >= w->len || (b[i] != ':' && b[i] != '='))
		return 0;
	i++;
	while (i < w->len && (b[i] == ' ' || b[i] == '"' || b[i] == '\''))
		i++;
	ws = i;
	while (i < w->len && i - ws < 32 && (is_aln(b[i]) || b[i] == '-'))
		i++;
	if (i < w->len && b[i] == ' ' && i > ws) {
		while (i < w->len && b[i] == ' ')
			i++;
	} else {
		i = ws; /* no scheme: the whole value is the credential */
	}
	vs = i;
	while (i < w->len && i - vs <= 4096 && b[i] > ' ' && b[i] < 0x7f && b[i] != '"' && b[i] != '\'' &&
	       b[i] != '\\') /* a JSON escape ends it here; the decoded view sees the rest */
		i++;
	if (i == w->len && !w->eof)
		return 0;
	if (i - vs < 8 || i - vs > 4096 || placeholder(b + vs, i - vs))
		return 0;
	return hit(out, r, vs, i, SCRUB_PRIO_GENERIC);
}

static int scheme_is_db(const unsigned char *s, size_t n)
{
	static const char *const db[] = {"postgres", "postgresql", "mysql", "mysqlx", "mariadb", "mongodb",
	                                 "mongodb+srv", "redis", "rediss", "amqp", "amqps", "sqlserver",
	                                 "mssql", "clickhouse", "cockroachdb", "oracle", "couchdb", "neo4j",
	                                 "memcached", "jdbc:postgresql", "jdbc:mysql", "jdbc:sqlserver"};
	for (size_t k = 0; k < sizeof db / sizeof db[0]; k++)
		if (strlen(db[k]) == n && strncasecmp((const char *)s, db[k], n) == 0)
			return 1;
	return 0;
}

/* Printable ASCII but none of : / @ [ " ' < > ? # - one bit test (this runs
 * for every "://", which JSON and build logs hold on almost every line). */
static int url_user_byte(unsigned char c)
{
	static const uint64_t no[2] = {
		(1ull << ':') | (1ull << '/') | (1ull << '"') | (1ull << '\'') | (1ull << '<') | (1ull << '>') |
			(1ull << '?') | (1ull << '#') | 0xffffffffull | (1ull << ' '),
		(1ull << ('@' - 64)) | (1ull << ('[' - 64)) | (1ull << (0x7f - 64)),
	};
	return c < 0x80 && !((no[c >> 6] >> (c & 63)) & 1);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* v_url's first loop for 32 bytes at once: the bytes url_user_byte refuses
 * (the same set: controls, space, DEL and bytes >= 0x80 by one signed
 * compare, then the ten punctuation marks) make a mask; its lowest bit is
 * where that loop stops.  If it stops there at anything but ':', v_url
 * returns 0 whatever follows, so the caller need not call it.  JSON
 * records and build logs hold a "://" every 200-500 bytes, nearly all of
 * them "https://host/...": calling the validator for each cost 0.19-0.24
 * ns per byte there (measured on bench-filter-classes, session 7). */
__attribute__((target("avx2"))) int scrub_detect_url_no_user(const unsigned char *p)
{
	/* The set as nibble tables (a byte is in it when its low nibble's and
	 * its high nibble's entries share a bit): bit 0 every byte whose high
	 * nibble is 0, 1 or 8-f (controls, >= 0x80); bit 1 0x2_: space " # ' /;
	 * bit 2 0x3_: : < > ?; bit 3 '@'; bit 4 '['; bit 5 DEL.  Two shuffles
	 * instead of eleven compares and a signed one: this runs for every
	 * "://" (~3,900 per MB of JSON records). */
#define LO 11, 1, 3, 3, 1, 1, 1, 3, 1, 1, 5, 17, 5, 1, 5, 39
#define HI 1, 1, 2, 4, 8, 16, 0, 32, 1, 1, 1, 1, 1, 1, 1, 1
	const __m256i lo_t = _mm256_setr_epi8(LO, LO), hi_t = _mm256_setr_epi8(HI, HI), low4 = _mm256_set1_epi8(0x0f);
#undef LO
#undef HI
	__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i lo = _mm256_shuffle_epi8(lo_t, _mm256_and_si256(x, low4));
	__m256i hi = _mm256_shuffle_epi8(hi_t, _mm256_and_si256(_mm256_srli_epi16(x, 4), low4));
	__m256i none = _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi), _mm256_setzero_si256());
	uint32_t bits = ~(uint32_t)_mm256_movemask_epi8(none);
	return bits != 0 && p[__builtin_ctz(bits)] != ':';
}
#endif

/* scheme://user:password@host - the password goes (anchor "://").  The
 * user part is looked at first: most URLs have none, and their host ends
 * at a '/', '?' or '"' within a few bytes, before the scheme is read. */
static int v_url(const struct scrub_rule *r, const struct scrub_window *w, size_t at, size_t alen,
                 struct scrub_hit *out)
{
	const unsigned char *b = w->buf;
	size_t s = at, i = at + alen, ps;
	while (i < w->len && i - at < 160 && url_user_byte(b[i]))
		i++;
	if (i >= w->len || b[i] != ':')
		return 0;
	while (s > 0 && at - s < 24 && (is_aln(b[s - 1]) || b[s - 1] == '+' || b[s - 1] == '.' ||
	                                b[s - 1] == '-' || b[s - 1] == ':'))
		s--;
	if (s == at)
		return 0;
	ps = ++i;
	while (i < w->len && i - ps <= 256 && b[i] > ' ' && b[i] < 0x7f && b[i] != '@' && b[i] != '/' &&
	       b[i] != '"' && b[i] != '\'' && b[i] != '<' && b[i] != '>')
		i++;
	if (i >= w->len || b[i] != '@' || i == ps || placeholder(b + ps, i - ps))
		return 0;
	hit(out, r, ps, i, SCRUB_PRIO_GENERIC);
	out->name = scheme_is_db(b + s, at - s) ? "database-url-password" : "url-password";
	return 1;
}

/* ---- the table ---------------------------------------------------------- */

#define TOK(nm, cl, mn, mx, ...) {.name = nm, .anchors = {__VA_ARGS__, NULL}, .validate = v_prefix, .cls = cl, .min = mn, .max = mx}
#define TOKC(nm, cl, mn, mx, ck, ...) {.name = nm, .anchors = {__VA_ARGS__, NULL}, .validate = v_prefix, .cls = cl, .min = mn, .max = mx, .check = ck}
#define TOKB(nm, cl, mn, mx, lb, ck, ...) {.name = nm, .anchors = {__VA_ARGS__, NULL}, .validate = v_prefix, .cls = cl, .min = mn, .max = mx, .lbound = lb, .check = ck}
#define CUSTOM(nm, fn, ...) {.name = nm, .anchors = {__VA_ARGS__, NULL}, .validate = fn}
#define NAMEONLY(nm) {.name = nm, .anchors = {NULL}}

const struct scrub_rule scrub_detect_rules[] = {
	/* private keys */
	CUSTOM("private-key", v_pem, "-----BEGIN "),
	NAMEONLY("openssh-private-key"),
	NAMEONLY("pgp-private-key"),
	CUSTOM("putty-private-key", v_putty, "Private-Lines: "),
	TOKB("age-secret-key", CLS_BECH32, 58, 58, CLS_B62, NULL, "AGE-SECRET-KEY-1"),
	CUSTOM("jwt", v_jwt, "eyJ"),
	/* VCS and registries */
	TOKC("github-pat", CLS_B62, 36, 36, check_crc62, "ghp_"),
	TOKC("github-oauth-token", CLS_B62, 36, 36, check_crc62, "gho_"),
	TOKC("github-user-token", CLS_B62, 36, 36, check_crc62, "ghu_"),
	TOKC("github-app-token", CLS_B62, 36, 36, check_crc62, "ghs_"),
	TOKC("github-refresh-token", CLS_B62, 36, 36, check_crc62, "ghr_"),
	TOK("github-fine-grained-pat", CLS_W, 82, 255, "github_pat_"),
	TOKC("gitlab-pat", CLS_DOTTED, 20, 300, check_not_filler, "glpat-"),
	TOKC("gitlab-runner-token", CLS_DOTTED, 20, 300, check_not_filler, "glrt-", "GR1348941"),
	TOKC("gitlab-deploy-token", CLS_DOTTED, 20, 300, check_not_filler, "gldt-"),
	TOK("gitlab-trigger-token", CLS_HEXL, 40, 40, "glptt-"),
	TOKC("gitlab-token", CLS_DOTTED, 20, 300, check_not_filler, "glft-", "glimt-", "glagent-", "gloas-",
	     "glsoat-", "glffct-", "glcbt-"),
	TOKC("npm-token", CLS_B62, 36, 36, check_crc62, "npm_"),
	TOK("pypi-token", CLS_B64U, 50, 1000, "pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"),
	TOK("rubygems-api-key", CLS_HEXL, 48, 48, "rubygems_"),
	TOK("dockerhub-token", CLS_B64U, 27, 40, "dckr_pat_", "dckr_oat_"),
	TOK("artifactory-api-key", CLS_B62, 69, 69, "AKCp"),
	TOK("artifactory-reference-token", CLS_B62, 56, 59, "cmVmdGtu"),
	TOK("bitbucket-app-password", CLS_B64ALL, 24, 100, "ATBB"),
	TOK("atlassian-api-token", CLS_B64ALL, 180, 200, "ATATT3"),
	/* cloud */
	TOKB("aws-access-key-id", CLS_B32, 16, 16, CLS_B62, check_not_example, "AKIA", "ASIA", "ABIA", "ACCA"),
	TOK("aws-bedrock-api-key", CLS_B64P, 109, 269, "ABSKQmVkcm9jaw"),
	TOKB("google-api-key", CLS_B64U, 35, 35, CLS_B64U, NULL, "AIza"),
	TOK("google-oauth-token", CLS_DOTTED, 30, 2048, "ya29."),
	CUSTOM("azure-ad-client-secret", v_azure_ad, "0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~",
	       "9Q~"),
	TOK("azure-storage-key", CLS_B64P, 86, 88, "AccountKey="),
	TOK("digitalocean-pat", CLS_HEXL, 64, 64, "dop_v1_"),
	TOK("digitalocean-oauth-token", CLS_HEXL, 64, 64, "doo_v1_"),
	TOK("digitalocean-refresh-token", CLS_HEXL, 64, 64, "dor_v1_"),
	TOKB("alibaba-access-key-id", CLS_B62, 20, 20, CLS_B62, NULL, "LTAI"),
	CUSTOM("terraform-cloud-token", v_atlas, ".atlasv1."),
	TOK("vault-service-token", CLS_B64U, 90, 120, "hvs."),
	TOK("vault-batch-token", CLS_B64U, 138, 300, "hvb."),
	TOK("vault-recovery-token", CLS_B64U, 90, 120, "hvr."),
	TOK("flyio-token", CLS_B64ALL, 43, 1000, "fo1_", "fm1a_", "fm1r_", "fm2_"),
	TOK("cloudflare-api-token", CLS_B62, 48, 48, "cfut_", "cfat_", "cfk_"),
	TOK("heroku-api-key", CLS_B64U, 58, 58, "HRKU-AA"),
	TOK("databricks-token", CLS_HEXL, 32, 32, "dapi"),
	TOK("doppler-token", CLS_B62, 40, 44, "dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
	TOK("pulumi-token", CLS_HEXL, 40, 40, "pul-"),
	TOK("planetscale-token", CLS_DOTTED, 32, 64, "pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
	TOK("supabase-token", CLS_LOWNUM, 40, 40, "sbp_"),
	TOK("tailscale-key", CLS_DASHED, 20, 128, "tskey-"),
	TOKC("dynatrace-token", CLS_UPDOT, 89, 89, check_dynatrace, "dt0c01."),
	TOK("grafana-service-account-token", CLS_W, 41, 41, "glsa_"),
	TOK("grafana-cloud-token", CLS_B64P, 32, 400, "glc_eyJ"),
	TOK("grafana-api-key", CLS_B64P, 70, 400, "eyJrIjoi"),
	TOK("sentry-user-token", CLS_HEXL, 64, 64, "sntryu_"),
	TOK("sentry-org-token", CLS_B64ALL, 50, 400, "sntrys_eyJpYXQiO"),
	TOK("newrelic-api-key", CLS_UPNUM, 27, 27, "NRAK-"),
	TOK("onepassword-service-token", CLS_B64P, 250, 4000, "ops_eyJ"),
	TOK("scalingo-token", CLS_B64U, 48, 48, "tk-us-"),
	/* chat */
	TOK("slack-bot-token", CLS_DASHED, 30, 255, "xoxb-"),
	TOK("slack-user-token", CLS_DASHED, 30, 255, "xoxp-"),
	TOK("slack-app-token", CLS_DASHED, 30, 255, "xapp-"),
	TOK("slack-config-token", CLS_DASHED, 30, 255, "xoxe.xoxp-", "xoxe.xoxb-", "xoxe-"),
	TOK("slack-legacy-token", CLS_DASHED, 15, 255, "xoxa-", "xoxr-", "xoxo-", "xoxs-"),
	{.name = "slack-webhook", .anchors = {"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/", NULL}, .validate = v_webhook, .cls = CLS_PATH, .min = 20, .max = 160},
	{.name = "discord-webhook", .anchors = {"discord.com/api/webhooks/", "discordapp.com/api/webhooks/", NULL}, .validate = v_webhook, .cls = CLS_PATH, .min = 60, .max = 160},
	{.name = "teams-webhook", .anchors = {".webhook.office.com/webhookb2/", NULL}, .validate = v_webhook, .cls = CLS_TEAMS, .min = 60, .max = 400},
	CUSTOM("telegram-bot-token", v_telegram, "0:AA", "1:AA", "2:AA", "3:AA", "4:AA", "5:AA", "6:AA", "7:AA",
	       "8:AA", "9:AA"),
	TOK("sendinblue-api-key", CLS_DASHED, 81, 81, "xkeysib-"),
	TOKC("sendgrid-api-key", CLS_DOTTED, 66, 66, check_sendgrid, "SG."),
	/* "SK" and the first hex digit: see azure-ad-client-secret. */
	TOKB("twilio-api-key", CLS_HEXL, 31, 31, CLS_B62, NULL, "SK0", "SK1", "SK2", "SK3", "SK4", "SK5", "SK6", "SK7",
	     "SK8", "SK9", "SKa", "SKb", "SKc", "SKd", "SKe", "SKf"),
	/* payment and commerce */
	TOK("stripe-secret-key", CLS_B62, 20, 247, "sk_live_", "sk_test_"),
	TOK("stripe-restricted-key", CLS_B62, 20, 247, "rk_live_", "rk_test_"),
	TOK("square-token", CLS_B64U, 22, 60, "sq0atp-", "sq0csp-"),
	TOKB("square-access-token", CLS_B64U, 60, 60, CLS_B64U, NULL, "EAAA"),
	TOK("shopify-token", CLS_HEX, 32, 32, "shpat_", "shpca_", "shppa_", "shpss_"),
	TOK("easypost-api-key", CLS_B62, 54, 54, "EZAK", "EZTK"),
	TOK("shippo-api-token", CLS_HEXL, 40, 40, "shippo_live_", "shippo_test_"),
	/* AI providers */
	CUSTOM("openai-api-key", v_openai, "T3BlbkFJ"),
	TOKC("anthropic-api-key", CLS_B64U, 80, 120, check_suffix_aa, "sk-ant-api03-"),
	TOKC("anthropic-admin-key", CLS_B64U, 80, 120, check_suffix_aa, "sk-ant-admin01-"),
	TOK("huggingface-token", CLS_B62, 34, 34, "hf_"),
	TOK("huggingface-org-token", CLS_B62, 34, 34, "api_org_"),
	TOK("groq-api-key", CLS_B62, 52, 52, "gsk_"),
	TOK("perplexity-api-key", CLS_B62, 48, 48, "pplx-"),
	TOK("replicate-api-token", CLS_B62, 37, 37, "r8_"),
	/* developer tools */
	TOK("linear-api-key", CLS_B62, 40, 40, "lin_api_"),
	TOK("notion-token", CLS_B62, 46, 46, "ntn_"),
	TOK("postman-api-key", CLS_HEXDASH, 59, 59, "PMAK-"),
	TOK("contentful-token", CLS_B64U, 43, 43, "CFPAT-"),
	TOK("adobe-client-secret", CLS_LOWNUM, 32, 32, "p8e-"),
	TOK("prefect-api-key", CLS_B62, 36, 36, "pnu_"),
	TOK("readme-api-key", CLS_LOWNUM, 64, 70, "rdme_"),
	TOK("mapbox-secret-token", CLS_DOTTED, 80, 300, "sk.eyJ"),
	/* context rules */
	CUSTOM("url-password", v_url, "://"),
	NAMEONLY("database-url-password"),
	{.name = "authorization-header", .anchors = {"authorization", NULL}, .caseless = 1, .validate = v_authz},
	{.name = "secret-assignment", .anchors = {"password", "passwd", "secret", "token", "api_key", "apikey",
	  "api-key", "access_key", "private_key", "credential", NULL}, .caseless = 1, .validate = v_assign},
	{.name = "npmrc-auth-token", .anchors = {"_authToken", NULL}, .validate = v_assign},
};

const size_t scrub_detect_nrules = sizeof scrub_detect_rules / sizeof scrub_detect_rules[0];

size_t scrub_rules_count(const struct scrub_rules *r)
{
	(void)r; /* the detectors are built in; every rules object has them all */
	return scrub_detect_nrules;
}

const char *scrub_rule_name(const struct scrub_rules *r, size_t i)
{
	(void)r;
	return i < scrub_detect_nrules ? scrub_detect_rules[i].name : NULL;
}
