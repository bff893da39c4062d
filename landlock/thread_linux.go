package landlock

import (
	"fmt"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// applyThread enforces pl on the calling thread with the raw system calls:
// a ruleset handling what pl's config handles, one rule per path (on the
// O_PATH descriptor the checks were made on) and per TCP port, no_new_privs
// on this thread, then landlock_restrict_self.
func applyThread(pl plan) error {
	cfg := pl.config
	attr := llsys.RulesetAttr{
		HandledAccessFS:  uint64(cfg.HandledAccessFS),
		HandledAccessNet: uint64(cfg.HandledAccessNet),
		Scoped:           uint64(cfg.Scoped),
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock: create ruleset %v: %w", cfg, err)
	}
	defer unix.Close(fd)
	for _, r := range pl.paths {
		if err := llsys.LandlockAddPathBeneathRule(fd, &llsys.PathBeneathAttr{AllowedAccess: uint64(r.rights), ParentFd: r.fd}, 0); err != nil {
			return fmt.Errorf("landlock: add rule %v on %s: %w", r.rights, r.path, err)
		}
	}
	for _, port := range pl.ports {
		if err := llsys.LandlockAddNetPortRule(fd, &llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			return fmt.Errorf("landlock: add rule tcp-connect %d: %w", port, err)
		}
	}
	// Per thread, like landlock_restrict_self itself: a raw prctl, not
	// the Go runtime's all-threads one.
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock: set no_new_privs on this thread: %w", e)
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock: restrict this thread with %v: %w", cfg, err)
	}
	return nil
}
