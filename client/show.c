/*
 * show.c - see show.h.  Trust: the text is anyone's; only bytes that are
 * printable UTF-8 and not in the list of format characters leave unescaped.
 */
#include "show.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* One UTF-8 sequence at s (strict: no overlongs, surrogates or > U+10FFFF);
 * its length, or 0 when s[0] does not start one. */
static size_t decode(const unsigned char *s, uint32_t *cp)
{
	size_t n;
	uint32_t c = s[0], min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Characters that change how a terminal shows the text around them, or are
 * invisible: Unicode's Cc and the Cf format characters that matter here
 * (bidi overrides and isolates, CVE-2021-42574 "Trojan Source"). */
static bool hidden(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0xad || c == 0x61c || c == 0x180e ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
	       (c >= 0x205f && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff ||
	       (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffd || (c >= 0xe0000 && c <= 0xe007f);
}

void show_text(FILE *out, const char *s, const char *cont)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		uint32_t c;
		size_t n = decode(p, &c);
		if (n == 0) {
			fprintf(out, "\\x%02x", *p++);
			continue;
		}
		if (c == '\\')
			fputs("\\\\", out);
		else if (c == '\n')
			fprintf(out, "\\n\n%s", cont);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c == 0x1b)
			fputs("\\e", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", (unsigned)c);
		else if (hidden(c))
			fprintf(out, c > 0xffff ? "\\U%08x" : "\\u%04x", (unsigned)c);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
}
