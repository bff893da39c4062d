package initproc

import (
	"errors"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

// applyLandlock runs after the identity drop (Landlock needs no_new_privs).
// A nil policy is the layer disabled by name. Like the identity drop, it
// restricts the locked thread that forks the target, not the init's others.
func applyLandlock(pol *landlock.Policy, found *protocol.Started) error {
	if pol == nil {
		return nil
	}
	res, err := pol.RestrictThread()
	if err != nil {
		if errors.Is(err, landlock.ErrUnsupported) {
			return wrap.Around("", err, " (the supervisor found more: the promises were decided on it, so the run does not start)")
		}
		return err
	}
	found.Landlock = &protocol.LandlockFound{ABI: res.ABI, Degraded: res.Degraded}
	return nil
}

// applySeccomp runs as the init's last step before the target, on the
// locked thread that forks it (LoadThread: no TSYNC). The supervisor
// knows the program from the policy: nothing of it is reported.
func applySeccomp(pol *seccomp.Policy) error {
	if pol == nil {
		return nil
	}
	prog, err := seccomp.Lookup(*pol)
	if err != nil {
		return err
	}
	return prog.LoadThread()
}
