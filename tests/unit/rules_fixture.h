/*
 * rules_fixture.h - the secret filter's rules with a vault of the given
 * lines, for the unit tests of front code that filters (capture, denials,
 * execute).  The vault file is written to /tmp and removed once read.
 */
#ifndef SHARNESS_RULES_FIXTURE_H
#define SHARNESS_RULES_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scrub.h"

/* NULL, with the reason on stderr as a "#" line, when the rules cannot be made. */
static struct scrub_rules *fixture_rules(const char *vault)
{
	char path[] = "/tmp/sharness-unit-vault.XXXXXX", err[256] = "cannot write the vault file";
	size_t n = strlen(vault);
	struct scrub_rules *rules = NULL;
	int fd = mkstemp(path);
	if (fd >= 0) {
		if (write(fd, vault, n) == (ssize_t)n)
			rules = scrub_rules_new(path, NULL, err, sizeof(err));
		close(fd);
		unlink(path);
	}
	if (!rules)
		fprintf(stderr, "# %s\n", err);
	return rules;
}

#endif
