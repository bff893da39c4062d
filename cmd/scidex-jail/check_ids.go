package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/uidlease"
)

// probeID is the id the other checks' probes run as when no lease can be
// had: never one of a refused range, which may hold 0.
const probeID = 65534

// checkIDs is the line on the analysis' host ids: fixed (--uid), the
// caller's (rootless), or leased from --uid-range, which must be free of
// accounts (uidlease.Check). With a usable range it leases one id for the
// check's probes, as a run would, and sets c.uid and c.gid to it; release
// gives it back.
func (c *checkCmd) checkIDs() (checkLine, func()) {
	l := checkLine{Name: "uids", State: stateOK}
	none := func() {}
	switch {
	case os.Geteuid() != 0:
		l.Text = fmt.Sprintf("rootless: the analysis runs as this user's uid %d (--uid and --uid-range apply only as root)", os.Geteuid())
		return l, none
	case c.fixedIDs:
		l.Text = fmt.Sprintf("fixed by --uid/--gid: every run is host uid %d, gid %d (runs share them; without --uid each leases its own from --uid-range)", c.uid, c.gid)
		return l, none
	}
	if err := uidlease.Check(c.uidRange); err != nil {
		l.State = stateMissing
		l.Text = err.Error()
		l.Fix = fmt.Sprintf("give a --uid-range of host ids no account, group or subordinate range uses (the default is %s), or fixed ids with --uid and --gid", uidlease.Default)
		c.uid, c.gid = probeID, probeID
		return l, none
	}
	lease, err := uidlease.Acquire(c.uidRange)
	if err != nil {
		l.State = stateMissing
		l.Text = err.Error()
		// A full range's message says what to do; any other failure is
		// the lease directory's.
		l.Fix = uidlease.FixDir + " with --uid and --gid"
		if errors.Is(err, uidlease.ErrFull) {
			l.Fix = "wait for runs to end, or give a wider --uid-range"
		}
		c.uid, c.gid = probeID, probeID
		return l, none
	}
	c.uid, c.gid = lease.ID(), lease.ID()
	l.Text = fmt.Sprintf("each run leases a host uid and gid of its own from %s (%d ids; none an account's, a group's or a subordinate range's; leases in %s); checked as %d", c.uidRange, c.uidRange.Size(), uidlease.LeaseDir, lease.ID())
	return l, lease.Release
}
