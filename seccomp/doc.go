// Package seccomp is the system call filter of scidex-jail: a table that
// classifies every system call, denying kernel attack surface with errnos
// so that interpreters fail cleanly instead of dying, plus a socket policy
// (Net: none or inet), and ENOSYS for every number the table does not name.
//
// # How the filter is built
//
// The rules are data (internal/rules). A generator (internal/gen, cgo and
// libseccomp) compiles them ahead of time into classic BPF, one program per
// policy, network policy and architecture (amd64, arm64): a short prologue of
// its own (the numbers the table does not name, see below) followed by
// libseccomp's program of the rules, which uses a binary tree of syscall
// numbers (SCMP_FLTATR_CTL_OPTIMIZE=2). The programs
// are checked in under bpf/ and embedded, so this package and the jail build
// with CGO_ENABLED=0. After changing the rules, regenerate with
//
//	go generate ./seccomp    # needs cgo, pkg-config, libseccomp-dev
//
// bpf/generated.txt records the libseccomp version, the size and SHA-256 of
// each program, its prologue's ENOSYS ranges and the calls it denies by
// number, and the listed syscalls an architecture does not have.
// TestGeneratedUpToDate (internal/gen, runs when cgo is on) fails when the
// checked-in programs differ from a fresh generation.
//
// # What it refuses
//
// The table (internal/rules) classifies every system call that
// golang.org/x/sys/unix names for amd64 and arm64: allowed by name
// (rules.Allowed, some with conditional rules below), denied whole by a
// group, or not implemented by Linux. Every other number, in a gap of the
// numbering or above the highest the table knows, gets ENOSYS, the
// kernel's answer for a number it does not implement, so that libc and
// runtimes fall back as on an older kernel (EPERM would read as a refusal:
// Docker's EPERM for calls newer than its profile broke glibc's
// faccessat2). A syscall a new kernel adds is thus refused until someone
// classifies it: TestEverySyscallClassified fails when an x/sys upgrade
// names one the table does not, and so does the generator.
//
// With EPERM: mount, umount2, pivot_root and the mount API (move_mount,
// open_tree, open_tree_attr, fsopen, fsmount, fsconfig, fspick,
// mount_setattr, statmount, listmount); unshare, setns, listns, and clone
// with any CLONE_NEW* flag; lsm_set_self_attr; ptrace, process_vm_readv/
// writev, kcmp, pidfd_getfd, process_madvise, migrate_pages; module
// loading, kexec, reboot, swapon/swapoff, acct, quotactl, lookup_dcookie,
// syslog, vhangup, nfsservctl, pciconfig_*, iopl/ioperm, modify_ldt,
// uselib, _sysctl, ustat, sysfs, fanotify_init; bpf, perf_event_open, userfaultfd, io_uring_*
// (io_uring can open sockets past the socket rules); keyctl, add_key,
// request_key; open_by_handle_at, name_to_handle_at; settimeofday,
// clock_settime, clock_adjtime, adjtimex, stime; ioctl TIOCSTI and
// TIOCLINUX; personality other than PER_LINUX (0) and the query 0xffffffff;
// prlimit64 setting a new limit (arg 2 not NULL) for any pid but 0, its own
// pid given by number too (a filter cannot compare with the caller's): the
// analysis shares its init's uid, and could lower PID 1's limits.
// clone3 gets ENOSYS: its flags sit in a struct a filter cannot read, and
// ENOSYS makes glibc fall back to clone(2).
//
// Sockets (socket and socketpair), by Net:
//
//	              none          inet
//	AF_UNIX       allowed       allowed
//	AF_INET(6)    EAFNOSUPPORT  allowed, except MPTCP (EPROTONOSUPPORT)
//	                            and SOCK_RAW/SOCK_PACKET (EPERM)
//	AF_NETLINK    EAFNOSUPPORT  NETLINK_ROUTE only (glibc getaddrinfo)
//	anything else EAFNOSUPPORT  EAFNOSUPPORT
//	socketpair    AF_UNIX only (EAFNOSUPPORT) in every mode
//
// The filter does not know the jail's network modes: a mode names one Net
// (loopback and host both name inet) and sets up its namespace itself.
// Argument checks look at the low 32 bits of int
// arguments, as the kernel does, so high garbage bits do not bypass them.
//
// Foreign syscall ABIs kill the process (SECCOMP_RET_KILL_PROCESS, the run
// ends with SIGSYS): i386 (int 0x80, AUDIT_ARCH_I386) and x32 (syscall
// numbers with bit 0x40000000) on amd64, arm32 compat on arm64. No analysis
// has a use for them, and they are the usual way around rules written for
// the native ABI.
//
// # What stays allowed, and limits
//
// The jail's Go init keeps running under the filter: futex, epoll, signals,
// wait4/waitid, pidfd_*, unix sockets, nanosleep, and clone without
// namespace flags (Go threads: CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|
// CLONE_SYSVSEM|CLONE_THREAD; os.StartProcess: CLONE_VFORK|CLONE_VM, with
// CLONE_PIDFD). Go's os/exec uses clone3 only with SysProcAttr.UseCgroupFD
// or CLONE_NEWTIME, and does not fall back: do not use those after Load.
// NUMA memory-policy calls (mbind, set_mempolicy, get_mempolicy, move_pages
// on oneself) stay allowed because OpenMP and BLAS runtimes use them.
//
// Syscalls newer than the libseccomp that generates the programs (Debian
// 12's 2.5.4 names those up to Linux 6.7) are numbered from x/sys/unix
// instead: the prologue denies those the table denies whole (open_tree_attr,
// statmount, listmount, listns, lsm_set_self_attr) by number, and
// generated.txt lists them. An argument rule on such a syscall needs a
// newer libseccomp; the generator says so.
//
// The x32 ABI (numbers with bit 0x40000000 on amd64) and -1 (the number a
// tracer sets to skip a call) are left to libseccomp's program as before:
// x32 kills, -1 passes to the kernel, which answers ENOSYS.
//
// # Kernel
//
// seccomp(2) with SECCOMP_FILTER_FLAG_TSYNC (Linux 3.17) and
// SECCOMP_RET_KILL_PROCESS (4.14), CONFIG_SECCOMP_FILTER. When missing, Load
// returns an error matching ErrUnsupported that says what was found.
//
// # Use
//
// As the package's Example (compiled with the tests):
//
//	prog, err := seccomp.Lookup(seccomp.Policy{Name: "default", Net: seccomp.NetNone})
//	if err != nil {
//		return err // errors.Is(err, seccomp.ErrUnsupported) on other architectures
//	}
//	report.Seccomp = prog.Denied() // and prog.SHA256
//	// ... mounts, identity, no_new_privs, Landlock, close fds ...
//	if err := prog.Load(); err != nil { // last step before starting the target
//		return err
//	}
package seccomp
