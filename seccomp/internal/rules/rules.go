// Package rules is the seccomp policy of scidex-jail written as data: which
// system calls, with which arguments, are answered with which errno.
//
// Two programs read it. The generator (seccomp/internal/gen) turns it into
// BPF with libseccomp; the seccomp package summarises it for the run report.
// Keeping the table here, in pure Go, means the report can never describe a
// policy other than the one that was compiled.
//
// Every argument comparison is a masked equality. Comparisons on int or
// unsigned int arguments (socket family, ioctl request, personality, clone
// flags) look at the low 32 bits only: the kernel truncates those arguments to
// 32 bits, so a 64-bit comparison would let a caller slip past a deny rule by
// setting garbage in the high half (socket(0x100000002, ...) is AF_INET to the
// kernel).
package rules

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Network modes; the seccomp package's NetMode constants have the same values.
const (
	NetNone     = "none"
	NetLoopback = "loopback"
	NetHost     = "host"
)

// Names lists the policy names, NetModes the network modes and Arches the
// GOARCH values a program is generated for.
var (
	Names    = []string{"default"}
	NetModes = []string{NetNone, NetLoopback, NetHost}
	Arches   = []string{"amd64", "arm64"}
)

// Cmp matches when (argument[Arg] & Mask) == Value.
type Cmp struct {
	Arg   uint
	Mask  uint64
	Value uint64
}

// Rule answers Syscall with the group's errno when all Conds match (always,
// when Conds is empty).
type Rule struct {
	Syscall string
	Conds   []Cmp
}

// Group is a set of rules that share an errno and one line in the report.
type Group struct {
	Summary string
	Errno   unix.Errno
	Rules   []Rule
}

// ForeignABI says, per GOARCH, which syscall ABIs the program refuses and
// how: any syscall made through them kills the whole process (SIGSYS).
// Killing rather than EPERM because no analysis has a reason to use them, and
// a 32-bit entry point is the classic way around argument checks written for
// the 64-bit one.
var ForeignABI = map[string]string{
	"amd64": "i386 (int 0x80) and x32 syscall ABIs: process killed (SIGSYS)",
	"arm64": "arm32 (compat) syscall ABI: process killed (SIGSYS)",
}

// FileName is the name of the generated program for one policy.
func FileName(name, net, arch string) string {
	return name + "_" + net + "_" + arch + ".bpf"
}

// Groups returns the deny rules of policy name in network mode net.
func Groups(name, net string) ([]Group, error) {
	if name != "default" {
		return nil, fmt.Errorf("seccomp policy %q: unknown (known: %q)", name, Names)
	}
	var sock []Group
	switch net {
	case NetNone:
		sock = socketGroups(map[uint64]bool{unix.AF_UNIX: true}, false)
	case NetLoopback, NetHost:
		// loopback and host differ in the network namespace, not in the
		// filter: both need inet sockets.
		sock = socketGroups(map[uint64]bool{
			unix.AF_UNIX: true, unix.AF_INET: true, unix.AF_INET6: true, unix.AF_NETLINK: true,
		}, true)
	default:
		return nil, fmt.Errorf("seccomp policy %q: network mode %q unknown (known: %q)", name, net, NetModes)
	}
	return append(baseGroups(), sock...), nil
}

func names(syscalls ...string) []Rule {
	rs := make([]Rule, len(syscalls))
	for i, s := range syscalls {
		rs[i] = Rule{Syscall: s}
	}
	return rs
}

// low32 compares the low 32 bits of an argument with v.
func low32(arg uint, v uint64) Cmp { return Cmp{Arg: arg, Mask: 0xffffffff, Value: v} }

// bit matches when bit b of an argument is set.
func bit(arg uint, b uint) Cmp { return Cmp{Arg: arg, Mask: 1 << b, Value: 1 << b} }

// cloneNewFlags are the namespace flags clone(2) accepts. CLONE_NEWTIME
// (0x80) is absent on purpose: in clone(2) that bit is part of the exit
// signal (CSIGNAL); only clone3 and unshare take it, and both are denied.
var cloneNewFlags = []uint{
	17, // CLONE_NEWNS 0x00020000
	25, // CLONE_NEWCGROUP 0x02000000
	26, // CLONE_NEWUTS 0x04000000
	27, // CLONE_NEWIPC 0x08000000
	28, // CLONE_NEWUSER 0x10000000
	29, // CLONE_NEWPID 0x20000000
	30, // CLONE_NEWNET 0x40000000
}

func baseGroups() []Group {
	var clone []Rule
	for _, b := range cloneNewFlags {
		// clone's flags are arg0 on both amd64 and arm64 (s390 swaps them,
		// which is one reason programs exist only for these two).
		clone = append(clone, Rule{Syscall: "clone", Conds: []Cmp{bit(0, b)}})
	}
	// personality: allow only PER_LINUX (0) and the query 0xffffffff. The
	// kernel reads an unsigned int, so that is "low 32 bits not all zero and
	// not all one", which holds exactly when, going round the 32 bits as a
	// ring, some set bit is followed by a clear one: 32 masked comparisons.
	var pers []Rule
	for i := uint(0); i < 32; i++ {
		j := (i + 1) % 32
		pers = append(pers, Rule{Syscall: "personality", Conds: []Cmp{{Arg: 0, Mask: 1<<i | 1<<j, Value: 1 << i}}})
	}
	return []Group{
		{Summary: "mount and the mount API (mount, umount2, pivot_root, move_mount, open_tree, fs*, mount_setattr)", Errno: unix.EPERM,
			Rules: names("mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree",
				"fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr")},
		{Summary: "new namespaces (unshare, setns, clone with CLONE_NEW*)", Errno: unix.EPERM,
			Rules: append(names("unshare", "setns"), clone...)},
		// clone3 passes its flags in a struct a filter cannot read, so it is
		// refused whole; ENOSYS makes glibc (>= 2.34) fall back to clone(2),
		// whose flags the rule above checks.
		{Summary: "clone3 (libc falls back to clone)", Errno: unix.ENOSYS, Rules: names("clone3")},
		{Summary: "ptrace and access to other processes (process_vm_*, kcmp, pidfd_getfd, process_madvise, migrate_pages)", Errno: unix.EPERM,
			Rules: names("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
				"process_madvise", "migrate_pages")},
		{Summary: "kernel modules, kexec, reboot, swap, accounting, quotas, syslog, raw I/O ports", Errno: unix.EPERM,
			Rules: names("init_module", "finit_module", "delete_module", "create_module",
				"get_kernel_syms", "query_module", "kexec_load", "kexec_file_load", "reboot",
				"swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "syslog",
				"vhangup", "nfsservctl", "pciconfig_read", "pciconfig_write", "pciconfig_iobase",
				"iopl", "ioperm", "modify_ldt", "uselib", "_sysctl", "ustat", "sysfs", "fanotify_init")},
		// io_uring is here because its requests (IORING_OP_SOCKET, ...) do
		// not pass through the socket rules below.
		{Summary: "bpf, perf_event_open, userfaultfd, io_uring", Errno: unix.EPERM,
			Rules: names("bpf", "perf_event_open", "userfaultfd",
				"io_uring_setup", "io_uring_enter", "io_uring_register")},
		{Summary: "kernel keyrings (keyctl, add_key, request_key)", Errno: unix.EPERM,
			Rules: names("keyctl", "add_key", "request_key")},
		{Summary: "file handles (open_by_handle_at, name_to_handle_at)", Errno: unix.EPERM,
			Rules: names("open_by_handle_at", "name_to_handle_at")},
		{Summary: "setting clocks (settimeofday, clock_settime, clock_adjtime, adjtimex, stime)", Errno: unix.EPERM,
			Rules: names("settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime")},
		// TIOCSTI pushes input into a terminal the jail shares with its
		// caller (CVE-2017-5226 in bubblewrap); TIOCLINUX can do the same
		// on a virtual console.
		{Summary: "terminal injection ioctls (TIOCSTI, TIOCLINUX)", Errno: unix.EPERM,
			Rules: []Rule{
				{Syscall: "ioctl", Conds: []Cmp{low32(1, unix.TIOCSTI)}},
				{Syscall: "ioctl", Conds: []Cmp{low32(1, unix.TIOCLINUX)}},
			}},
		{Summary: "personality other than PER_LINUX", Errno: unix.EPERM, Rules: pers},
	}
}

// familyLimit bounds the families listed one by one. AF_MAX is 46 in Linux
// 6.18; values from 64 up (and negative ones) are matched by their high bits,
// so a family added by a later kernel is refused too.
const familyLimit = 64

// deniedFamilies returns rules for syscall refusing every family (arg0) not
// in allow.
func deniedFamilies(syscall string, allow map[uint64]bool) []Rule {
	var rs []Rule
	for f := uint64(0); f < familyLimit; f++ {
		if !allow[f] {
			rs = append(rs, Rule{Syscall: syscall, Conds: []Cmp{low32(0, f)}})
		}
	}
	for b := uint(6); b < 32; b++ { // 1<<6 == familyLimit
		rs = append(rs, Rule{Syscall: syscall, Conds: []Cmp{bit(0, b)}})
	}
	return rs
}

// IPPROTO_MPTCP is missing from x/sys/unix.
const ipprotoMPTCP = 262

func socketGroups(allow map[uint64]bool, inet bool) []Group {
	summary := "sockets other than unix"
	if inet {
		summary = "sockets other than unix, inet, inet6 and netlink route"
	}
	families := deniedFamilies("socket", allow)
	if allow[unix.AF_NETLINK] {
		// Only NETLINK_ROUTE (0), which glibc's getaddrinfo uses. A
		// protocol is not 0 exactly when one of its 32 low bits is set.
		for b := uint(0); b < 32; b++ {
			families = append(families, Rule{Syscall: "socket",
				Conds: []Cmp{low32(0, unix.AF_NETLINK), bit(2, b)}})
		}
	}
	gs := []Group{
		{Summary: summary, Errno: unix.EAFNOSUPPORT, Rules: families},
		// socketpair exists for unix sockets only in practice.
		{Summary: "socketpair other than unix", Errno: unix.EAFNOSUPPORT,
			Rules: deniedFamilies("socketpair", map[uint64]bool{unix.AF_UNIX: true})},
	}
	if !inet {
		return gs
	}
	var mptcp, raw []Rule
	for _, f := range []uint64{unix.AF_INET, unix.AF_INET6} {
		// MPTCP is refused whatever the type: the kernel accepts it only
		// with SOCK_STREAM, and Landlock's TCP port rules do not see it.
		// EPROTONOSUPPORT is what a kernel without MPTCP says, and what
		// libraries that try MPTCP first fall back on.
		mptcp = append(mptcp, Rule{Syscall: "socket",
			Conds: []Cmp{low32(0, f), low32(2, ipprotoMPTCP)}})
		// The type carries SOCK_NONBLOCK|SOCK_CLOEXEC in its high bits;
		// the kind is the low four (SOCK_TYPE_MASK).
		for _, typ := range []uint64{unix.SOCK_RAW, unix.SOCK_PACKET} {
			raw = append(raw, Rule{Syscall: "socket",
				Conds: []Cmp{low32(0, f), {Arg: 1, Mask: 0xf, Value: typ}}})
		}
	}
	return append(gs,
		Group{Summary: "MPTCP sockets", Errno: unix.EPROTONOSUPPORT, Rules: mptcp},
		Group{Summary: "raw and packet inet sockets", Errno: unix.EPERM, Rules: raw},
	)
}
