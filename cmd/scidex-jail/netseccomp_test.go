package main

import (
	"fmt"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// netSeccompCase is one refused call: the Python expression that makes it
// and the errno the filter answers with. withoutFilter is what the same
// call gives in the same jail with the filter off (--unsafe-disable
// seccomp), or -1 when that is not checked (the call would fail for lack of
// capabilities anyway): it proves the errno comes from the filter.
type netSeccompCase struct {
	name          string
	expr          string
	want          syscall.Errno
	withoutFilter int
}

// netSeccompCases are the attack surface calls of DESIGN.md's seccomp list,
// with numbers for the architecture the test runs on. Arguments are chosen
// so that the kernel, without the filter, would answer differently where it
// can (EFAULT, EINVAL, ENOTTY) or succeed.
func netSeccompCases(mode string) []netSeccompCase {
	nr := func(n uintptr, args string) string { return fmt.Sprintf("sys_(%d, %s)", n, args) }
	rawInet := syscall.EPERM
	if mode == "none" {
		rawInet = syscall.EAFNOSUPPORT
	}
	return []netSeccompCase{
		{"unshare user namespace", fmt.Sprintf("call(libc.unshare, %#x)", unix.CLONE_NEWUSER), syscall.EPERM, 0},
		{"unshare mount namespace", fmt.Sprintf("call(libc.unshare, %#x)", unix.CLONE_NEWNS), syscall.EPERM, -1},
		{"mount tmpfs", `call(libc.mount, b"none", b"/tmp", b"tmpfs", 0, 0)`, syscall.EPERM, -1},
		{"ptrace traceme", "call(libc.ptrace, 0, 0, 0, 0)", syscall.EPERM, 0},
		{"bpf prog load", nr(unix.SYS_BPF, "5, 0, 0"), syscall.EPERM, -1},
		{"keyctl session keyring", nr(unix.SYS_KEYCTL, "0, -3, 0"), syscall.EPERM, -1},
		{"io_uring_setup", nr(unix.SYS_IO_URING_SETUP, "1, 0"), syscall.EPERM, int(syscall.EFAULT)},
		{"perf_event_open", nr(unix.SYS_PERF_EVENT_OPEN, "0, 0, -1, -1, 0"), syscall.EPERM, int(syscall.EFAULT)},
		{"clone3", nr(unix.SYS_CLONE3, "0, 0"), syscall.ENOSYS, int(syscall.EINVAL)},
		{"userfaultfd", nr(unix.SYS_USERFAULTFD, "0"), syscall.EPERM, -1},
		{"open_by_handle_at", nr(unix.SYS_OPEN_BY_HANDLE_AT, "-100, 0, 0"), syscall.EPERM, -1},
		{"ioctl TIOCSTI", fmt.Sprintf(`call(libc.ioctl, 0, %#x, b"x")`, unix.TIOCSTI), syscall.EPERM, int(syscall.ENOTTY)},
		{"packet socket", "sock(socket.AF_PACKET, socket.SOCK_RAW, 0)", syscall.EAFNOSUPPORT, -1},
		{"netlink audit socket", "sock(socket.AF_NETLINK, socket.SOCK_RAW, 9)", syscall.EAFNOSUPPORT, -1},
		{"raw inet socket", "sock(socket.AF_INET, socket.SOCK_RAW, 1)", rawInet, -1},
		{"vsock socket", "sock(40, socket.SOCK_STREAM, 0)", syscall.EAFNOSUPPORT, -1},
		{"unix socketpair", "pair()", 0, 0},
		{"multiprocessing pool of 2", "pool()", 0, 0},
	}
}

// TestNetSeccompDenied runs the refused calls inside the jail in every
// network mode (each has its own filter) and checks each errno; then, in
// one mode, the same calls with the filter off, so that the test shows the
// filter is what answers.
func TestNetSeccompDenied(t *testing.T) {
	requireRoot(t)
	for _, m := range netModes {
		t.Run(m.name, func(t *testing.T) {
			if netModeRefusedHere(t, m) {
				return
			}
			cs := netSeccompCases(m.name)
			probes := make([]netProbe, len(cs))
			for i, c := range cs {
				probes[i] = netProbe{c.name, c.expr, int(c.want)}
			}
			got, r := netRunProbes(t, m.args, probes)
			netCheckProbes(t, "inside --net "+m.name, probes, got, r)
			netCheckReport(t, r, m.name, m.allow)
		})
	}
	t.Run("filter off", func(t *testing.T) {
		var probes []netProbe
		for _, c := range netSeccompCases("loopback") {
			if c.withoutFilter >= 0 {
				probes = append(probes, netProbe{c.name, c.expr, c.withoutFilter})
			}
		}
		got, r := netRunProbes(t, []string{"--net", "loopback", "--unsafe-disable", "seccomp"}, probes)
		netCheckProbes(t, "inside --net loopback --unsafe-disable seccomp", probes, got, r)
		if r.report.Enforced.Seccomp != nil {
			t.Errorf("report seccomp = %+v with --unsafe-disable seccomp, want null", r.report.Enforced.Seccomp)
		}
	})
}
