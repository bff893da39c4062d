package initproc

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// dropIdentity turns the init's locked thread, the one that forks the
// target, into the unprivileged user the target runs as: bounding set
// emptied, groups cleared (where the namespace allows it: a rootless
// init keeps the caller's, see protocol.Config.Groups), uid/gid set
// (which clears the permitted, effective and ambient sets), the
// inheritable set cleared, no_new_privs set. After this nothing it execs
// can gain a privilege: not from setuid bits, not from file capabilities.
//
// Every call is the raw system call, for this thread only: credentials,
// capabilities and no_new_privs are per thread in the kernel, and the
// target inherits the forking thread's. The Go runtime's own wrappers
// (syscall.Setresuid, AllThreadsSyscall) would stop and signal every other
// thread of the init for each call, which none of them needs: they only
// ever run the Go runtime and the init's own goroutines, never anything
// of the analysis (confined() checks the forking thread before the fork).
func dropIdentity(uid, gid int, setgroups bool) error {
	// The bounding set needs CAP_SETPCAP, so it goes first: every
	// capability up to the first number the kernel calls invalid (EINVAL
	// means exactly that: past CAP_LAST_CAP), which spares reading
	// /proc/sys/kernel/cap_last_cap. confined() checks the set is empty.
	for c := 0; c <= maxCap; c++ {
		_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0)
		if e == unix.EINVAL && c > 0 {
			break
		}
		if e != 0 {
			return wrap.Error("drop capability "+strconv.Itoa(c)+" from the bounding set", e)
		}
	}
	if setgroups {
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return wrap.Error("clear supplementary groups", e)
		}
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return wrap.Error("setresgid "+strconv.Itoa(gid), e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return wrap.Error("setresuid "+strconv.Itoa(uid), e)
	}
	// setresuid has emptied permitted and effective; capset also clears
	// inheritable (and with it ambient).
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return wrap.Error("clear capability sets", e)
	}
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return wrap.Error("set no_new_privs", e)
	}
	return nil
}

// maxCap is the highest capability the kernel's 64-bit capability sets
// can hold.
const maxCap = 63
