package jail

import (
	"errors"
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// A run of a jail started as root gets a host uid and gid of its own,
// leased from a range no account uses (jail/uidlease), unless the caller
// fixed them (HostUID, HostGID): a shared id, such as nobody's, would let any
// process of that id signal, stop or re-weight the analysis, and make two
// concurrent runs one principal to the kernel. A rootless run is the
// caller's uid: the only one it may map.

// leased says whether the run's ids are to be leased: the caller fixed
// neither.
func (s *Spec) leased() bool { return s.HostUID == 0 && s.HostGID == 0 }

// uidRange is the range leases come from.
func (s *Spec) uidRange() uidlease.Range {
	if s.UIDRange == (uidlease.Range{}) {
		return uidlease.Default
	}
	return s.UIDRange
}

// validateIDs is part of Validate: fixed ids are both given and never
// root's; a range to lease from, when the jail runs as root, is one no
// account, subordinate range or reserved id overlaps.
func (s *Spec) validateIDs() error {
	if s.leased() {
		if os.Geteuid() != 0 {
			return nil
		}
		if err := uidlease.Check(s.uidRange()); err != nil {
			return s.uidRangeError(err)
		}
		return nil
	}
	if s.HostUID <= 0 || s.HostGID <= 0 {
		return fmt.Errorf("%w: the analysis' host uid/gid %d:%d: give both %s, each non-zero, so it never runs as host root (or neither: each run then gets ids of its own from %s)",
			ErrBadSpec, s.HostUID, s.HostGID, s.From.Join(option.UID, option.GID), s.From.Name(option.UIDRange))
	}
	return nil
}

// uidRangeError makes a range's refusal bad input, with how to fix it.
func (s *Spec) uidRangeError(err error) error {
	switch {
	case errors.Is(err, uidlease.ErrFull):
		return fmt.Errorf("%w: %s: %w: wait for runs to end, or give a wider range", ErrBadSpec, s.From.Name(option.UIDRange), err)
	case errors.Is(err, uidlease.ErrRange):
		return fmt.Errorf("%w: %s: %w; give a range of host ids no account uses (the default is %s), or fixed ids with %s", ErrBadSpec, s.From.Name(option.UIDRange), err, uidlease.Default, s.From.Join(option.UID, option.GID))
	}
	return err
}

// RebindIDs makes the plan's host ids id's: a run that takes a slot
// takes the slot's leased ids, planned with its own. Both are ids of the
// range, owning nothing and in no group, so that nothing else planned
// (the exposure check) differs.
func (p *Plan) RebindIDs(id int) {
	p.IDs.HostUID, p.IDs.HostGID = id, id
	p.Run.Owner = [2]int{id, id}
	p.Enforced.HostUID, p.Enforced.HostGID = id, id
}

// hostIDsFrom is the report's identity.host_ids.
func hostIDsFrom(ids IDMap) string {
	switch {
	case ids.LeasedFrom != "":
		return "leased from " + ids.LeasedFrom
	case !ids.Setgroups:
		return "the caller's (rootless)"
	}
	return "fixed by " + option.Origin{}.Join(option.UID, option.GID)
}
