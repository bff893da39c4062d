// Package rules is the seccomp policy of scidex-jail written as data: which
// system calls, with which arguments, are answered with which errno.
//
// Two programs read it. The generator (seccomp/internal/gen) turns it into
// BPF with libseccomp; the seccomp package summarises it for the run report.
// Keeping the table here, in pure Go, means the report can never describe a
// policy other than the one that was compiled.
//
// Every argument comparison is a masked equality, or (NotEqual, on a whole
// argument) its negation. Comparisons on int or
// unsigned int arguments (socket family, ioctl request, personality, clone
// flags) look at the low 32 bits only: the kernel truncates those arguments to
// 32 bits, so a 64-bit comparison would let a caller slip past a deny rule by
// setting garbage in the high half (socket(0x100000002, ...) is AF_INET to the
// kernel).
package rules

import (
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Network policies: which sockets a filter lets a process make. The
// seccomp package's Net constants have the same values. Which network a
// process is in (a namespace of its own, the host's) is not the filter's
// business: the caller's network modes each name one of these.
const (
	NetNone = "none" // no inet, inet6 or netlink socket
	NetInet = "inet" // inet, inet6 and netlink route sockets
)

// Names lists the policy names, Nets the network policies and Arches the
// GOARCH values a program is generated for.
var (
	Names  = []string{"default"}
	Nets   = []string{NetNone, NetInet}
	Arches = []string{"amd64", "arm64"}
)

// Quoted writes a list of names for messages, each quoted:
// ["none" "inet"].
func Quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// Cmp matches when (argument[Arg] & Mask) == Value, or, with NotEqual,
// when it differs. NotEqual takes a full Mask only: libseccomp's
// SCMP_CMP_NE compares the whole 64-bit argument.
type Cmp struct {
	Arg      uint
	Mask     uint64
	Value    uint64
	NotEqual bool
}

// Matches says whether c holds for the argument value v.
func (c Cmp) Matches(v uint64) bool { return (v&c.Mask == c.Value) != c.NotEqual }

// nonZero matches a whole argument that is not 0.
func nonZero(arg uint) Cmp { return Cmp{Arg: arg, Mask: ^uint64(0), NotEqual: true} }

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

// Head is a group without its rules: its line in the report and its errno,
// all a report needs, at a fraction of the cost of building the rules.
type Head struct {
	Summary string
	Errno   unix.Errno
}

// A def is one group of the table, with its rules not yet built.
type def struct {
	Head
	rules func() []Rule
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

// Check returns the error Groups and Heads return for an unknown policy
// name or network policy, and nil for a known pair.
func Check(name, net string) error {
	_, err := defs(name, net)
	return err
}

// Groups returns the deny rules of policy name with network policy net.
func Groups(name, net string) ([]Group, error) {
	ds, err := defs(name, net)
	if err != nil {
		return nil, err
	}
	gs := make([]Group, len(ds))
	for i, d := range ds {
		gs[i] = Group{Summary: d.Summary, Errno: d.Errno, Rules: d.rules()}
	}
	return gs, nil
}

// Heads returns the groups of Groups(name, net) without their rules, in
// the same order.
func Heads(name, net string) ([]Head, error) {
	ds, err := defs(name, net)
	if err != nil {
		return nil, err
	}
	hs := make([]Head, len(ds))
	for i, d := range ds {
		hs[i] = d.Head
	}
	return hs, nil
}

func defs(name, net string) ([]def, error) {
	if name != "default" {
		return nil, errors.New("seccomp policy " + strconv.Quote(name) + ": unknown (known: " + Quoted(Names) + ")")
	}
	switch net {
	case NetNone:
		return append(baseDefs(), socketDefs(false)...), nil
	case NetInet:
		return append(baseDefs(), socketDefs(true)...), nil
	}
	return nil, errors.New("seccomp policy " + strconv.Quote(name) + ": network policy " + strconv.Quote(net) + " unknown (known: " + Quoted(Nets) + ")")
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

// cloneRules refuse clone with any namespace flag.
func cloneRules() []Rule {
	var clone []Rule
	for _, b := range cloneNewFlags {
		// clone's flags are arg0 on both amd64 and arm64 (s390 swaps them,
		// which is one reason programs exist only for these two).
		clone = append(clone, Rule{Syscall: "clone", Conds: []Cmp{bit(0, b)}})
	}
	return clone
}

// personalityRules allow only PER_LINUX (0) and the query 0xffffffff. The
// kernel reads an unsigned int, so that is "low 32 bits not all zero and
// not all one", which holds exactly when, going round the 32 bits as a
// ring, some set bit is followed by a clear one: 32 masked comparisons.
func personalityRules() []Rule {
	var pers []Rule
	for i := uint(0); i < 32; i++ {
		j := (i + 1) % 32
		pers = append(pers, Rule{Syscall: "personality", Conds: []Cmp{{Arg: 0, Mask: 1<<i | 1<<j, Value: 1 << i}}})
	}
	return pers
}

// namesOf returns a rules function refusing the syscalls whole.
func namesOf(syscalls ...string) func() []Rule {
	return func() []Rule { return names(syscalls...) }
}

func baseDefs() []def {
	return []def{
		// open_tree_attr (6.15) is open_tree with mount attributes;
		// statmount and listmount (6.8) read the mount tree, which the run
		// has no reason to walk past its own /proc/self/mountinfo.
		{Head{"mount and the mount API (mount, umount2, pivot_root, move_mount, open_tree*, fs*, mount_setattr, statmount, listmount)", unix.EPERM},
			namesOf("mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree",
				"open_tree_attr", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
				"statmount", "listmount")},
		// listns (6.18) lists the namespaces the caller may see, the
		// host's among them in a shared user namespace.
		{Head{"new namespaces and listing them (unshare, setns, listns, clone with CLONE_NEW*)", unix.EPERM},
			func() []Rule { return append(names("unshare", "setns", "listns"), cloneRules()...) }},
		// clone3 passes its flags in a struct a filter cannot read, so it is
		// refused whole; ENOSYS makes glibc (>= 2.34) fall back to clone(2),
		// whose flags the rule above checks.
		{Head{"clone3 (libc falls back to clone)", unix.ENOSYS}, namesOf("clone3")},
		{Head{"ptrace and access to other processes (process_vm_*, kcmp, pidfd_getfd, process_madvise, migrate_pages)", unix.EPERM},
			namesOf("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
				"process_madvise", "migrate_pages")},
		{Head{"kernel modules, kexec, reboot, swap, accounting, quotas, syslog, raw I/O ports", unix.EPERM},
			namesOf("init_module", "finit_module", "delete_module", "create_module",
				"get_kernel_syms", "query_module", "kexec_load", "kexec_file_load", "reboot",
				"swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "syslog",
				"vhangup", "nfsservctl", "pciconfig_read", "pciconfig_write", "pciconfig_iobase",
				"iopl", "ioperm", "modify_ldt", "uselib", "_sysctl", "ustat", "sysfs", "fanotify_init")},
		// io_uring is here because its requests (IORING_OP_SOCKET, ...) do
		// not pass through the socket rules below.
		{Head{"bpf, perf_event_open, userfaultfd, io_uring", unix.EPERM},
			namesOf("bpf", "perf_event_open", "userfaultfd",
				"io_uring_setup", "io_uring_enter", "io_uring_register")},
		// lsm_set_self_attr (6.8) changes the caller's own LSM context
		// (AppArmor hats, SELinux contexts), which no analysis needs; the
		// reading calls are allowed.
		{Head{"setting one's LSM attributes (lsm_set_self_attr)", unix.EPERM},
			namesOf("lsm_set_self_attr")},
		{Head{"kernel keyrings (keyctl, add_key, request_key)", unix.EPERM},
			namesOf("keyctl", "add_key", "request_key")},
		{Head{"file handles (open_by_handle_at, name_to_handle_at)", unix.EPERM},
			namesOf("open_by_handle_at", "name_to_handle_at")},
		{Head{"setting clocks (settimeofday, clock_settime, clock_adjtime, adjtimex, stime)", unix.EPERM},
			namesOf("settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime")},
		// TIOCSTI pushes input into a terminal the jail shares with its
		// caller (CVE-2017-5226 in bubblewrap); TIOCLINUX can do the same
		// on a virtual console.
		{Head{"terminal injection ioctls (TIOCSTI, TIOCLINUX)", unix.EPERM},
			func() []Rule {
				return []Rule{
					{Syscall: "ioctl", Conds: []Cmp{low32(1, unix.TIOCSTI)}},
					{Syscall: "ioctl", Conds: []Cmp{low32(1, unix.TIOCLINUX)}},
				}
			}},
		{Head{"personality other than PER_LINUX", unix.EPERM}, personalityRules},
		// The analysis runs as its init's uid, so without this it could
		// set PID 1's limits (RLIMIT_NOFILE 0, or an RLIMIT_CPU the kernel
		// would SIGKILL it by). Reading another's limits (arg 2 NULL) and
		// setting one's own (pid 0, setrlimit) stay allowed; a pid with
		// garbage in the high half (which the kernel truncates to 0) is
		// refused too, which no libc passes.
		{Head{"setting another process's limits (prlimit64 with a pid and a new limit)", unix.EPERM},
			func() []Rule { return []Rule{{Syscall: "prlimit64", Conds: []Cmp{nonZero(0), nonZero(2)}}} }},
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

// socketDefs are the socket groups: only unix sockets, or (inet) unix,
// inet, inet6 and netlink route sockets.
func socketDefs(inet bool) []def {
	allow := map[uint64]bool{unix.AF_UNIX: true}
	summary := "sockets other than unix"
	if inet {
		allow = map[uint64]bool{unix.AF_UNIX: true, unix.AF_INET: true, unix.AF_INET6: true, unix.AF_NETLINK: true}
		summary = "sockets other than unix, inet, inet6 and netlink route"
	}
	ds := []def{
		{Head{summary, unix.EAFNOSUPPORT}, func() []Rule { return socketRules(allow) }},
		// socketpair exists for unix sockets only in practice.
		{Head{"socketpair other than unix", unix.EAFNOSUPPORT},
			func() []Rule { return deniedFamilies("socketpair", map[uint64]bool{unix.AF_UNIX: true}) }},
	}
	if !inet {
		return ds
	}
	return append(ds,
		def{Head{"MPTCP sockets", unix.EPROTONOSUPPORT}, mptcpRules},
		def{Head{"raw and packet inet sockets", unix.EPERM}, rawRules},
	)
}

// socketRules refuse socket(2) for every family not in allow.
func socketRules(allow map[uint64]bool) []Rule {
	families := deniedFamilies("socket", allow)
	if allow[unix.AF_NETLINK] {
		// Only NETLINK_ROUTE (0), which glibc's getaddrinfo uses. A
		// protocol is not 0 exactly when one of its 32 low bits is set.
		for b := uint(0); b < 32; b++ {
			families = append(families, Rule{Syscall: "socket",
				Conds: []Cmp{low32(0, unix.AF_NETLINK), bit(2, b)}})
		}
	}
	return families
}

// mptcpRules refuse MPTCP whatever the type: the kernel accepts it only
// with SOCK_STREAM, and Landlock's TCP port rules do not see it.
// EPROTONOSUPPORT is what a kernel without MPTCP says, and what libraries
// that try MPTCP first fall back on.
func mptcpRules() []Rule {
	var mptcp []Rule
	for _, f := range []uint64{unix.AF_INET, unix.AF_INET6} {
		mptcp = append(mptcp, Rule{Syscall: "socket",
			Conds: []Cmp{low32(0, f), low32(2, ipprotoMPTCP)}})
	}
	return mptcp
}

// rawRules refuse raw and packet inet sockets. The type carries
// SOCK_NONBLOCK|SOCK_CLOEXEC in its high bits; the kind is the low four
// (SOCK_TYPE_MASK).
func rawRules() []Rule {
	var raw []Rule
	for _, f := range []uint64{unix.AF_INET, unix.AF_INET6} {
		for _, typ := range []uint64{unix.SOCK_RAW, unix.SOCK_PACKET} {
			raw = append(raw, Rule{Syscall: "socket",
				Conds: []Cmp{low32(0, f), {Arg: 1, Mask: 0xf, Value: typ}}})
		}
	}
	return raw
}
