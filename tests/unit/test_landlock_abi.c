/*
 * test_landlock_abi.c - landlock.c's table of rights and its start-up gate:
 * the table is whole (every right of this kernel's ABI, no gap, each newer
 * right with the lock that covers it on an older kernel), docs/landlock.md
 * carries the very same table, the refusal sentences are exact for each
 * system they describe (given as facts, not by faking a kernel: no lock is
 * claimed to work here), and on this host landlock_check() accepts the
 * running ABI and refuses the next one with a sentence naming it.
 *
 * Run from the repository root (tests/run.sh does) so docs/ is found.
 */
#include "landlock.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "harness.h"

static char err[1024];

static uint64_t mask(enum landlock_kind kind, int abi)
{
	size_t n;
	const struct landlock_right *r = landlock_rights(&n);
	uint64_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (r[i].kind == kind && r[i].since_abi <= abi)
			m |= r[i].bit;
	return m;
}

TEST(table_is_whole)
{
	size_t n;
	const struct landlock_right *r = landlock_rights(&n);
	int prev = 1;

	CHECK_EQ_INT(n, 20);
	for (size_t i = 0; i < n; i++) {
		CHECK(r[i].name && r[i].name[0]);
		CHECK(r[i].bit != 0 && (r[i].bit & (r[i].bit - 1)) == 0); /* one bit */
		CHECK(r[i].since_abi >= prev && r[i].since_abi <= LANDLOCK_ABI_KNOWN);
		prev = r[i].since_abi;
		/* a right of ABI 1 is always Landlock's (ABI 1 is the least
		 * accepted); every newer one names the lock that covers it */
		CHECK((r[i].since_abi == 1) == (r[i].other_lock == NULL));
		for (size_t j = 0; j < i; j++) {
			CHECK(strcmp(r[i].name, r[j].name) != 0);
			CHECK(r[i].kind != r[j].kind || r[i].bit != r[j].bit);
		}
	}
	/* the kernel's masks, ABI by ABI (include/uapi/linux/landlock.h) */
	CHECK_EQ_INT(mask(LANDLOCK_KIND_FS, 1), (1u << 13) - 1);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_FS, 2), (1u << 14) - 1);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_FS, 4), (1u << 15) - 1);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_FS, 5), (1u << 16) - 1);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_FS, LANDLOCK_ABI_KNOWN), (1u << 16) - 1);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_NET, 3), 0);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_NET, 4), 3);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_SCOPE, 5), 0);
	CHECK_EQ_INT(mask(LANDLOCK_KIND_SCOPE, 6), 3);
}

TEST(enforced_by)
{
	size_t n;
	const struct landlock_right *r = landlock_rights(&n);

	for (size_t i = 0; i < n; i++) {
		CHECK_STR(landlock_enforced_by(&r[i], r[i].since_abi), "Landlock");
		CHECK_STR(landlock_enforced_by(&r[i], LANDLOCK_ABI_KNOWN), "Landlock");
		if (r[i].since_abi > 1)
			CHECK_STR(landlock_enforced_by(&r[i], r[i].since_abi - 1), r[i].other_lock);
		/* --check-config builds the policy without asking the kernel */
		CHECK(landlock_enforced_by(&r[i], 0) != NULL);
	}
}

/* The kernel refuses a ruleset that names a right it does not know
 * (EINVAL), so: the table's rights for this ABI are accepted, and the next
 * bit of each kind is refused, i.e. the table handles every right this
 * kernel has (the check the start-up relies on when it handles them all). */
TEST(table_matches_this_kernel)
{
	struct {
		uint64_t fs, net, scoped;
	} a;
	int abi = landlock_abi(), fd;

	printf("# Landlock ABI %d\n", abi);
	CHECK(abi >= 1);
	if (abi > LANDLOCK_ABI_KNOWN) {
		printf("# ABI %d is newer than the %d this build knows: its new rights are not handled\n",
		       abi, LANDLOCK_ABI_KNOWN);
		return;
	}
	a.fs = mask(LANDLOCK_KIND_FS, abi);
	a.net = mask(LANDLOCK_KIND_NET, abi);
	a.scoped = mask(LANDLOCK_KIND_SCOPE, abi);
	fd = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof(a), 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	for (int k = 0; k < 3; k++) {
		uint64_t *m = k == 0 ? &a.fs : k == 1 ? &a.net : &a.scoped;
		uint64_t keep = *m;

		*m = keep ? keep | (keep + 1) : 1; /* the next bit */
		errno = 0;
		fd = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof(a), 0);
		CHECK_EQ_INT(fd, -1);
		/* a field this ABI's struct lacks, set non-zero: E2BIG */
		CHECK_EQ_INT(errno, (k == 1 && abi < 4) || (k == 2 && abi < 6) ? E2BIG : EINVAL);
		if (fd >= 0)
			close(fd);
		*m = keep;
	}
}

static char *read_doc(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* docs/landlock.md carries the table row for row, in words the code
 * serves, and points nowhere outside the repository. */
TEST(docs_carry_the_table)
{
	char *doc = read_doc("docs/landlock.md");
	size_t n;
	const struct landlock_right *r = landlock_rights(&n);

	CHECK(doc != NULL);
	if (!doc)
		return;
	for (size_t i = 0; i < n; i++) {
		char row[1024];
		const char *at;

		snprintf(row, sizeof(row), "\n| `%s` | %d | %s |\n", r[i].name, r[i].since_abi,
			 r[i].other_lock ? r[i].other_lock : "Landlock on every kernel the daemon starts on");
		at = strstr(doc, row);
		if (!at)
			fprintf(stderr, "# docs/landlock.md lacks the row%s", row);
		CHECK(at != NULL);
	}
	CHECK(strstr(doc, "EXDEV") != NULL);
	CHECK(strstr(doc, "landlock_min_abi") != NULL);
	CHECK(strstr(doc, "SPEC") == NULL);
	CHECK(strstr(doc, "shared/") == NULL);
	CHECK(strstr(doc, "](http") == NULL);
	free(doc);
}

struct refusal {
	int abi, errnum, min;
	const char *release, *lsm;
	int seccomp;
	const char *want;
};

/* clang-format off */
static const struct refusal refusals[] = {
	{2, 0, 3, "6.1.0-18-amd64", NULL, 0,
	 "Landlock ABI 2 on kernel 6.1.0-18-amd64 is below landlock_min_abi 3; boot a kernel with Landlock "
	 "ABI 3 or newer (upstream Linux 6.2 and newer), or lower landlock_min_abi in the configuration to 2"},
	{7, 0, 8, "6.18.44", NULL, 0,
	 "Landlock ABI 7 on kernel 6.18.44 is below landlock_min_abi 8; boot a kernel with Landlock ABI 8 or "
	 "newer, or lower landlock_min_abi in the configuration to 7"},
	{1, 0, 4, "5.15.0-91-generic", NULL, 0,
	 "Landlock ABI 1 on kernel 5.15.0-91-generic is below landlock_min_abi 4; boot a kernel with Landlock "
	 "ABI 4 or newer (upstream Linux 6.7 and newer), or lower landlock_min_abi in the configuration to 1"},
	{-1, ENOSYS, 1, "5.10.0-28-amd64", NULL, 0,
	 "Landlock is not available: kernel 5.10.0-28-amd64 is older than 5.13, the first Linux with Landlock; "
	 "boot a kernel 5.13 or newer built with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= boot "
	 "parameter"},
	{-1, ENOSYS, 1, "6.1.0-18-amd64", NULL, 0,
	 "Landlock is not available: kernel 6.1.0-18-amd64 was built without it (landlock_create_ruleset(2): "
	 "ENOSYS); boot a kernel 5.13 or newer built with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= "
	 "boot parameter"},
	{-1, ENOSYS, 1, "custom", NULL, -1,
	 "Landlock is not available: kernel custom is older than 5.13 or was built without it "
	 "(landlock_create_ruleset(2): ENOSYS); boot a kernel 5.13 or newer built with "
	 "CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= boot parameter"},
	{-1, ENOSYS, 1, "6.1.0-18-amd64", NULL, 2,
	 "Landlock is not available: kernel 6.1.0-18-amd64 was built without it (landlock_create_ruleset(2): "
	 "ENOSYS); boot a kernel 5.13 or newer built with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= "
	 "boot parameter; sharnessd runs under a seccomp filter (Seccomp: 2 in /proc/self/status), which may "
	 "be what refuses the call: allow the landlock_* system calls to it"},
	{-1, EOPNOTSUPP, 1, "6.1.0-18-amd64", "lockdown,capability,yama,apparmor", 0,
	 "Landlock is built into kernel 6.1.0-18-amd64 but not enabled at boot (the active LSMs are "
	 "lockdown,capability,yama,apparmor); add it to the lsm= boot parameter, "
	 "lsm=lockdown,capability,yama,apparmor,landlock, and reboot"},
	{-1, EOPNOTSUPP, 1, "6.1.0-18-amd64", NULL, 0,
	 "Landlock is built into kernel 6.1.0-18-amd64 but not enabled at boot; add landlock to the lsm= boot "
	 "parameter, lsm=<the current list>,landlock, and reboot (the current list is in "
	 "/sys/kernel/security/lsm: mount -t securityfs securityfs /sys/kernel/security to read it)"},
	{-1, EPERM, 1, "6.8.0-31-generic", NULL, 2,
	 "Landlock is not usable on kernel 6.8.0-31-generic: landlock_create_ruleset(2): Operation not "
	 "permitted; sharnessd runs under a seccomp filter (Seccomp: 2 in /proc/self/status), which may be "
	 "what refuses the call: allow the landlock_* system calls to it"},
};
/* clang-format on */

TEST(refusal_sentences)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *t = &refusals[i];

		err[0] = '\0';
		CHECK_EQ_INT(landlock_refusal(t->abi, t->errnum, t->min, t->release, t->lsm, t->seccomp, err,
					      sizeof(err)),
			     -1);
		CHECK_STR(err, t->want);
	}
	/* at or above the demand: accepted, err untouched */
	for (int abi = 1; abi <= LANDLOCK_ABI_KNOWN; abi++)
		for (int min = 1; min <= abi; min++) {
			strcpy(err, "untouched");
			CHECK_EQ_INT(landlock_refusal(abi, 0, min, "6.1.0", NULL, 0, err, sizeof(err)), 0);
			CHECK_STR(err, "untouched");
		}
	/* a long LSM list is cut, never overrun */
	char lsm[600];
	memset(lsm, 'x', sizeof(lsm) - 1);
	lsm[sizeof(lsm) - 1] = '\0';
	CHECK_EQ_INT(landlock_refusal(-1, EOPNOTSUPP, 1, "6.1", lsm, 0, err, 64), -1);
	CHECK_EQ_INT(strlen(err), 63);
}

/* On this host, for real: the running ABI passes at every demand up to it,
 * and the next one (when this build knows it) is refused, naming both the
 * ABI and this kernel's release. */
TEST(check_on_this_kernel)
{
	struct utsname u;
	char want[256];
	int abi = landlock_abi();

	CHECK_EQ_INT(uname(&u), 0);
	for (int min = 1; min <= abi && min <= LANDLOCK_ABI_KNOWN; min++)
		CHECK_EQ_INT(landlock_check(min, err, sizeof(err)), abi);
	if (abi >= LANDLOCK_ABI_KNOWN) {
		printf("# ABI %d: no landlock_min_abi above it to refuse\n", abi);
		return;
	}
	CHECK_EQ_INT(landlock_check(abi + 1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "Landlock ABI %d on kernel %s is below landlock_min_abi %d; ", abi,
		 u.release, abi + 1);
	CHECK(strncmp(err, want, strlen(want)) == 0);
	CHECK_CONTAINS(err, "or lower landlock_min_abi in the configuration");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	RUN(table_is_whole);
	RUN(enforced_by);
	RUN(table_matches_this_kernel);
	RUN(docs_carry_the_table);
	RUN(refusal_sentences);
	RUN(check_on_this_kernel);
	return harness_done();
}
