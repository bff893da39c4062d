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
