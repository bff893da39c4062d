package landlock

import (
	"strconv"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// applyThread enforces pl on the calling thread with the raw system calls:
// the ruleset, no_new_privs on this thread, then landlock_restrict_self.
func applyThread(pl plan) error {
	fd, err := pl.create()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// Per thread, like landlock_restrict_self itself: a raw prctl, not
	// the Go runtime's all-threads one.
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return wrap.Error("landlock: set no_new_privs on this thread", e)
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return wrap.Error("landlock: restrict this thread with the "+pl.String(), err)
	}
	return nil
}

// applyAll enforces pl on every thread of the process: the ruleset, then
// no_new_privs and landlock_restrict_self on all threads at once.
func applyAll(pl plan) error {
	fd, err := pl.create()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if psxListsTasks && pl.fs&llsys.AccessFSReadDir != 0 {
		// libpsx makes the call on this thread first, then lists
		// /proc/<pid>/task to reach the others, and aborts the process
		// if the new domain denies that (go-landlock issue 39).
		task := "/proc/" + strconv.Itoa(unix.Getpid()) + "/task"
		if err := addPath(fd, pathRule{path: task, rights: llsys.AccessFSReadDir, fd: -1}); err != nil {
			return err
		}
	}
	if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return wrap.Error("landlock: set no_new_privs on every thread", err)
	}
	if err := llsys.AllThreadsLandlockRestrictSelf(fd, 0); err != nil {
		return wrap.Error("landlock: restrict every thread with the "+pl.String(), err)
	}
	return nil
}

// create makes the ruleset of pl: what it handles, one rule per path (on
// the O_PATH descriptor the checks were made on) and per TCP port. The
// caller closes the descriptor.
func (pl plan) create() (int, error) {
	attr := llsys.RulesetAttr{HandledAccessFS: uint64(pl.fs), HandledAccessNet: uint64(pl.net), Scoped: uint64(pl.scoped)}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, wrap.Error("landlock: create the "+pl.String(), err)
	}
	for _, r := range pl.paths {
		if err := addPath(fd, r); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	for _, port := range pl.ports {
		if err := llsys.LandlockAddNetPortRule(fd, &llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			unix.Close(fd)
			return -1, wrap.Error("landlock: add rule tcp-connect "+strconv.Itoa(int(port)), err)
		}
	}
	return fd, nil
}

// addPath adds the rule r to the ruleset fd; r.fd -1 opens r.path for it.
func addPath(fd int, r pathRule) error {
	if r.fd < 0 {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return wrap.Error("landlock: open "+r.path+" for a rule", err)
		}
		defer unix.Close(pfd)
		r.fd = pfd
	}
	if err := llsys.LandlockAddPathBeneathRule(fd, &llsys.PathBeneathAttr{AllowedAccess: uint64(r.rights), ParentFd: r.fd}, 0); err != nil {
		return wrap.Error("landlock: add rule "+r.rights.String()+" on "+r.path, err)
	}
	return nil
}
