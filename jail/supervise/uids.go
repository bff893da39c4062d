package supervise

import (
	"errors"
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// leaseIDs leases the run's ids when they are to be leased and the jail
// runs as root, and writes them into s; nil otherwise. The lease is
// released after the run's processes are dead and its files removed.
func leaseIDs(s *jail.Resolved) (*uidlease.Lease, error) {
	if !s.Leased() || os.Geteuid() != 0 {
		return nil, nil
	}
	return leaseFor(s)
}

// leaseFor leases ids from s's range and writes them into s, whatever ids
// s has: planIDs' placeholder, which s.Leased takes for fixed ids.
func leaseFor(s *jail.Resolved) (*uidlease.Lease, error) {
	l, err := uidlease.Acquire(s.LeaseRange())
	if errors.Is(err, uidlease.ErrRange) || errors.Is(err, uidlease.ErrFull) {
		return nil, s.LeaseRangeError(err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: lease a host uid for the run: %w; %s with %s", jail.ErrBadSpec, err, uidlease.FixDir, s.From.Join(option.UID, option.GID))
	}
	s.HostUID, s.HostGID, s.LeasedFrom = l.ID(), l.ID(), s.LeaseRange().String()
	return l, nil
}

// leasesAtStart says whether the run's ids are leased at its start, once
// it is known that no slot is taken (a served run: Options.Slots), not
// before its plan: a run that takes a slot holds the slot's ids, leased
// when the slot was made, and a lease of its own would only be made and
// given back (a lock file created and removed, about 0.1 ms of its
// request's path).
func leasesAtStart(opts Options) bool { return opts.Slots != nil }

// planIDs gives a run whose ids are leased at its start (leasesAtStart)
// ids to plan with: the range's first, as Slot.Current plans a slot's
// view, and says whether it did (Options.leaseAtStart). Nothing is made
// with them: start rebinds the plan to the ids the run then holds (its
// slot's, or its own lease's: Plan.RebindIDs) before its first process,
// and a run that ends before it (a cancel, a plan the host cannot hold)
// made nothing. The placeholder makes s.Leased false: start leases by
// what planIDs said (leaseFor), never by s.Leased, or every run that
// started cold would be the placeholder's uid, the same for all.
func planIDs(s *jail.Resolved) bool {
	if !s.Leased() || os.Geteuid() != 0 {
		return false
	}
	first := int(s.LeaseRange().First)
	s.HostUID, s.HostGID, s.LeasedFrom = first, first, s.LeaseRange().String()
	return true
}
