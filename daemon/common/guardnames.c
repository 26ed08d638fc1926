/*
 * guardnames.c - the names of what the person's tools run from (see
 * guardnames.h), as a folding file system compares them.
 */
#include "guardnames.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

/* The length of a code point that HFS+ and, before Linux 6.13, a
 * casefolding ext4 or f2fs directory ignore in a name (git's
 * is_hfs_dotgit skips the same: U+200C-200F, U+202A-202E, U+206A-206F,
 * U+FEFF), at p; 0 for any other. */
static size_t ignorable(const unsigned char *p, size_t left)
{
	if (left < 3)
		return 0;
	if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		return 3;
	if (p[0] != 0xe2)
		return 0;
	return (p[1] == 0x80 && ((p[2] >= 0x8c && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae))) ||
		       (p[1] == 0x81 && p[2] >= 0xaa && p[2] <= 0xaf)
		   ? 3
		   : 0;
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
