package seccomp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The tests in this file load the real programs into the kernel. A filter
// cannot be removed, so each check runs in a child: the test binary re-run
// with childEnv set, which TestMain hands to childMain instead of the tests.
//
//	parent (go test)                    child (same binary, childEnv=mode:probe)
//	exec os.Args[0] -test.run=^$  --->  no_new_privs, Lookup, Load (mode "off": none)
//	                                    run probe, print its result ("ok", "EPERM", ...)
//	compare stdout / wait status  <---  exit 0 (3 when setup failed)

const childEnv = "SCIDEX_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	if v, ok := os.LookupEnv(childEnv); ok {
		childMain(v)
		os.Exit(3) // childMain exits; reaching here is a bug
	}
	os.Exit(m.Run())
}

// probes are the calls the children make. Arguments are picked so that the
// unfiltered kernel answers differently from the filter (and harmlessly:
// nothing is mounted or cloned when the filter is missing).
var probes = map[string]func() error{
	// A child forked and exec'd from the probing thread: it must run under
	// the filter (seccomp mode 2 in its own status).
	"exec child": func() error {
		out, err := exec.Command("/bin/grep", "-x", "Seccomp:.2", "/proc/self/status").Output()
		if err != nil {
			return fmt.Errorf("child status has no Seccomp: 2 line (%v): %q", err, out)
		}
		return nil
	},
	"unshare user": func() error { return unix.Unshare(unix.CLONE_NEWUSER) },
	"setns":        func() error { return unix.Setns(-1, 0) },
	"clone NEWUSER": func() error {
		// CLONE_NEWUSER|CLONE_FS is EINVAL to the kernel, so no child is
		// ever created; the filter answers first.
		_, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_FS, 0, 0, 0, 0, 0)
		return errnoErr(e)
	},
	"clone3": func() error {
		_, _, e := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0) // size 0: EINVAL to the kernel
		return errnoErr(e)
	},
	"mount": func() error {
		return unix.Mount("none", "/nonexistent-scidex-seccomp-test", "tmpfs", 0, "")
	},
	"ptrace": func() error {
		_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 0x7ffffff0, 0, 0, 0, 0)
		return errnoErr(e)
	},
	"bpf": func() error {
		_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0) // BPF_MAP_CREATE, no attr
		return errnoErr(e)
	},
	"keyctl": func() error {
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
		return err
	},
	"perf_event_open": func() error {
		_, _, e := unix.Syscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)
		return errnoErr(e)
	},
	"io_uring_setup": func() error {
		var params [120]byte // struct io_uring_params
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		return errnoErr(e)
	},
	"ioctl TIOCSTI": func() error {
		c := byte('x')
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 0x7fff, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		return errnoErr(e)
	},
	"personality ADDR_NO_RANDOMIZE": func() error {
		_, _, e := unix.Syscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0)
		return errnoErr(e)
	},
	"personality query": func() error {
		_, _, e := unix.Syscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
		return errnoErr(e)
	},
	"socket unix":          socketProbe(unix.AF_UNIX, unix.SOCK_STREAM, 0),
	"socket inet":          socketProbe(unix.AF_INET, unix.SOCK_STREAM, 0),
	"socket inet6":         socketProbe(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, 0),
	"socket inet hi":       socketProbe(1<<32|unix.AF_INET, unix.SOCK_STREAM, 0),
	"socket mptcp":         socketProbe(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 262),
	"socket raw":           socketProbe(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_NONBLOCK, unix.IPPROTO_ICMP),
	"socket packet":        socketProbe(unix.AF_PACKET, unix.SOCK_RAW, 0x0300), // htons(ETH_P_ALL)
	"socket netlink route": socketProbe(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE),
	"socket netlink audit": socketProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT),
	"socketpair unix": func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	},
	"socketpair inet": func() error {
		_, err := unix.Socketpair(unix.AF_INET, unix.SOCK_STREAM, 0)
		return err
	},
	// open_tree_attr (Linux 6.15) without OPEN_TREE_CLONE: a descriptor
	// of the mount, no capability needed.
	"open_tree_attr": func() error {
		atFDCWD := unix.AT_FDCWD
		root := []byte("/\x00")
		fd, _, e := unix.Syscall6(unix.SYS_OPEN_TREE_ATTR, uintptr(atFDCWD), uintptr(unsafe.Pointer(&root[0])), unix.O_CLOEXEC, 0, 0, 0)
		runtime.KeepAlive(root)
		if e == 0 {
			unix.Close(int(fd))
		}
		return errnoErr(e)
	},
	"syscall 1000": func() error {
		_, _, e := unix.Syscall(1000, 0, 0, 0)
		return errnoErr(e)
	},
	"exec /bin/true": func() error { return exec.Command("/bin/true").Run() },
	"threads":        startThreads,
	"x32 getpid": func() error {
		if runtime.GOARCH != "amd64" {
			return errors.New("x32 exists on amd64 only")
		}
		_, _, e := unix.RawSyscall(0x40000000|unix.SYS_GETPID, 0, 0, 0)
		return errnoErr(e)
	},
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func socketProbe(family, typ, proto uint64) func() error {
	return func() error {
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ), uintptr(proto))
		if e == 0 {
			unix.Close(int(fd))
		}
		return errnoErr(e)
	}
}

// startThreads makes the runtime create OS threads under the filter: each
// goroutine holds its own thread until all have started.
func startThreads() error {
	const n = 8
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	tids := make(chan int, n)
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread()
			tids <- unix.Gettid()
			started.Done()
			release.Wait()
		}()
	}
	started.Wait()
	release.Done()
	seen := map[int]bool{}
	for i := 0; i < n; i++ {
		seen[<-tids] = true
	}
	if len(seen) != n {
		return fmt.Errorf("%d goroutines locked to %d threads, want %d", n, len(seen), n)
	}
	return nil
}

// childMain runs in the child: v is "mode:probe"; mode "off" loads nothing.
func childMain(v string) {
	mode, probe, _ := strings.Cut(v, ":")
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "seccomp test child: "+format+"\n", args...)
		os.Exit(3)
	}
	if net, ok := strings.CutPrefix(mode, "thread-"); ok {
		// LoadThread: this thread only, as the jail's init does; the
		// probes run on this same thread (the main goroutine, locked).
		runtime.LockOSThread()
		if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			fail("set no_new_privs on this thread: %v", e)
		}
		prog, err := Lookup(Policy{Name: "default", Net: Net(net)})
		if err != nil {
			fail("%v", err)
		}
		if err := prog.LoadThread(); err != nil {
			fail("%v", err)
		}
		mode = "off" // loaded
	}
	if mode != "off" {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fail("set no_new_privs: %v", err)
		}
		prog, err := Lookup(Policy{Name: "default", Net: Net(mode)})
		if err != nil {
			fail("%v", err)
		}
		if err := prog.Load(); err != nil {
			fail("%v", err)
		}
	}
	if probe == "python" {
		// Exec python3 under the filter; argv carries the script.
		err := syscall.Exec("/usr/bin/python3", []string{"python3", "-c", pythonScript}, os.Environ())
		fail("exec python3: %v", err)
	}
	f, ok := probes[probe]
	if !ok {
		fail("unknown probe %q", probe)
	}
	fmt.Print(result(f()))
	os.Exit(0)
}

// result names a probe's outcome: "ok", an errno name, or the error text.
func result(err error) string {
	var e unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// runChild runs probe in a child under mode and returns what it printed, or
// "killed by <signal>".
func runChild(t *testing.T, mode, probe string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode+":"+probe)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + unix.SignalName(ws.Signal())
		}
	}
	if err != nil {
		t.Fatalf("child %s:%s: %v, stderr: %s", mode, probe, err, stderr.String())
	}
	return string(out)
}
