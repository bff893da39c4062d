// Package netif brings network interfaces up, as `ip link set lo up` does:
// two SIOCGIFFLAGS/SIOCSIFFLAGS ioctls on a datagram socket, no netlink.
// The jail's init brings up lo in a run's new network namespace (network
// mode loopback); the test VM's init (cmd/vmtest-init) brings up the VM's.
//
// It imports no package of this module, so that both may use it: the init
// program links only the init's side (.ci/layering, rule 6).
//
// Kernel: any Linux; the caller needs CAP_NET_ADMIN over the interface's
// network namespace. ExampleLoopbackUp (compiled with the tests):
//
//	if err := netif.LoopbackUp(); err != nil {
//		return err // "bring lo up: operation not permitted"
//	}
package netif

import (
	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// LoopbackUp sets IFF_UP on lo in the calling thread's network namespace.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return wrap.Error("socket for lo", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return wrap.Error("ifreq lo", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return wrap.Error("get flags of lo", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return wrap.Error("bring lo up", err)
	}
	return nil
}
