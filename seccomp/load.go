package seccomp

import (
	"errors"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// ErrUnsupported is matched (errors.Is) by every error that means the kernel
// or the build lacks what a filter needs.
var ErrUnsupported = errors.New("seccomp filtering unsupported")

// UnsupportedError says which feature is missing, what was found instead and
// how to get it. It matches ErrUnsupported.
type UnsupportedError struct {
	Feature string // e.g. "seccomp filter mode"
	Found   string // what the probe saw
	Fix     string // how to get the feature
}

func (e *UnsupportedError) Error() string {
	return e.Feature + " unavailable: " + e.Found + "; " + e.Fix
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Load installs the program on every thread of the calling process
// (SECCOMP_FILTER_FLAG_TSYNC, so the Go runtime's other threads are filtered
// too) and on everything it executes afterwards. The caller must have set
// no_new_privs (PR_SET_NO_NEW_PRIVS) unless it holds CAP_SYS_ADMIN. Filters
// cannot be removed: call it last, just before starting the target.
func (p Program) Load() error { return p.load(unix.SECCOMP_FILTER_FLAG_TSYNC) }

// LoadThread installs the program on the calling OS thread only, and on
// everything it starts afterwards: the threads and children it creates
// inherit the filter, the process's other threads do not get it. For a
// caller that locked its goroutine to the thread (runtime.LockOSThread)
// and starts the filtered program from that thread, after making sure no
// other thread of it runs code that needs the filter. Without TSYNC there
// is no all-threads synchronisation to pay for.
func (p Program) LoadThread() error { return p.load(0) }

func (p Program) load(flags uintptr) error {
	if len(p.Filter) == 0 || len(p.Filter) > bpfMaxInsns {
		return errors.New("load seccomp program " + p.Policy.String() + ": " + strconv.Itoa(len(p.Filter)) + " instructions (bug: not from Lookup)")
	}
	prog := unix.SockFprog{Len: uint16(len(p.Filter)), Filter: &p.Filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(p.Filter)
	switch {
	case errno == 0 && r == 0:
		return nil
	case errno == 0:
		// TSYNC returns the id of a thread that could not be synchronised
		// (it already runs a filter this one does not descend from).
		return errors.New("load seccomp program " + p.Policy.String() + ": thread " + strconv.FormatUint(uint64(r), 10) + " has a diverging filter")
	case errno == unix.ENOSYS:
		return &UnsupportedError{
			Feature: "seccomp(2)",
			Found:   "the seccomp system call returns ENOSYS",
			Fix:     "use Linux >= 3.17 built with CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER",
		}
	case errno == unix.EACCES:
		return wrap.Error("load seccomp program "+p.Policy.String()+": no_new_privs is not set and the caller lacks CAP_SYS_ADMIN", errno)
	case errno == unix.EINVAL && !filterModeAvailable():
		return &UnsupportedError{
			Feature: "seccomp filter mode",
			Found:   "seccomp(SECCOMP_SET_MODE_FILTER) and SECCOMP_GET_ACTION_AVAIL return EINVAL",
			Fix:     "use a kernel built with CONFIG_SECCOMP_FILTER (Linux >= 4.14 for SECCOMP_RET_KILL_PROCESS)",
		}
	default:
		return wrap.Error("load seccomp program "+p.Policy.String()+" ("+strconv.Itoa(len(p.Filter))+" instructions, sha256 "+p.SHA256+")", errno)
	}
}

// filterModeAvailable tells a kernel without filter support from a program
// the kernel rejected: it asks whether the actions the programs use exist.
func filterModeAvailable() bool {
	for _, action := range []uint32{unix.SECCOMP_RET_ERRNO, unix.SECCOMP_RET_KILL_PROCESS} {
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		if errno != 0 {
			return false
		}
	}
	return true
}
