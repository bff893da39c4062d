//go:build linux

package landlock

import (
	"net"
	"os"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// listenLoopback starts a TCP listener on 127.0.0.1 for the child to
// connect to and returns its port. connect(2) completes against the
// listen backlog, so nothing needs to accept.
func listenLoopback(t *testing.T) uint16 {
	t.Helper()
	// A plain TCP listener: net.Listen may pick MPTCP, which the child's
	// plain TCP connects still reach, but be explicit.
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(t.Context(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen(tcp4, 127.0.0.1:0) = %v, want nil", err)
	}
	t.Cleanup(func() { l.Close() })
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// connectTCP connects a plain TCP socket (not MPTCP) to 127.0.0.1:port and
// returns the errno.
func connectTCP(port uint16) error {
	return connectTCPProto(port, 0)
}

func connectTCPProto(port uint16, proto int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}})
}

// bindTCP binds a plain TCP socket to 127.0.0.1:port (0: any free port).
func bindTCP(port uint16) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}})
}

func envPort(t *testing.T, key string) uint16 {
	t.Helper()
	n, err := strconv.ParseUint(os.Getenv(key), 10, 16)
	if err != nil {
		t.Fatalf("strconv.ParseUint(%s=%q) = %v, want a port", key, os.Getenv(key), err)
	}
	return uint16(n)
}

func TestRestrictTCP(t *testing.T) {
	if !inChild() {
		a, b := listenLoopback(t), listenLoopback(t)
		runInChild(t, 5, "LLT_PORT_A="+strconv.Itoa(int(a)), "LLT_PORT_B="+strconv.Itoa(int(b)), "LLT_DIR="+t.TempDir())
		return
	}
	a, b := envPort(t, "LLT_PORT_A"), envPort(t, "LLT_PORT_B")

	// Before: both ports reachable, so a denial below is Landlock's.
	for _, port := range []uint16{a, b} {
		if err := connectTCP(port); err != nil {
			t.Fatalf("before Restrict: connect(127.0.0.1:%d) = %v, want nil", port, err)
		}
	}
	res := mustRestrict(t, Policy{
		ReadOnly:   []string{os.Getenv("LLT_DIR")},
		HandleTCP:  true,
		ConnectTCP: []uint16{a},
	})
	if want := "tcp-connect " + strconv.Itoa(int(a)); !slices.Contains(res.Rules, want) {
		t.Errorf("Restrict().Rules = %q, want it to contain %q", res.Rules, want)
	}
	runChecks(t, []check{
		{"allowed port", "connect(127.0.0.1:A)", func() error { return connectTCP(a) }, nil},
		{"other port", "connect(127.0.0.1:B)", func() error { return connectTCP(b) }, []error{unix.EACCES}},
		{"bind", "bind(127.0.0.1:0)", func() error { return bindTCP(0) }, []error{unix.EACCES}},
	})
}
