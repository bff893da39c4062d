package testutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Netns is a network namespace a test made: lo up, nothing else, no way
// out. Sockets made in it stay in it whichever thread uses them later, so
// a test makes its sockets through Do, Listen, ListenPacket and
// DialContext, which run on the one thread that lives in the namespace
// (the one that made it, locked to a goroutine of its own and ended at
// Close): the Go runtime's other threads never enter it. Making one needs
// CAP_SYS_ADMIN (root); nothing of the host's network is touched.
type Netns struct {
	jobs chan func()
	done chan struct{}
	mu   sync.Mutex // held while a job is handed over, so that Close cannot race it
	shut bool
}

// NewNetns makes a network namespace with lo up.
func NewNetns() (*Netns, error) {
	n := &Netns{jobs: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		defer close(n.done)
		err := onThread(func() error {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				ready <- fmt.Errorf("unshare a network namespace (needs root): %w", err)
				return nil
			}
			if err := ifaceUp("lo"); err != nil {
				ready <- err
				return nil
			}
			ready <- nil
			for job := range n.jobs {
				job()
			}
			return nil
		})
		_ = err
	}()
	if err := <-ready; err != nil {
		<-n.done
		return nil, err
	}
	return n, nil
}

// Close ends the namespace's thread; the namespace goes once no socket
// in it is left open.
func (n *Netns) Close() error {
	n.mu.Lock()
	if !n.shut {
		n.shut = true
		close(n.jobs)
	}
	n.mu.Unlock()
	<-n.done
	return nil
}

// errClosed is Do's error after Close.
var errClosed = errors.New("the test's network namespace is closed")

// Do runs f on the namespace's thread. Calls are served one at a time; f
// must not call Do.
func (n *Netns) Do(f func() error) error {
	errc := make(chan error, 1)
	n.mu.Lock()
	if n.shut {
		n.mu.Unlock()
		return errClosed
	}
	n.jobs <- func() { errc <- f() }
	n.mu.Unlock()
	return <-errc
}

// Start starts cmd in the namespace: the process is forked from the
// namespace's thread, so it and its children live there (with the
// host's files: its /etc/resolv.conf, which the lab answers).
func (n *Netns) Start(cmd *exec.Cmd) error {
	return n.Do(cmd.Start)
}

// Listen is net.Listen in the namespace.
func (n *Netns) Listen(network, address string) (net.Listener, error) {
	var l net.Listener
	err := n.Do(func() (err error) {
		l, err = net.Listen(network, address)
		return err
	})
	return l, err
}

// ListenPacket is net.ListenPacket in the namespace.
func (n *Netns) ListenPacket(network, address string) (net.PacketConn, error) {
	var c net.PacketConn
	err := n.Do(func() (err error) {
		c, err = net.ListenPacket(network, address)
		return err
	})
	return c, err
}

// DialContext dials from the namespace. The address should be an IP
// address: a name would be looked up with the process's resolver from
// inside the namespace.
func (n *Netns) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Resolver is a resolver that asks the DNS server at server from inside
// the namespace, whatever the host's resolv.conf says.
func (n *Netns) Resolver(server netip.AddrPort) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return n.DialContext(ctx, network, server.String())
		},
	}
}

// AddAddr puts an address on lo (as `ip addr add A/32 dev lo`: for IPv4
// by the alias ioctls ifconfig uses, lo:1, lo:2, ...; for IPv6, /128, by
// the in6_ifreq one), so that servers can listen on it and clients reach
// it, in the namespace only.
func (n *Netns) AddAddr(a netip.Addr) error {
	if a.Is6() && !a.Is4In6() {
		return n.Do(func() error { return addAddr6(a) })
	}
	a = a.Unmap()
	return n.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket for lo: %w", err)
		}
		defer unix.Close(fd)
		for i := 1; ; i++ {
			label := fmt.Sprintf("lo:%d", i)
			ifr, err := unix.NewIfreq(label)
			if err != nil {
				return fmt.Errorf("ifreq %s: %w", label, err)
			}
			if err := unix.IoctlIfreq(fd, unix.SIOCGIFADDR, ifr); err == nil {
				continue // label taken
			}
			b := a.As4()
			if err := ifr.SetInet4Addr(b[:]); err != nil {
				return fmt.Errorf("ifreq %s %s: %w", label, a, err)
			}
			if err := unix.IoctlIfreq(fd, unix.SIOCSIFADDR, ifr); err != nil {
				return fmt.Errorf("add %s as %s: %w", a, label, err)
			}
			if err := ifr.SetInet4Addr([]byte{255, 255, 255, 255}); err != nil {
				return fmt.Errorf("ifreq %s netmask: %w", label, err)
			}
			if err := unix.IoctlIfreq(fd, unix.SIOCSIFNETMASK, ifr); err != nil {
				return fmt.Errorf("set %s's netmask to /32: %w", label, err)
			}
			return nil
		}
	})
}

// addAddr6 puts an IPv6 address on lo, /128, by SIOCSIFADDR on an IPv6
// socket with a struct in6_ifreq (the kernel's ipv6 ioctl), and waits
// until it can be bound. lo does no duplicate address detection, but the
// kernel ends the address' tentative state from a work queue, after the
// ioctl returns: under load a bind at once failed with EADDRNOTAVAIL.
func addAddr6(a netip.Addr) error {
	if err := ioctlAddr6(a); err != nil {
		return err
	}
	sa := &unix.SockaddrInet6{Addr: a.As16()}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("IPv6 socket for lo: %w", err)
		}
		err = unix.Bind(fd, sa)
		unix.Close(fd)
		if err == nil {
			return nil
		}
		if err != unix.EADDRNOTAVAIL || time.Now().After(deadline) {
			return fmt.Errorf("bind %s after adding it to lo: %w", a, err)
		}
	}
}

// ioctlAddr6 adds a to lo by the in6_ifreq ioctl.
func ioctlAddr6(a netip.Addr) error {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("IPv6 socket for lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("ifreq lo: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return fmt.Errorf("index of lo: %w", err)
	}
	req := struct {
		addr      [16]byte
		prefixlen uint32
		ifindex   int32
	}{addr: a.As16(), prefixlen: 128, ifindex: int32(ifr.Uint32())}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCSIFADDR, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return fmt.Errorf("add %s to lo: %w", a, errno)
	}
	return nil
}

// ifaceUp sets IFF_UP on an interface of the calling thread's network
// namespace (as internal/netif, which this package may not import).
func ifaceUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for %s: %w", name, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return fmt.Errorf("ifreq %s: %w", name, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get flags of %s: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring %s up: %w", name, err)
	}
	return nil
}

// onThread runs f in a goroutine locked to its OS thread, which the Go
// runtime ends when the goroutine returns still locked: a thread that
// joined a namespace never runs other goroutines. The main thread cannot
// end (the runtime parks it), so a goroutine that finds itself there
// hands f to another thread, started while it holds the main one (as
// internal/osthread, which this package may not import).
func onThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			errc <- f()
			return
		}
		held := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(held)
			errc <- f()
		}()
		<-held
		runtime.UnlockOSThread()
	}()
	return <-errc
}
