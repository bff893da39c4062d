package rules

import (
	"errors"
	"sort"

	"golang.org/x/sys/unix"
)

// The table classifies every system call golang.org/x/sys/unix names for
// amd64 and arm64 (TestEverySyscallClassified): each is Allowed, denied
// whole by a group's rule, or NotImplemented. The programs answer every
// other number, below the highest one the table knows or above it, with
// Unknown's errno, ENOSYS. So a kernel's new system call is refused until
// someone reads what it does and adds it here, and an x/sys upgrade that
// names it fails the test until they do.

// Unknown is the report's line for the numbers the table does not name.
// ENOSYS is what the kernel answers for a number it does not implement:
// libc and language runtimes take it to mean an older kernel and fall back
// (glibc from clone3 to clone, from faccessat2 to faccessat, from statx to
// fstatat), where EPERM is taken as a refusal and fails the call (Docker's
// EPERM for syscalls newer than its profile broke glibc 2.33's faccessat2;
// runc's filters have since answered ENOSYS for them).
var Unknown = Head{"system calls the table does not name (unassigned numbers, and any newer than it)", unix.ENOSYS}

// Allowed are the system calls let through by name. Some of them have
// conditional rules in a group (clone, ioctl, personality, socket,
// socketpair): those arguments are refused, the rest allowed.
var Allowed = []string{
	// Files and directories. The path forms and their *at variants alike;
	// what a path may reach is Landlock's and the mount namespace's to say.
	"access", "chdir", "chmod", "chown", "close", "close_range", "copy_file_range",
	"creat", "dup", "dup2", "dup3", "faccessat", "faccessat2", "fadvise64", "fallocate",
	"fchdir", "fchmod", "fchmodat", "fchown", "fchownat", "fcntl", "fdatasync",
	"flock", "fstat", "fstatfs", "fsync", "ftruncate", "futimesat", "getcwd", "getdents",
	"getdents64", "lchown", "link", "linkat", "lseek", "lstat", "mkdir", "mkdirat", "mknod",
	"mknodat", "newfstatat", "open", "openat", "openat2", "pread64", "preadv", "preadv2",
	"pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat",
	"readv", "rename", "renameat", "renameat2", "rmdir", "sendfile", "splice", "stat",
	"statfs", "statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "tee",
	"truncate", "umask", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vmsplice",
	"write", "writev",
	// fchmodat2 (6.6): fchmodat with flags, glibc's lchmod.
	"fchmodat2",
	// cachestat (6.5): page cache statistics of a file the caller opened,
	// as mincore gives for a mapping.
	"cachestat",
	// file_getattr, file_setattr (6.17): the FS_IOC_FSGETXATTR and
	// FSSETXATTR ioctls as system calls, which are allowed.
	"file_getattr", "file_setattr",
	// Extended attributes; the *xattrat forms (6.13) are the path ones with
	// a directory fd, like every other *at call.
	"fgetxattr", "flistxattr", "fremovexattr", "fsetxattr", "getxattr", "lgetxattr",
	"listxattr", "llistxattr", "lremovexattr", "lsetxattr", "removexattr", "setxattr",
	"getxattrat", "listxattrat", "removexattrat", "setxattrat",
	// File events; fanotify_init is denied, so fanotify_mark has no fd.
	"fanotify_mark", "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch",
	// Asynchronous I/O (io_uring is denied).
	"io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_setup", "io_submit",
	"ioprio_get", "ioprio_set",
	// Memory. mseal (6.10) seals the caller's own mappings (glibc's loader
	// can use it); map_shadow_stack (6.6) allocates a CET shadow stack.
	"brk", "madvise", "membarrier", "memfd_create", "memfd_secret", "mincore", "mlock",
	"mlock2", "mlockall", "mmap", "mprotect", "mremap", "msync", "munlock", "munlockall",
	"munmap", "pkey_alloc", "pkey_free", "pkey_mprotect", "remap_file_pages", "mseal",
	"map_shadow_stack",
	// NUMA policy, for OpenMP and BLAS runtimes (migrate_pages is denied).
	"get_mempolicy", "mbind", "move_pages", "set_mempolicy", "set_mempolicy_home_node",
	// Processes and threads. clone has conditional rules; process_mrelease
	// reaps a process already killed through a pidfd.
	"clone", "execve", "execveat", "exit", "exit_group", "fork", "vfork", "wait4", "waitid",
	"set_tid_address", "set_robust_list", "get_robust_list", "arch_prctl", "prctl",
	"get_thread_area", "set_thread_area", "personality", "pidfd_open", "pidfd_send_signal",
	"process_mrelease", "seccomp", "capget", "capset", "kill", "tkill", "tgkill",
	"restart_syscall",
	// rseq, and rseq_slice_yield, its scheduler hint (newer than 6.18).
	"rseq", "rseq_slice_yield",
	// Futexes, with futex2's calls (futex_waitv 5.16; wake, wait, requeue
	// 6.7).
	"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue",
	// uretprobe (6.11) and uprobe are called from the trampoline the
	// kernel maps for a probe a host tracer set, and fail with SIGILL from
	// anywhere else; denying them kills traced analyses.
	"uprobe", "uretprobe",
	// Landlock: an analysis may restrict itself further.
	"landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self",
	// LSM attributes read (6.8), as /proc/self/attr gives them;
	// lsm_set_self_attr is denied.
	"lsm_get_self_attr", "lsm_list_modules",
	// Identity, limits, scheduling. The identity calls need capabilities
	// the analysis does not have in its user namespace.
	"getegid", "geteuid", "getgid", "getgroups", "getresgid", "getresuid", "getuid",
	"setfsgid", "setfsuid", "setgid", "setgroups", "setregid", "setresgid", "setresuid",
	"setreuid", "setuid", "getpgid", "getpgrp", "getpid", "getppid", "getsid", "gettid",
	"setpgid", "setsid", "getpriority", "setpriority", "getrlimit", "setrlimit", "prlimit64",
	"getrusage", "times", "sysinfo", "uname", "getcpu", "getrandom", "sethostname",
	"setdomainname", "chroot",
	"sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
	"sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield",
	// Signals.
	"pause", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
	"rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sigaltstack",
	"signalfd", "signalfd4",
	// Time and timers (setting clocks is denied).
	"alarm", "clock_getres", "clock_gettime", "clock_nanosleep", "getitimer", "gettimeofday",
	"nanosleep", "setitimer", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
	// Waiting on descriptors.
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait",
	"eventfd", "eventfd2", "pipe", "pipe2", "poll", "ppoll", "pselect6", "select",
	// Terminals and devices: ioctl has conditional rules.
	"ioctl",
	// Sockets: socket and socketpair have conditional rules per network policy.
	"socket", "socketpair", "accept", "accept4", "bind", "connect", "getpeername",
	"getsockname", "getsockopt", "listen", "recvfrom", "recvmmsg", "recvmsg", "sendmmsg",
	"sendmsg", "sendto", "setsockopt", "shutdown",
	// System V and POSIX IPC, in the run's own IPC namespace.
	"msgctl", "msgget", "msgrcv", "msgsnd", "semctl", "semget", "semop", "semtimedop",
	"shmat", "shmctl", "shmdt", "shmget", "mq_getsetattr", "mq_notify", "mq_open",
	"mq_timedreceive", "mq_timedsend", "mq_unlink",
}

// NotImplemented are names x/sys/unix lists that Linux does not implement
// on amd64 or arm64 (reserved numbers, and arm64's arch_specific_syscall,
// the first number of a range it leaves empty). They are treated as
// unknown numbers: ENOSYS, as the kernel answers.
var NotImplemented = []string{
	"afs_syscall", "arch_specific_syscall", "epoll_ctl_old", "epoll_wait_old", "getpmsg",
	"putpmsg", "security", "tuxcall", "vserver",
}

// Unclassified returns, sorted, the names that are neither Allowed, nor
// NotImplemented, nor named by a rule of any policy in any network policy.
func Unclassified(names []string) ([]string, error) {
	known := map[string]bool{}
	for _, n := range Allowed {
		known[n] = true
	}
	for _, n := range NotImplemented {
		known[n] = true
	}
	for _, name := range Names {
		for _, net := range Nets {
			gs, err := Groups(name, net)
			if err != nil {
				return nil, errors.New("rules: Names and Nets list a policy Groups does not know (bug): " + err.Error())
			}
			for _, g := range gs {
				for _, r := range g.Rules {
					known[r.Syscall] = true
				}
			}
		}
	}
	var out []string
	for _, n := range names {
		if !known[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}
