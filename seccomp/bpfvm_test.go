package seccomp

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
)

// The tests in this file run the embedded programs in golang.org/x/net/bpf's
// interpreter, for every architecture and network mode, without a kernel.

var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}

// seccompData is struct seccomp_data.
type seccompData struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

// bytes lays d out as the kernel does on a little-endian machine, as 16
// 32-bit words (nr, arch, ip low, ip high, then each argument low, high). The
// interpreter reads words big-endian (packet byte order), so each word is
// written big-endian: a program's ld [16] then sees args[0]'s low half, as
// on the kernel.
func (d seccompData) bytes() []byte {
	words := []uint32{uint32(d.nr), d.arch, uint32(d.ip), uint32(d.ip >> 32)}
	for _, a := range d.args {
		words = append(words, uint32(a), uint32(a>>32))
	}
	b := make([]byte, 0, 4*len(words))
	for _, w := range words {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// newVM loads the embedded program of policy p for arch into an interpreter.
func newVM(t *testing.T, p Policy, arch string) *bpf.VM {
	t.Helper()
	prog, err := lookup(p, arch)
	if err != nil {
		t.Fatalf("lookup(%v, %s) = %v", p, arch, err)
	}
	raw := make([]bpf.RawInstruction, len(prog.Filter))
	for i, f := range prog.Filter {
		raw[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("program %v/%s: not all instructions decode", p, arch)
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatalf("program %v/%s: bpf.NewVM: %v", p, arch, err)
	}
	return vm
}

// run returns the seccomp action the program returns for d.
func run(t *testing.T, vm *bpf.VM, d seccompData) uint32 {
	t.Helper()
	ret, err := vm.Run(d.bytes())
	if err != nil {
		t.Fatalf("run %+v: %v", d, err)
	}
	return uint32(ret)
}

const (
	allow = unix.SECCOMP_RET_ALLOW
	kill  = unix.SECCOMP_RET_KILL_PROCESS
)

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// action names a seccomp return value in test messages.
func action(r uint32) string {
	switch {
	case r == allow:
		return "allow"
	case r == kill:
		return "kill-process"
	case r&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return "errno " + unix.ErrnoName(unix.Errno(r&unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("%#x", r)
}

func policies() []Policy {
	var ps []Policy
	for _, n := range rules.Names {
		for _, net := range rules.Nets {
			ps = append(ps, Policy{Name: n, Net: Net(net)})
		}
	}
	return ps
}

func TestProgramsInInterpreter(t *testing.T) {
	const (
		hi       = 1 << 32 // a garbage high half the kernel ignores for int arguments
		nonblock = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
		goThread = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
			unix.CLONE_SYSVSEM | unix.CLONE_THREAD
	)
	type want struct{ none, inet uint32 } // inet: loopback and host
	same := func(r uint32) want { return want{r, r} }
	tests := []struct {
		name string
		sys  string
		args [6]uint64
		want want
	}{
		// What the Go init and interpreters need.
		{"read", "read", [6]uint64{0}, same(allow)},
		{"openat", "openat", [6]uint64{0xffffff9c}, same(allow)},
		{"futex", "futex", [6]uint64{}, same(allow)},
		{"epoll_pwait", "epoll_pwait", [6]uint64{}, same(allow)},
		{"wait4", "wait4", [6]uint64{}, same(allow)},
		{"execve", "execve", [6]uint64{}, same(allow)},
		{"pidfd_open", "pidfd_open", [6]uint64{}, same(allow)},
		{"mbind stays for OpenMP", "mbind", [6]uint64{}, same(allow)},
		{"clone Go thread", "clone", [6]uint64{goThread}, same(allow)},
		{"clone vfork os.StartProcess", "clone", [6]uint64{unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_PIDFD | uint64(unix.SIGCHLD)}, same(allow)},
		{"clone fork", "clone", [6]uint64{uint64(unix.SIGCHLD)}, same(allow)},
		{"ioctl TCGETS", "ioctl", [6]uint64{0, unix.TCGETS}, same(allow)},
		{"personality PER_LINUX", "personality", [6]uint64{0}, same(allow)},
		{"personality query", "personality", [6]uint64{0xffffffff}, same(allow)},
		{"personality query as -1", "personality", [6]uint64{^uint64(0)}, same(allow)},

		// Namespaces and clone.
		{"unshare", "unshare", [6]uint64{unix.CLONE_NEWUSER}, same(errno(unix.EPERM))},
		{"unshare files", "unshare", [6]uint64{unix.CLONE_FILES}, same(errno(unix.EPERM))},
		{"setns", "setns", [6]uint64{3, 0}, same(errno(unix.EPERM))},
		{"clone NEWUSER", "clone", [6]uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, same(errno(unix.EPERM))},
		{"clone NEWNS", "clone", [6]uint64{unix.CLONE_NEWNS}, same(errno(unix.EPERM))},
		{"clone NEWPID", "clone", [6]uint64{unix.CLONE_NEWPID}, same(errno(unix.EPERM))},
		{"clone NEWNET", "clone", [6]uint64{unix.CLONE_NEWNET}, same(errno(unix.EPERM))},
		{"clone NEWIPC", "clone", [6]uint64{unix.CLONE_NEWIPC}, same(errno(unix.EPERM))},
		{"clone NEWUTS", "clone", [6]uint64{unix.CLONE_NEWUTS}, same(errno(unix.EPERM))},
		{"clone NEWCGROUP", "clone", [6]uint64{unix.CLONE_NEWCGROUP}, same(errno(unix.EPERM))},
		{"clone NEWNET high garbage", "clone", [6]uint64{hi | unix.CLONE_NEWNET}, same(errno(unix.EPERM))},
		{"clone3", "clone3", [6]uint64{0, 88}, same(errno(unix.ENOSYS))},

		// Mounts, kernel, debugging.
		{"mount", "mount", [6]uint64{}, same(errno(unix.EPERM))},
		{"umount2", "umount2", [6]uint64{}, same(errno(unix.EPERM))},
		{"pivot_root", "pivot_root", [6]uint64{}, same(errno(unix.EPERM))},
		{"open_tree", "open_tree", [6]uint64{}, same(errno(unix.EPERM))},
		{"move_mount", "move_mount", [6]uint64{}, same(errno(unix.EPERM))},
		{"fsopen", "fsopen", [6]uint64{}, same(errno(unix.EPERM))},
		{"fsconfig", "fsconfig", [6]uint64{}, same(errno(unix.EPERM))},
		{"fsmount", "fsmount", [6]uint64{}, same(errno(unix.EPERM))},
		{"fspick", "fspick", [6]uint64{}, same(errno(unix.EPERM))},
		{"mount_setattr", "mount_setattr", [6]uint64{}, same(errno(unix.EPERM))},
		{"ptrace", "ptrace", [6]uint64{unix.PTRACE_TRACEME}, same(errno(unix.EPERM))},
		{"process_vm_readv", "process_vm_readv", [6]uint64{}, same(errno(unix.EPERM))},
		{"process_vm_writev", "process_vm_writev", [6]uint64{}, same(errno(unix.EPERM))},
		{"kexec_load", "kexec_load", [6]uint64{}, same(errno(unix.EPERM))},
		{"kexec_file_load", "kexec_file_load", [6]uint64{}, same(errno(unix.EPERM))},
		{"init_module", "init_module", [6]uint64{}, same(errno(unix.EPERM))},
		{"finit_module", "finit_module", [6]uint64{}, same(errno(unix.EPERM))},
		{"delete_module", "delete_module", [6]uint64{}, same(errno(unix.EPERM))},
		{"bpf", "bpf", [6]uint64{}, same(errno(unix.EPERM))},
		{"perf_event_open", "perf_event_open", [6]uint64{}, same(errno(unix.EPERM))},
		{"keyctl", "keyctl", [6]uint64{}, same(errno(unix.EPERM))},
		{"add_key", "add_key", [6]uint64{}, same(errno(unix.EPERM))},
		{"request_key", "request_key", [6]uint64{}, same(errno(unix.EPERM))},
		{"userfaultfd", "userfaultfd", [6]uint64{}, same(errno(unix.EPERM))},
		{"open_by_handle_at", "open_by_handle_at", [6]uint64{}, same(errno(unix.EPERM))},
		{"name_to_handle_at", "name_to_handle_at", [6]uint64{}, same(errno(unix.EPERM))},
		{"io_uring_setup", "io_uring_setup", [6]uint64{}, same(errno(unix.EPERM))},
		{"io_uring_enter", "io_uring_enter", [6]uint64{}, same(errno(unix.EPERM))},
		{"io_uring_register", "io_uring_register", [6]uint64{}, same(errno(unix.EPERM))},
		{"swapon", "swapon", [6]uint64{}, same(errno(unix.EPERM))},
		{"swapoff", "swapoff", [6]uint64{}, same(errno(unix.EPERM))},
		{"reboot", "reboot", [6]uint64{}, same(errno(unix.EPERM))},
		{"settimeofday", "settimeofday", [6]uint64{}, same(errno(unix.EPERM))},
		{"clock_settime", "clock_settime", [6]uint64{}, same(errno(unix.EPERM))},
		{"clock_adjtime", "clock_adjtime", [6]uint64{}, same(errno(unix.EPERM))},
		{"adjtimex", "adjtimex", [6]uint64{}, same(errno(unix.EPERM))},
		{"acct", "acct", [6]uint64{}, same(errno(unix.EPERM))},
		{"quotactl", "quotactl", [6]uint64{}, same(errno(unix.EPERM))},
		{"lookup_dcookie", "lookup_dcookie", [6]uint64{}, same(errno(unix.EPERM))},
		{"syslog", "syslog", [6]uint64{}, same(errno(unix.EPERM))},
		{"vhangup", "vhangup", [6]uint64{}, same(errno(unix.EPERM))},
		{"nfsservctl", "nfsservctl", [6]uint64{}, same(errno(unix.EPERM))},
		{"iopl", "iopl", [6]uint64{3}, same(errno(unix.EPERM))},
		{"ioperm", "ioperm", [6]uint64{}, same(errno(unix.EPERM))},
		{"ioctl TIOCSTI", "ioctl", [6]uint64{0, unix.TIOCSTI}, same(errno(unix.EPERM))},
		{"ioctl TIOCSTI high garbage", "ioctl", [6]uint64{0, hi | unix.TIOCSTI}, same(errno(unix.EPERM))},
		{"ioctl TIOCLINUX", "ioctl", [6]uint64{0, unix.TIOCLINUX}, same(errno(unix.EPERM))},
		{"personality ADDR_NO_RANDOMIZE", "personality", [6]uint64{0x0040000}, same(errno(unix.EPERM))},
		{"personality READ_IMPLIES_EXEC", "personality", [6]uint64{0x0400000}, same(errno(unix.EPERM))},
		{"personality PER_LINUX32", "personality", [6]uint64{8}, same(errno(unix.EPERM))},
		{"personality all but top bit", "personality", [6]uint64{0x7fffffff}, same(errno(unix.EPERM))},
		{"personality all but bit 0", "personality", [6]uint64{0xfffffffe}, same(errno(unix.EPERM))},
		{"personality bit 31", "personality", [6]uint64{0x80000000}, same(errno(unix.EPERM))},
		{"prlimit64 set pid 1", "prlimit64", [6]uint64{1, unix.RLIMIT_NOFILE, 0x7ffd0000}, same(errno(unix.EPERM))},
		{"prlimit64 set pid 1 high half", "prlimit64", [6]uint64{1, unix.RLIMIT_CPU, hi}, same(errno(unix.EPERM))},
		{"prlimit64 read pid 1", "prlimit64", [6]uint64{1, unix.RLIMIT_NOFILE, 0, 0x7ffd0000}, same(allow)},
		{"prlimit64 set own", "prlimit64", [6]uint64{0, unix.RLIMIT_NOFILE, 0x7ffd0000}, same(allow)},

		// Sockets.
		{"socket unix", "socket", [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM | nonblock}, same(allow)},
		{"socket inet", "socket", [6]uint64{unix.AF_INET, unix.SOCK_STREAM}, want{errno(unix.EAFNOSUPPORT), allow}},
		{"socket inet6 udp", "socket", [6]uint64{unix.AF_INET6, unix.SOCK_DGRAM | nonblock}, want{errno(unix.EAFNOSUPPORT), allow}},
		{"socket inet high garbage", "socket", [6]uint64{hi | unix.AF_INET, unix.SOCK_STREAM}, want{errno(unix.EAFNOSUPPORT), allow}},
		{"socket inet mptcp", "socket", [6]uint64{unix.AF_INET, unix.SOCK_STREAM, 262}, want{errno(unix.EAFNOSUPPORT), errno(unix.EPROTONOSUPPORT)}},
		{"socket inet6 mptcp cloexec", "socket", [6]uint64{unix.AF_INET6, unix.SOCK_STREAM | nonblock, 262}, want{errno(unix.EAFNOSUPPORT), errno(unix.EPROTONOSUPPORT)}},
		{"socket inet raw", "socket", [6]uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, want{errno(unix.EAFNOSUPPORT), errno(unix.EPERM)}},
		{"socket inet6 raw nonblock", "socket", [6]uint64{unix.AF_INET6, unix.SOCK_RAW | nonblock, unix.IPPROTO_ICMPV6}, want{errno(unix.EAFNOSUPPORT), errno(unix.EPERM)}},
		{"socket inet packet", "socket", [6]uint64{unix.AF_INET, unix.SOCK_PACKET}, want{errno(unix.EAFNOSUPPORT), errno(unix.EPERM)}},
		{"socket inet ping", "socket", [6]uint64{unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP}, want{errno(unix.EAFNOSUPPORT), allow}},
		{"socket netlink route", "socket", [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW | unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE}, want{errno(unix.EAFNOSUPPORT), allow}},
		{"socket netlink audit", "socket", [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, same(errno(unix.EAFNOSUPPORT))},
		{"socket netlink uevent", "socket", [6]uint64{unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT}, same(errno(unix.EAFNOSUPPORT))},
		{"socket netlink protocol high garbage", "socket", [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, 1 << 31}, same(errno(unix.EAFNOSUPPORT))},
		{"socket netlink route, protocol high half only", "socket", [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, hi}, want{errno(unix.EAFNOSUPPORT), allow}},
		{"socket packet", "socket", [6]uint64{unix.AF_PACKET, unix.SOCK_RAW}, same(errno(unix.EAFNOSUPPORT))},
		{"socket vsock", "socket", [6]uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, same(errno(unix.EAFNOSUPPORT))},
		{"socket bluetooth", "socket", [6]uint64{unix.AF_BLUETOOTH, unix.SOCK_STREAM}, same(errno(unix.EAFNOSUPPORT))},
		{"socket alg", "socket", [6]uint64{unix.AF_ALG, unix.SOCK_SEQPACKET}, same(errno(unix.EAFNOSUPPORT))},
		{"socket xdp", "socket", [6]uint64{unix.AF_XDP, unix.SOCK_RAW}, same(errno(unix.EAFNOSUPPORT))},
		{"socket can", "socket", [6]uint64{unix.AF_CAN, unix.SOCK_RAW}, same(errno(unix.EAFNOSUPPORT))},
		{"socket mctp (45, last before AF_MAX)", "socket", [6]uint64{45, unix.SOCK_DGRAM}, same(errno(unix.EAFNOSUPPORT))},
		{"socket future family 63", "socket", [6]uint64{63}, same(errno(unix.EAFNOSUPPORT))},
		{"socket future family 64", "socket", [6]uint64{64}, same(errno(unix.EAFNOSUPPORT))},
		{"socket family -1", "socket", [6]uint64{0xffffffff}, same(errno(unix.EAFNOSUPPORT))},
		{"socket unspec", "socket", [6]uint64{unix.AF_UNSPEC}, same(errno(unix.EAFNOSUPPORT))},
		{"socketpair unix", "socketpair", [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM | nonblock}, same(allow)},
		{"socketpair inet", "socketpair", [6]uint64{unix.AF_INET, unix.SOCK_STREAM}, same(errno(unix.EAFNOSUPPORT))},
		{"socketpair netlink", "socketpair", [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW}, same(errno(unix.EAFNOSUPPORT))},
		{"socketpair tipc", "socketpair", [6]uint64{unix.AF_TIPC, unix.SOCK_STREAM}, same(errno(unix.EAFNOSUPPORT))},
	}
	for _, arch := range rules.Arches {
		for _, p := range policies() {
			vm := newVM(t, p, arch)
			for _, tt := range tests {
				nr := sysnum(tt.sys, arch)
				if nr == -2 {
					t.Fatalf("test %q: syscall %q missing from sysnums", tt.name, tt.sys)
				}
				if nr == -1 {
					continue // iopl and friends are x86 only
				}
				want := tt.want.inet
				if p.Net == NetNone {
					want = tt.want.none
				}
				d := seccompData{nr: nr, arch: auditArch[arch], ip: 0x400000, args: tt.args}
				if got := run(t, vm, d); got != want {
					t.Errorf("%s %v: %s(%#x) = %s, want %s", arch, p, tt.name, tt.args, action(got), action(want))
				}
			}
		}
	}
}
