package seccomp

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestLoadInKernel(t *testing.T) {
	// off: the kernel without our filter, so each row shows the filter
	// changed the answer ("" = depends on the host, not checked).
	// none, inet: the answer under NetNone, and NetInet.
	tests := []struct {
		probe           string
		off, none, inet string
	}{
		{"unshare user", "EINVAL", "EPERM", "EPERM"}, // EINVAL: the Go test binary is multithreaded
		{"setns", "EBADF", "EPERM", "EPERM"},
		{"clone NEWUSER", "EINVAL", "EPERM", "EPERM"},
		{"clone3", "EINVAL", "ENOSYS", "ENOSYS"},
		{"mount", "ENOENT", "EPERM", "EPERM"},
		{"ptrace", "ESRCH", "EPERM", "EPERM"},
		{"bpf", "", "EPERM", "EPERM"},
		{"keyctl", "ok", "EPERM", "EPERM"},
		{"perf_event_open", "", "EPERM", "EPERM"},
		{"io_uring_setup", "", "EPERM", "EPERM"},
		{"ioctl TIOCSTI", "EBADF", "EPERM", "EPERM"},
		{"personality ADDR_NO_RANDOMIZE", "ok", "EPERM", "EPERM"},
		{"personality query", "ok", "ok", "ok"},
		{"socket unix", "ok", "ok", "ok"},
		{"socket inet", "ok", "EAFNOSUPPORT", "ok"},
		{"socket inet6", "ok", "EAFNOSUPPORT", "ok"},
		{"socket inet hi", "ok", "EAFNOSUPPORT", "ok"},
		{"socket mptcp", "", "EAFNOSUPPORT", "EPROTONOSUPPORT"},
		{"socket raw", "ok", "EAFNOSUPPORT", "EPERM"}, // the tests run as root
		{"socket packet", "ok", "EAFNOSUPPORT", "EAFNOSUPPORT"},
		{"socket netlink route", "ok", "EAFNOSUPPORT", "ok"},
		{"socket netlink audit", "ok", "EAFNOSUPPORT", "EAFNOSUPPORT"},
		{"socketpair unix", "ok", "ok", "ok"},
		{"socketpair inet", "ENOTSUP", "EAFNOSUPPORT", "EAFNOSUPPORT"},
		{"open_tree_attr", "ok", "EPERM", "EPERM"},
		{"syscall 1000", "ENOSYS", "ENOSYS", "ENOSYS"}, // the kernel's answer too: not a kill, not EPERM
		{"exec /bin/true", "ok", "ok", "ok"},
		{"threads", "ok", "ok", "ok"},
	}
	if runtime.GOARCH == "amd64" {
		tests = append(tests, struct{ probe, off, none, inet string }{
			"x32 getpid", "", "killed by SIGSYS", "killed by SIGSYS"})
	}
	if os.Geteuid() != 0 {
		t.Fatalf("euid %d: these tests expect root (raw and packet sockets succeed without the filter)", os.Geteuid())
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.probe, " ", "_"), func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct{ mode, want string }{
				{"off", tt.off}, {"none", tt.none}, {"inet", tt.inet},
			} {
				if c.want == "" {
					continue
				}
				if got := runChild(t, c.mode, tt.probe); got != c.want {
					t.Errorf("%s under %s = %s, want %s", tt.probe, c.mode, got, c.want)
				}
			}
		})
	}
}

// pythonScript is what an analysis does: a multiprocessing pool (fork,
// semaphores in /dev/shm, pipes), subprocess (vfork/clone3 fallback in
// glibc), a unix socketpair, and an inet socket whose outcome it prints.
const pythonScript = `
import multiprocessing, socket, subprocess

def square(x):
    return x * x

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        assert pool.map(square, range(5)) == [0, 1, 4, 9, 16]
    subprocess.run(["/bin/true"], check=True)
    a, b = socket.socketpair()
    a.sendall(b"x")
    assert b.recv(1) == b"x"
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        print("inet ok")
    except OSError as e:
        print("inet errno", e.errno)
`

func TestPythonUnderFilter(t *testing.T) {
	tests := []struct {
		mode, want string
	}{
		{"none", "inet errno 97\n"}, // EAFNOSUPPORT
		{"inet", "inet ok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			if got := runChild(t, tt.mode, "python"); got != tt.want {
				t.Errorf("python3 under %s printed %q, want %q", tt.mode, got, tt.want)
			}
		})
	}
}

// TestLoadThreadInKernel: LoadThread filters the calling thread (the calls
// it makes are answered by the filter) and what it starts (a child it
// forks and execs runs in seccomp mode 2), without TSYNC.
func TestLoadThreadInKernel(t *testing.T) {
	tests := []struct{ probe, want string }{
		{"mount", "EPERM"},
		{"ptrace", "EPERM"},
		{"socket inet", "EAFNOSUPPORT"},
		{"socket unix", "ok"},
		{"exec child", "ok"},
	}
	for _, tt := range tests {
		if got := runChild(t, "thread-none", tt.probe); got != tt.want {
			t.Errorf("%s on a thread filtered with LoadThread (net none) = %q, want %q", tt.probe, got, tt.want)
		}
	}
	if got := runChild(t, "off", "exec child"); got == "ok" {
		t.Errorf("exec child without a filter = ok, want the probe to see no filter (so it can fail)")
	}
}
