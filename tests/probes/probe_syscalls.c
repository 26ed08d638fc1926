/*
 * probe_syscalls.c - run inside the sandbox: try every syscall of the seccomp
 * deny list (daemon/root/seccomp.c) and a few that must stay allowed, and report
 * what each returned.
 *
 * Output: one line per check, "<name> <result>", where <result> is OK when
 * the call returned >= 0, else the errno name (EPERM, ENOSYS, EAFNOSUPPORT,
 * EBADF, ...).  Then two lines for the foreign ABIs, each run in a child:
 * "x32 <r>" and "i386 <r>" with <r> = SIGSYS (killed by the filter), another
 * signal name, OK, or an errno name.  Exit status 0.
 *
 * Every call is made with arguments the kernel rejects (bad fd, bad pointer,
 * invalid flags) so that without the filter nothing happens and the result
 * is the call's natural errno, which differs from the filter's errno (the
 * `denied` column); so `ptrace EPERM` means filtered, `ptrace EIO` means not.
 * Safe to run unfiltered, even as root: no call changes anything (the one
 * persona change is undone, vhangup is skipped while we have a terminal).
 *
 * tests/unit/test_seccomp.c includes this file (PROBE_SYSCALLS_NO_MAIN) to run
 * the same table under the real filter, with and without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

struct probe_call {
	const char *name;
	long (*call)(void);
	int denied; /* errno the sandbox filter returns; 0 = must stay allowed */
};

#define S0(nr) syscall(nr)
#define BADP ((void *)1) /* an address the kernel faults on */

static long c_ptrace(void) { return syscall(__NR_ptrace, -1L, 0L, 0L, 0L); }
static long c_pvm_readv(void) { return syscall(__NR_process_vm_readv, getpid(), NULL, 1UL, NULL, 1UL, 0UL); }
static long c_pvm_writev(void) { return syscall(__NR_process_vm_writev, getpid(), NULL, 1UL, NULL, 1UL, 0UL); }
static long c_kcmp(void) { return syscall(__NR_kcmp, getpid(), getpid(), 99, 0UL, 0UL); }
static long c_pidfd_getfd(void) { return syscall(__NR_pidfd_getfd, -1, 0, 0); }
static long c_process_madvise(void) { return syscall(__NR_process_madvise, -1, NULL, 0UL, 0, 0U); }
static long c_mount(void) { return syscall(__NR_mount, BADP, BADP, BADP, 0UL, NULL); }
static long c_umount2(void) { return syscall(__NR_umount2, "/nonexistent-sharness-probe", 0); }
static long c_pivot_root(void) { return syscall(__NR_pivot_root, "/nonexistent-sharness-a", "/nonexistent-sharness-b"); }
static long c_chroot(void) { return syscall(__NR_chroot, "/nonexistent-sharness-probe"); }
static long c_unshare(void) { return syscall(__NR_unshare, 0); } /* a no-op when allowed */
static long c_setns(void) { return syscall(__NR_setns, -1, 0); }
/* CLONE_THREAD without CLONE_SIGHAND is EINVAL before anything is created. */
#define CLONE_NS(flag) syscall(__NR_clone, (unsigned long)(flag) | CLONE_THREAD, 0UL, NULL, NULL, 0UL)
static long c_clone_newns(void) { return CLONE_NS(CLONE_NEWNS); }
static long c_clone_newcgroup(void) { return CLONE_NS(CLONE_NEWCGROUP); }
static long c_clone_newuts(void) { return CLONE_NS(CLONE_NEWUTS); }
static long c_clone_newipc(void) { return CLONE_NS(CLONE_NEWIPC); }
static long c_clone_newuser(void) { return CLONE_NS(CLONE_NEWUSER); }
static long c_clone_newpid(void) { return CLONE_NS(CLONE_NEWPID); }
static long c_clone_newnet(void) { return CLONE_NS(CLONE_NEWNET); }
static long c_clone_thread(void) { return CLONE_NS(0); }
static long c_clone3(void) { return syscall(__NR_clone3, NULL, 0UL); }
static long c_keyctl(void) { return syscall(__NR_keyctl, -1, 0L, 0L, 0L, 0L); }
static long c_add_key(void) { return syscall(__NR_add_key, NULL, NULL, NULL, 0UL, 0); }
static long c_request_key(void) { return syscall(__NR_request_key, NULL, NULL, NULL, 0); }
static long c_bpf(void) { return syscall(__NR_bpf, -1, NULL, 0U); }
static long c_perf_event_open(void) { return syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0UL); }
static long c_userfaultfd(void) { return syscall(__NR_userfaultfd, ~0U); }
static long c_kexec_load(void) { return syscall(__NR_kexec_load, 0UL, 0UL, NULL, ~0UL); }
static long c_kexec_file_load(void) { return syscall(__NR_kexec_file_load, -1, -1, 0UL, NULL, ~0UL); }
static long c_reboot(void) { return syscall(__NR_reboot, 0, 0, 0U, NULL); } /* bad magic */
static long c_init_module(void) { return syscall(__NR_init_module, NULL, 0UL, ""); }
static long c_finit_module(void) { return syscall(__NR_finit_module, -1, "", 0); }
static long c_delete_module(void) { return syscall(__NR_delete_module, BADP, 0U); }
static long c_create_module(void) { return S0(__NR_create_module); }
static long c_query_module(void) { return S0(__NR_query_module); }
static long c_get_kernel_syms(void) { return S0(__NR_get_kernel_syms); }
static long c_iopl(void) { return syscall(__NR_iopl, 4); }
static long c_ioperm(void) { return syscall(__NR_ioperm, ~0UL, 1UL, 1); }
static long c_modify_ldt(void) { return syscall(__NR_modify_ldt, 99, NULL, 0UL); }
static long c_acct(void) { return syscall(__NR_acct, BADP); }
static long c_quotactl(void) { return syscall(__NR_quotactl, 0, NULL, 0, NULL); }
static long c_quotactl_fd(void) { return syscall(__NR_quotactl_fd, -1, 0U, 0, NULL); }
static long c_swapon(void) { return syscall(__NR_swapon, BADP, 0); }
static long c_swapoff(void) { return syscall(__NR_swapoff, BADP); }
static long c_syslog(void) { return syscall(__NR_syslog, 99, NULL, 0); }
static long c_vhangup(void)
{
	/* With a controlling terminal and no filter, root would hang it up. */
	int fd = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		close(fd);
		errno = EBUSY; /* reported as "vhangup EBUSY": skipped */
		return -1;
	}
	return S0(__NR_vhangup);
}
static long c_uselib(void) { return syscall(__NR_uselib, BADP); }
static long c_ustat(void) { return syscall(__NR_ustat, 0U, BADP); }
static long c_sysfs(void) { return syscall(__NR_sysfs, 99, 0UL, 0UL); }
static long c_sysctl(void) { return syscall(__NR__sysctl, NULL); }
static long c_nfsservctl(void) { return S0(__NR_nfsservctl); }
static long c_lookup_dcookie(void) { return syscall(__NR_lookup_dcookie, 0ULL, NULL, 0UL); }
static long c_settimeofday(void) { return syscall(__NR_settimeofday, NULL, NULL); } /* no-op */
static long c_clock_settime(void) { return syscall(__NR_clock_settime, 0, NULL); }
static long c_clock_adjtime(void) { return syscall(__NR_clock_adjtime, 0, NULL); }
static long c_adjtimex(void) { return syscall(__NR_adjtimex, NULL); }
static long c_move_pages(void) { return syscall(__NR_move_pages, 0, 0UL, NULL, NULL, NULL, 0); }
static long c_migrate_pages(void) { return syscall(__NR_migrate_pages, 0, 0UL, NULL, NULL); }
static long c_mbind(void) { return syscall(__NR_mbind, NULL, 0UL, 0, NULL, 0UL, 0U); }
static long c_set_mempolicy(void) { return syscall(__NR_set_mempolicy, 0, NULL, 0UL); }
static long c_get_mempolicy(void) { return syscall(__NR_get_mempolicy, NULL, NULL, 0UL, NULL, 0UL); }
static long c_set_mempolicy_home_node(void) { return syscall(__NR_set_mempolicy_home_node, 0UL, 0UL, 0UL, 0UL); }
static long c_open_by_handle_at(void) { return syscall(__NR_open_by_handle_at, -1, NULL, 0); }
static long c_name_to_handle_at(void) { return syscall(__NR_name_to_handle_at, -1, "", NULL, NULL, 0); }
static long c_execveat_empty(void) { return syscall(__NR_execveat, -1, "", NULL, NULL, AT_EMPTY_PATH); }
static long c_execveat_path(void) { return syscall(__NR_execveat, -1, "", NULL, NULL, 0); }
static long c_ioctl_tiocsti(void) { return syscall(__NR_ioctl, -1, (unsigned long)TIOCSTI, "x"); }
/* CVE-2019-10063: the kernel reads cmd as 32 bits; high bits must not help. */
static long c_ioctl_tiocsti_hi(void) { return syscall(__NR_ioctl, -1, (1UL << 32) | TIOCSTI, "x"); }
static long c_ioctl_tioclinux(void) { return syscall(__NR_ioctl, -1, (unsigned long)TIOCLINUX, "x"); }
static long c_ioctl_tcgets(void) { return syscall(__NR_ioctl, -1, (unsigned long)TCGETS, NULL); }
static long c_personality_set(void)
{
	long old = syscall(__NR_personality, 0x0040000UL); /* ADDR_NO_RANDOMIZE */
	if (old >= 0)
		syscall(__NR_personality, (unsigned long)old);
	return old;
}
static long c_personality_set_hi(void)
{
	long old = syscall(__NR_personality, (1UL << 32) | 0x0040000UL);
	if (old >= 0)
		syscall(__NR_personality, (unsigned long)old);
	return old;
}
static long c_personality_query(void) { return syscall(__NR_personality, 0xffffffffUL); }
static long c_personality_zero(void) { return syscall(__NR_personality, 0UL); }
static long sock(int family, int type)
{
	long fd = syscall(__NR_socket, family, type | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		close((int)fd);
	return fd;
}
static long c_socket_unix(void) { return sock(AF_UNIX, SOCK_STREAM); }
static long c_socket_inet(void) { return sock(AF_INET, SOCK_STREAM); }
static long c_socket_inet6(void) { return sock(AF_INET6, SOCK_STREAM); }
static long c_socket_packet(void) { return sock(AF_PACKET, SOCK_RAW); }
static long c_socket_netlink(void) { return sock(AF_NETLINK, SOCK_RAW); }
static long c_socket_alg(void) { return sock(AF_ALG, SOCK_SEQPACKET); }
static long c_socket_vsock(void) { return sock(AF_VSOCK, SOCK_STREAM); }
static long c_socket_key(void) { return sock(AF_KEY, SOCK_RAW); }
static long c_socket_bluetooth(void) { return sock(AF_BLUETOOTH, SOCK_RAW); }
static long c_socket_unspec(void) { return sock(AF_UNSPEC, SOCK_STREAM); }
static long c_socket_packet_hi(void)
{
	long fd = syscall(__NR_socket, (1UL << 32) | AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		close((int)fd);
	return fd;
}
static long c_io_uring_setup(void) { return syscall(__NR_io_uring_setup, 1U, NULL); }
static long c_io_uring_enter(void) { return syscall(__NR_io_uring_enter, -1, 0U, 0U, 0U, NULL, 0UL); }
static long c_io_uring_register(void) { return syscall(__NR_io_uring_register, -1, 0U, NULL, 0U); }
static long c_io_setup(void) { return syscall(__NR_io_setup, 0U, NULL); }
static long c_io_submit(void) { return syscall(__NR_io_submit, 0UL, 0L, NULL); }
static long c_io_getevents(void) { return syscall(__NR_io_getevents, 0UL, 0L, 0L, NULL, NULL); }
static long c_io_pgetevents(void) { return syscall(__NR_io_pgetevents, 0UL, 0L, 0L, NULL, NULL, NULL); }
static long c_io_cancel(void) { return syscall(__NR_io_cancel, 0UL, NULL, NULL); }
static long c_io_destroy(void) { return syscall(__NR_io_destroy, 0UL); }
/* O_DIRECT: a path that is not there answers ENOENT unfiltered, a
 * descriptor that is not open EBADF. */
static long c_openat_direct(void) { return syscall(__NR_openat, AT_FDCWD, "/nonexistent-probe", O_RDONLY | O_DIRECT); }
static long c_fcntl_setfl_direct(void) { return syscall(__NR_fcntl, -1, F_SETFL, O_DIRECT); }
static long c_fsopen(void) { return syscall(__NR_fsopen, NULL, 0U); }
static long c_fsconfig(void) { return syscall(__NR_fsconfig, -1, 0U, NULL, NULL, 0); }
static long c_fsmount(void) { return syscall(__NR_fsmount, -1, 0U, 0U); }
static long c_fspick(void) { return syscall(__NR_fspick, -1, "", 0U); }
static long c_open_tree(void) { return syscall(__NR_open_tree, -1, "", 0U); }
static long c_move_mount(void) { return syscall(__NR_move_mount, -1, "", -1, "", 0U); }
static long c_mount_setattr(void) { return syscall(__NR_mount_setattr, -1, "", 0U, NULL, 0UL); }
static long c_open_tree_attr(void) { return syscall(__NR_open_tree_attr, -1, "", 0U, NULL, 0UL); }
static long c_getpid(void) { return S0(__NR_getpid); }
static long c_memfd_create(void)
{
	long fd = syscall(__NR_memfd_create, "probe", MFD_CLOEXEC);
	if (fd >= 0)
		close((int)fd);
	return fd;
}
static long c_landlock_abi(void) { return syscall(__NR_landlock_create_ruleset, NULL, 0UL, 1U); }
static long c_seccomp_avail(void)
{
	unsigned action = 0x7fff0000U; /* SECCOMP_RET_ALLOW */
	return syscall(__NR_seccomp, 2U /* SECCOMP_GET_ACTION_AVAIL */, 0U, &action);
}

static const struct probe_call probe_calls[] = {
	{"ptrace", c_ptrace, EPERM},
	{"process_vm_readv", c_pvm_readv, EPERM},
	{"process_vm_writev", c_pvm_writev, EPERM},
	{"kcmp", c_kcmp, EPERM},
	{"pidfd_getfd", c_pidfd_getfd, EPERM},
	{"process_madvise", c_process_madvise, EPERM},
	{"mount", c_mount, EPERM},
	{"umount2", c_umount2, EPERM},
	{"pivot_root", c_pivot_root, EPERM},
	{"chroot", c_chroot, EPERM},
	{"unshare", c_unshare, EPERM},
	{"setns", c_setns, EPERM},
	{"clone_newns", c_clone_newns, EPERM},
	{"clone_newcgroup", c_clone_newcgroup, EPERM},
	{"clone_newuts", c_clone_newuts, EPERM},
	{"clone_newipc", c_clone_newipc, EPERM},
	{"clone_newuser", c_clone_newuser, EPERM},
	{"clone_newpid", c_clone_newpid, EPERM},
	{"clone_newnet", c_clone_newnet, EPERM},
	{"clone3", c_clone3, ENOSYS},
	{"keyctl", c_keyctl, EPERM},
	{"add_key", c_add_key, EPERM},
	{"request_key", c_request_key, EPERM},
	{"bpf", c_bpf, EPERM},
	{"perf_event_open", c_perf_event_open, EPERM},
	{"userfaultfd", c_userfaultfd, EPERM},
	{"kexec_load", c_kexec_load, EPERM},
	{"kexec_file_load", c_kexec_file_load, EPERM},
	{"reboot", c_reboot, EPERM},
	{"init_module", c_init_module, EPERM},
	{"finit_module", c_finit_module, EPERM},
	{"delete_module", c_delete_module, EPERM},
	{"create_module", c_create_module, EPERM},
	{"query_module", c_query_module, EPERM},
	{"get_kernel_syms", c_get_kernel_syms, EPERM},
	{"iopl", c_iopl, EPERM},
	{"ioperm", c_ioperm, EPERM},
	{"modify_ldt", c_modify_ldt, EPERM},
	{"acct", c_acct, EPERM},
	{"quotactl", c_quotactl, EPERM},
	{"quotactl_fd", c_quotactl_fd, EPERM},
	{"swapon", c_swapon, EPERM},
	{"swapoff", c_swapoff, EPERM},
	{"syslog", c_syslog, EPERM},
	{"vhangup", c_vhangup, EPERM},
	{"uselib", c_uselib, EPERM},
	{"ustat", c_ustat, EPERM},
	{"sysfs", c_sysfs, EPERM},
	{"_sysctl", c_sysctl, EPERM},
	{"nfsservctl", c_nfsservctl, EPERM},
	{"lookup_dcookie", c_lookup_dcookie, EPERM},
	{"settimeofday", c_settimeofday, EPERM},
	{"clock_settime", c_clock_settime, EPERM},
	{"clock_adjtime", c_clock_adjtime, EPERM},
	{"adjtimex", c_adjtimex, EPERM},
	{"move_pages", c_move_pages, EPERM},
	{"migrate_pages", c_migrate_pages, EPERM},
	{"mbind", c_mbind, EPERM},
	{"set_mempolicy", c_set_mempolicy, EPERM},
	{"get_mempolicy", c_get_mempolicy, EPERM},
	{"set_mempolicy_home_node", c_set_mempolicy_home_node, EPERM},
	{"open_by_handle_at", c_open_by_handle_at, EPERM},
	{"name_to_handle_at", c_name_to_handle_at, EPERM},
	{"execveat_empty_path", c_execveat_empty, EPERM},
	{"ioctl_tiocsti", c_ioctl_tiocsti, EPERM},
	{"ioctl_tiocsti_hibits", c_ioctl_tiocsti_hi, EPERM},
	{"ioctl_tioclinux", c_ioctl_tioclinux, EPERM},
	{"personality_set", c_personality_set, EPERM},
	{"personality_set_hibits", c_personality_set_hi, EPERM},
	{"socket_packet", c_socket_packet, EAFNOSUPPORT},
	{"socket_packet_hibits", c_socket_packet_hi, EAFNOSUPPORT},
	{"socket_netlink", c_socket_netlink, EAFNOSUPPORT},
	{"socket_alg", c_socket_alg, EAFNOSUPPORT},
	{"socket_vsock", c_socket_vsock, EAFNOSUPPORT},
	{"socket_key", c_socket_key, EAFNOSUPPORT},
	{"socket_bluetooth", c_socket_bluetooth, EAFNOSUPPORT},
	{"socket_unspec", c_socket_unspec, EAFNOSUPPORT},
	{"io_uring_setup", c_io_uring_setup, ENOSYS},
	{"io_uring_enter", c_io_uring_enter, ENOSYS},
	{"io_uring_register", c_io_uring_register, ENOSYS},
	{"io_setup", c_io_setup, ENOSYS},
	{"io_submit", c_io_submit, ENOSYS},
	{"io_getevents", c_io_getevents, ENOSYS},
	{"io_pgetevents", c_io_pgetevents, ENOSYS},
	{"io_cancel", c_io_cancel, ENOSYS},
	{"io_destroy", c_io_destroy, ENOSYS},
	{"openat_direct", c_openat_direct, EINVAL},
	{"fcntl_setfl_direct", c_fcntl_setfl_direct, EINVAL},
	{"fsopen", c_fsopen, ENOSYS},
	{"fsconfig", c_fsconfig, ENOSYS},
	{"fsmount", c_fsmount, ENOSYS},
	{"fspick", c_fspick, ENOSYS},
	{"open_tree", c_open_tree, ENOSYS},
	{"move_mount", c_move_mount, ENOSYS},
	{"mount_setattr", c_mount_setattr, ENOSYS},
	{"open_tree_attr", c_open_tree_attr, ENOSYS},
	/* must stay allowed: the filter must not over-match */
	{"getpid", c_getpid, 0},
	{"clone_thread_only", c_clone_thread, 0},
	{"execveat_path", c_execveat_path, 0},
	{"ioctl_tcgets", c_ioctl_tcgets, 0},
	{"personality_query", c_personality_query, 0},
	{"personality_zero", c_personality_zero, 0},
	{"socket_unix", c_socket_unix, 0},
	{"socket_inet", c_socket_inet, 0},
	{"socket_inet6", c_socket_inet6, 0},
	{"memfd_create", c_memfd_create, 0},
	{"landlock_abi", c_landlock_abi, 0},
	{"seccomp_get_action_avail", c_seccomp_avail, 0},
};

#define PROBE_NCALLS (sizeof(probe_calls) / sizeof(probe_calls[0]))

/* 0 when the call succeeded, else its errno. */
static int probe_call_run(const struct probe_call *c)
{
	long r;

	errno = 0;
	r = c->call();
	return r >= 0 ? 0 : (errno ? errno : EIO);
}

static const char *probe_errname(int e, char *buf, size_t len)
{
	const char *s;

	if (e == 0)
		return "OK";
	s = strerrorname_np(e);
	if (s)
		return s;
	snprintf(buf, len, "E%d", e);
	return buf;
}

/* A foreign-ABI syscall (getpid) in a child: "x32" sets the x32 bit on the
 * native number, "i386" enters through int 0x80.  Returns the wait status. */
static int probe_abi_status(const char *which)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		long r;
#if defined(__x86_64__)
		if (strcmp(which, "x32") == 0) {
			r = syscall(0x40000000L | __NR_getpid);
			_exit(r >= 0 ? 0 : (errno & 0x7f));
		}
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) /* i386 getpid */
		                 : "memory", "rcx", "r8", "r9", "r10", "r11");
		_exit(r >= 0 ? 0 : (int)(-r & 0x7f));
#else
		(void)which;
		(void)r;
		_exit(ENOSYS);
#endif
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static const char *probe_status_name(int status, char *buf, size_t len)
{
	if (status == -1)
		return "ERROR";
	if (WIFSIGNALED(status)) {
		const char *s = sigabbrev_np(WTERMSIG(status));
		snprintf(buf, len, "SIG%s", s ? s : "?");
		return buf;
	}
	return probe_errname(WEXITSTATUS(status), buf, len);
}

#ifndef PROBE_SYSCALLS_NO_MAIN
/* `probe_syscalls abi`: only the two foreign-ABI lines, harmless anywhere:
 * the e2e suite runs it on the host to learn whether the kernel has an
 * i386 entry at all (without IA32 emulation int 0x80 is SIGSEGV before any
 * filter sees it). */
int main(int argc, char **argv)
{
	char buf[32];
	int abi_only = argc > 1 && strcmp(argv[1], "abi") == 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < PROBE_NCALLS && !abi_only; i++)
		printf("%s %s\n", probe_calls[i].name,
		       probe_errname(probe_call_run(&probe_calls[i]), buf, sizeof(buf)));
	fflush(stdout);
	printf("x32 %s\n", probe_status_name(probe_abi_status("x32"), buf, sizeof(buf)));
	fflush(stdout);
	printf("i386 %s\n", probe_status_name(probe_abi_status("i386"), buf, sizeof(buf)));
	return 0;
}
#endif
