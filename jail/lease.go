package jail

import "github.com/scidex/scidex-jail/jail/uidlease"

// What the run (jail/supervise) asks of a spec to lease its ids: the
// lease itself is the run's (it creates state), the rules are the spec's
// (uids.go).

// Leased says whether the run's ids are to be leased: the caller fixed
// neither.
func (s *Spec) Leased() bool { return s.leased() }

// LeaseRange is the range leases come from.
func (s *Spec) LeaseRange() uidlease.Range { return s.uidRange() }

// LeaseRangeError makes a range's refusal bad input, with how to fix it,
// as Validate does, naming the options as the caller gave them.
func (s *Spec) LeaseRangeError(err error) error { return s.uidRangeError(err) }
