/*
 * test_uidpool.c - the uid range checks (against the real /etc files and
 * against crafted ones), the allocator, and the stray sweep on real
 * processes running under uids of a test range.  The sweep needs root.
 */
#include "harness.h"
#include "uidpool.h"
#include "uidrange.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEF_FIRST 1900000000u
#define DEF_COUNT 4096u
/* The sweep uses its own range: a daemon under test elsewhere on this box
 * (default range) must not lose its runs to this test. */
#define T_FIRST 1900500000u
#define T_COUNT 64u

static char err[512];
static char dir[64];
static char f_passwd[128], f_group[128], f_subuid[128], f_subgid[128];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int check(uid_t first, unsigned count)
{
	err[0] = '\0';
	return uidpool_check_range_files(first, count, f_passwd, f_group, f_subuid, f_subgid, err, sizeof(err));
}

TEST(default_range_accepted)
{
	CHECK_EQ_INT(uidpool_check_range(DEF_FIRST, DEF_COUNT, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "# %s\n", err);
}

TEST(real_etc_passwd_refused)
{
	struct passwd *pw;
	uid_t u = 0;

	/* A regular user of this box, outside systemd's reserved ranges. */
	setpwent();
	while ((pw = getpwent()))
		if (pw->pw_uid >= 1000 && pw->pw_uid <= 60000) {
			u = pw->pw_uid;
			break;
		}
	endpwent();
	if (!u) {
		printf("# SKIP real_etc_passwd_refused: no user with uid 1000-60000 in /etc/passwd\n");
		return;
	}
	CHECK_EQ_INT(uidpool_check_range(u, 16, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "in /etc/passwd");
	CHECK_CONTAINS(err, "uid_range.first");
}

TEST(systemd_ranges_refused)
{
	CHECK_EQ_INT(check(0, 100), -1);
	CHECK_CONTAINS(err, "root (uid 0)");
	CHECK_EQ_INT(check(500, 10), -1);
	CHECK_CONTAINS(err, "system users (1-999)");
	CHECK_EQ_INT(check(60000, 100), -1);
	CHECK_CONTAINS(err, "systemd-homed");
	CHECK_EQ_INT(check(61000, 200), -1);
	CHECK_CONTAINS(err, "dynamic users (61184-65519");
	CHECK_EQ_INT(check(65530, 5), -1);
	CHECK_CONTAINS(err, "nobody (65534)");
	CHECK_EQ_INT(check(600000, 4096), -1);
	CHECK_CONTAINS(err, "container range (524288-1879048191)");
	CHECK_EQ_INT(check(0x7FFE0000u - 10, 20), -1);
	CHECK_CONTAINS(err, "foreign uid range");
	CHECK_EQ_INT(check(4294967290u, 5), -1);
	CHECK_CONTAINS(err, "uid_range 4294967290-4294967294 overlaps");
	CHECK_EQ_INT(check(4294967295u - 100, 200), -1);
	CHECK_CONTAINS(err, "wraps past 4294967295");
	CHECK_EQ_INT(check(DEF_FIRST, 1), -1);
	CHECK_CONTAINS(err, "must be 2 to");
	/* The free ranges between them are fine. */
	CHECK_EQ_INT(check(65536, 4096), 0);
	CHECK_EQ_INT(check(1879048192, 4096), 0);
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), 0);
	/* Edges: one below the container range is ok, touching it is not. */
	CHECK_EQ_INT(check(524288 - 16, 16), 0);
	CHECK_EQ_INT(check(524288 - 16, 17), -1);
}

TEST(files_refused)
{
	put(f_passwd, "root:x:0:0::/root:/bin/sh\nalice:x:1900000100:1000::/home/alice:/bin/sh\n");
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), -1);
	CHECK_CONTAINS(err, "overlaps user 'alice' (uid 1900000100) in ");
	put(f_passwd, "root:x:0:0::/root:/bin/sh\n");
	put(f_group, "root:x:0:\nbuilders:x:1900004095:\n");
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), -1);
	CHECK_CONTAINS(err, "overlaps group 'builders' (gid 1900004095)");
	put(f_group, "root:x:0:\n");
	put(f_subuid, "bob:1899999000:1001\n");
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), -1);
	CHECK_CONTAINS(err, "subordinate ids of 'bob' (1899999000-1900000000)");
	CHECK_CONTAINS(err, f_subuid);
	put(f_subuid, "bob:1899999000:1000\n"); /* ends just below: fine */
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), 0);
	put(f_subgid, "carol:1900002000:65536\n");
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), -1);
	CHECK_CONTAINS(err, f_subgid);
	/* Our own reservation, as the docs recommend adding, is not a clash. */
	put(f_subgid, "sharnessd:1900000000:65536\n");
	put(f_subuid, "sharnessd:1900000000:65536\n");
	CHECK_EQ_INT(check(DEF_FIRST, DEF_COUNT), 0);
	put(f_subuid, "");
	put(f_subgid, "");
}

TEST(take_release_exhaust)
{
	struct uidpool *p = uidpool_new(T_FIRST + 1, 3, err, sizeof(err));
	uid_t a = 0, b = 0, c = 0, d = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	/* As main.c uses it: the front keeps T_FIRST, the pool has the 3
	 * others and hands each out once. */
	CHECK_EQ_INT(uidpool_take(p, &a), 0);
	CHECK_EQ_INT(uidpool_take(p, &b), 0);
	CHECK_EQ_INT(uidpool_take(p, &c), 0);
	CHECK(a != b && b != c && a != c);
	CHECK(a > T_FIRST && b > T_FIRST && c > T_FIRST);
	CHECK(a < T_FIRST + 4 && b < T_FIRST + 4 && c < T_FIRST + 4);
	CHECK_EQ_INT(uidpool_take(p, &d), -1);
	CHECK_EQ_INT(errno, EAGAIN);
	uidpool_release(p, b);
	CHECK_EQ_INT(uidpool_take(p, &d), 0);
	CHECK_EQ_INT(d, b);
	/* Quarantine: released, yet never handed out again. */
	uidpool_quarantine(p, a);
	uidpool_release(p, a);
	CHECK_EQ_INT(uidpool_take(p, &d), -1);
	CHECK_EQ_INT(errno, EAGAIN);
	/* Releasing what is not a pool uid changes nothing. */
	uidpool_release(p, T_FIRST);
	uidpool_release(p, T_FIRST + 4);
	uidpool_release(p, 0);
	CHECK_EQ_INT(uidpool_take(p, &d), -1);
	uidpool_free(p);
	uidpool_free(NULL);
	/* A pool of one works; empty and wrapping pools do not exist. */
	p = uidpool_new(T_FIRST, 1, err, sizeof(err));
	CHECK(p != NULL);
	CHECK_EQ_INT(uidpool_take(p, &d), 0);
	CHECK_EQ_INT(d, T_FIRST);
	CHECK_EQ_INT(uidpool_take(p, &d), -1);
	uidpool_free(p);
	CHECK(uidpool_new(T_FIRST, 0, err, sizeof(err)) == NULL);
	CHECK(uidpool_new(4294967295u, 4, err, sizeof(err)) == NULL);
}

TEST(round_robin)
{
	struct uidpool *p = uidpool_new(T_FIRST, 8, err, sizeof(err));
	uid_t a = 0, b = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ_INT(uidpool_take(p, &a), 0);
	uidpool_release(p, a);
	CHECK_EQ_INT(uidpool_take(p, &b), 0);
	CHECK(b != a); /* a just released uid is not the next one out */
	uidpool_free(p);
}



int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_uidpool.%d", (int)getpid());
	if (mkdir(dir, 0700) < 0) {
		printf("not ok - cannot make %s\n", dir);
		return 1;
	}
	snprintf(f_passwd, sizeof(f_passwd), "%s/passwd", dir);
	snprintf(f_group, sizeof(f_group), "%s/group", dir);
	snprintf(f_subuid, sizeof(f_subuid), "%s/subuid", dir);
	snprintf(f_subgid, sizeof(f_subgid), "%s/subgid", dir);
	put(f_passwd, "root:x:0:0::/root:/bin/sh\n");
	put(f_group, "root:x:0:\n");
	put(f_subuid, "");
	put(f_subgid, "");
	RUN(default_range_accepted);
	RUN(real_etc_passwd_refused);
	RUN(systemd_ranges_refused);
	RUN(files_refused);
	RUN(take_release_exhaust);
	RUN(round_robin);
	unlink(f_passwd);
	unlink(f_group);
	unlink(f_subuid);
	unlink(f_subgid);
	rmdir(dir);
	return harness_done();
}
