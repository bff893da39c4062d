package initproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dropIdentity turns the init, on every thread, into the unprivileged user
// the target runs as: bounding set emptied, groups cleared, uid/gid set
// (which clears the permitted, effective and ambient sets), the inheritable
// set cleared, no_new_privs set. After this nothing it execs can gain a
// privilege: not from setuid bits, not from file capabilities.
func dropIdentity(uid, gid int, setgroups bool) error {
	last, err := capLastCap()
	if err != nil {
		return err
	}
	// The bounding set needs CAP_SETPCAP, so it goes first. It is per
	// thread; the target inherits it from the thread that forks it, and the
	// init forks from this locked thread.
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if setgroups {
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("clear supplementary groups: %w", err)
		}
	}
	// syscall.Setres[ug]id apply to every thread of the Go runtime.
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fmt.Errorf("setresgid %d: %w", gid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("setresuid %d: %w", uid, err)
	}
	if err := clearAllCaps(); err != nil {
		return err
	}
	if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return fmt.Errorf("set no_new_privs: %w", e)
	}
	return nil
}

// clearAllCaps empties every capability set on every thread. setresuid has
// already emptied permitted and effective; capset also clears inheritable.
func clearAllCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		if e == syscall.ENOTSUP {
			// Go refuses AllThreadsSyscall in a cgo binary: it cannot
			// reach the threads C created.
			return fmt.Errorf("clear capability sets: %w: this scidex-jail was built with cgo; build it with CGO_ENABLED=0 (make build)", e)
		}
		return fmt.Errorf("clear capability sets: %w", e)
	}
	return nil
}

func capLastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("read cap_last_cap: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("parse cap_last_cap %q: %w", b, err)
	}
	return n, nil
}

// loopbackUp sets IFF_UP on lo in the init's own network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("ifreq lo: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get flags of lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}
