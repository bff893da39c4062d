//go:build linux

package landlock

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// listenAbstract starts a unix stream listener on an abstract address for
// the child to try and returns the name ("@...").
func listenAbstract(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("@scidex-landlock-test-%d", os.Getpid())
	l, err := net.Listen("unix", name)
	if err != nil {
		t.Fatalf("net.Listen(unix, %q) = %v, want nil", name, err)
	}
	t.Cleanup(func() { l.Close() })
	return name
}

func connectUnix(name string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: name})
}

// listenUnix binds and listens on an abstract name inside the sandbox; the
// returned func closes it.
func listenUnix(name string) (func(), error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: name}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Listen(fd, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}

// signalOwnChild starts /bin/sleep inside the sandbox and checks that the
// sandbox may still signal (and so kill) its own processes.
func signalOwnChild() error {
	cmd := exec.Command("/bin/sleep", "600")
	if err := cmd.Start(); err != nil {
		return err
	}
	probeErr := unix.Kill(cmd.Process.Pid, 0)
	killErr := unix.Kill(cmd.Process.Pid, unix.SIGKILL)
	cmd.Wait()
	if probeErr != nil {
		return probeErr
	}
	return killErr
}

func TestRestrictScope(t *testing.T) {
	if !inChild() {
		runInChild(t, 6, "LLT_ABSTRACT="+listenAbstract(t))
		return
	}
	outside := os.Getenv("LLT_ABSTRACT")
	parent := os.Getppid()

	// Before: the parent's socket and the parent are reachable, so a
	// denial below is Landlock's.
	if err := connectUnix(outside); err != nil {
		t.Fatalf("before Restrict: connect(%s) = %v, want nil", outside, err)
	}
	if err := unix.Kill(parent, 0); err != nil {
		t.Fatalf("before Restrict: kill(parent %d, 0) = %v, want nil", parent, err)
	}
	res := mustRestrict(t, Policy{ReadExec: systemReadExec(t), Devices: []string{"/dev/null"}, Scope: true})
	if res.Required != 6 {
		t.Errorf("Restrict().Required = %d, want 6", res.Required)
	}

	inside := fmt.Sprintf("@scidex-landlock-test-inside-%d", os.Getpid())
	runChecks(t, []check{
		{"probe parent", "kill(parent, 0)", func() error { return unix.Kill(parent, 0) }, []error{unix.EPERM}},
		// The parent is a Go program: SIGUSR1 would be caught and
		// ignored if it got through, so this cannot kill the test.
		{"signal parent", "kill(parent, SIGUSR1)", func() error { return unix.Kill(parent, unix.SIGUSR1) }, []error{unix.EPERM}},
		{"signal self", "kill(self, 0)", func() error { return unix.Kill(os.Getpid(), 0) }, nil},
		{"signal own child", "kill(child, 0); kill(child, SIGKILL)", signalOwnChild, nil},
		{"abstract socket outside", "connect(" + outside + ")", func() error { return connectUnix(outside) }, []error{unix.EPERM}},
		{"abstract socket inside", "listen+connect(" + inside + ")", func() error {
			closeFn, err := listenUnix(inside)
			if err != nil {
				return err
			}
			defer closeFn()
			return connectUnix(inside)
		}, nil},
	})
}
