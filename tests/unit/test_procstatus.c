/*
 * test_procstatus.c - fields of /proc/PID/status: our own real file, and
 * names that are prefixes of others (NSpid, NSpgid; Cap*).
 */
#include "harness.h"
#include "procstatus.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(own_file)
{
	char buf[PROCSTATUS_MAX];
	CHECK_EQ_INT(procstatus_read(0, buf, sizeof(buf)), 0);
	const char *pid = procstatus_find(buf, "Pid");
	CHECK(pid && atol(pid) == (long)getpid());
	mode_t old = umask(027);
	CHECK_EQ_INT(procstatus_read(getpid(), buf, sizeof(buf)), 0);
	const char *m = procstatus_find(buf, "Umask");
	CHECK(m && strtoul(m, NULL, 8) == 027);
	umask(old);
	CHECK(procstatus_find(buf, "Name") != NULL); /* the first line has no newline before it */
}

TEST(prefixes_and_absence)
{
	const char *buf = "Name:\tx\nNSpgid:\t9\nNSpid:\t4321\t7\nCapEff:\t0000000000000000\n";
	CHECK_STR(procstatus_find(buf, "NSpid"), "4321\t7\nCapEff:\t0000000000000000\n");
	CHECK(procstatus_find(buf, "NSp") == NULL);
	CHECK(procstatus_find(buf, "Umask") == NULL);
	CHECK(procstatus_find(buf, "x") == NULL); /* a value is not a name */
}

TEST(no_such_process)
{
	char buf[PROCSTATUS_MAX];
	CHECK_EQ_INT(procstatus_read(0x3fffffff, buf, sizeof(buf)), -1);
}

int main(void)
{
	RUN(own_file);
	RUN(prefixes_and_absence);
	RUN(no_such_process);
	return harness_done();
}
