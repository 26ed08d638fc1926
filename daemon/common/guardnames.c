/*
 * guardnames.c - the names of what the person's tools run from (see
 * guardnames.h), as a folding file system compares them.
 */
#include "guardnames.h"
#include "utf8.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

/* The length of a code point that HFS+ or, before Linux 6.13, a
 * casefolding ext4 or f2fs directory ignores in a name, at p; 0 for any
 * other.  HFS+ ignores git's list (is_hfs_dotgit: U+200C-200F,
 * U+202A-202E, U+206A-206F, U+FEFF); the kernel's utf8 tables before 6.13
 * dropped every Default_Ignorable_Code_Point, a superset (review s37 fixes
 * M5).  Ignoring more is safe here: a match only refuses, or lets a run
 * make `.vscode/extensions.json`. */
static size_t ignorable(const unsigned char *p, size_t left)
{
	static const unsigned ranges[][2] = {
	    {0x00ad, 0x00ad},	{0x034f, 0x034f},   {0x061c, 0x061c},	{0x115f, 0x1160},   {0x17b4, 0x17b5},
	    {0x180b, 0x180f},	{0x200b, 0x200f},   {0x202a, 0x202e},	{0x2060, 0x206f},   {0x3164, 0x3164},
	    {0xfe00, 0xfe0f},	{0xfeff, 0xfeff},   {0xffa0, 0xffa0},	{0xfff0, 0xfff8},   {0x1bca0, 0x1bca3},
	    {0x1d173, 0x1d17a}, {0xe0000, 0xe0fff},
	};
	unsigned cp = 0;
	size_t len = utf8_decode((const char *)p, left, &cp); /* strict: an overlong is another name */
	for (size_t i = 0; len > 1 && i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return len;
	return 0;
}

/* The ASCII letter a code point at p folds to in Unicode case folding,
 * which a casefolding ext4 or f2fs directory applies (U+017F long s to
 * `s`, U+212A Kelvin sign to `k`: `.curſor` is `.cursor` there), with
 * its length in `len`; 0 for any other. */
static char folds_to_ascii(const unsigned char *p, size_t left, size_t *len)
{
	*len = p[0] == 0xc5 && left >= 2 && p[1] == 0xbf		   ? 2
	       : p[0] == 0xe2 && left >= 3 && p[1] == 0x84 && p[2] == 0xaa ? 3
									   : 0;
	return *len == 2 ? 's' : *len == 3 ? 'k' : 0;
}

/* Is `name` (len bytes) `want` as a casefolding or HFS+ file system sees
 * it: without the ignorable code points, in any case, and with any
 * trailing dots and spaces (which NTFS drops)? */
static bool name_is(const char *name, size_t len, const char *want)
{
	char plain[NAME_MAX + 1];
	size_t n = 0, w = strlen(want);
	bool changed = false;
	for (size_t i = 0; i < len && n < sizeof(plain);) {
		const unsigned char *p = (const unsigned char *)name + i;
		size_t skip = ignorable(p, len - i), folded_len;
		char folded = skip ? 0 : folds_to_ascii(p, len - i, &folded_len);
		changed |= skip || folded;
		if (skip)
			i += skip;
		else if (folded) {
			plain[n++] = folded;
			i += folded_len;
		} else
			plain[n++] = name[i++];
	}
	if (changed) {
		name = plain;
		len = n;
	}
	if (len < w || strncasecmp(name, want, w) != 0)
		return false;
	for (size_t i = w; i < len; i++)
		if (name[i] != '.' && name[i] != ' ')
			return false;
	return true;
}

bool guard_name_is_git(const char *name, size_t len)
{
	return name_is(name, len, ".git") || name_is(name, len, "git~1");
}

/* The four agents sharness hooks and the editors' and other agents'
 * project settings that name MCP servers, hooks or commands: VS Code, Zed,
 * Continue, Roo, Kiro, Amazon Q, Windsurf, opencode, aider. */
const char *const guard_agent_config[GUARD_AGENT_CONFIG_N] = {
    ".claude",	 ".cursor",   ".gemini",   ".codex",	    ".vscode",
    ".mcp.json", ".zed",      ".continue", ".roo",	    ".kiro",
    ".amazonq",	 ".windsurf", ".opencode", "opencode.json", "opencode.jsonc", ".aider.conf.yml"};

bool guard_name_is_vscode(const char *name, size_t len)
{
	return name_is(name, len, ".vscode");
}

bool guard_name_is_vscode_free(const char *name, size_t len)
{
	return name_is(name, len, "extensions.json");
}

bool guard_name_is_agent_config(const char *name, size_t len)
{
	for (size_t i = 0; i < GUARD_AGENT_CONFIG_N; i++)
		if (name_is(name, len, guard_agent_config[i]))
			return true;
	return false;
}
