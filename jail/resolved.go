package jail

import (
	"maps"
	"slices"

	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/view"
)

// Resolved is a run spec that Validate accepted, as the run uses it: a copy
// of the caller's Spec with every host path resolved (--root, --ro, --rw,
// --report, --collect: inputs.go, runfiles.CheckDestinations) and the defaults filled
// in (the network mode). The caller's Spec is never changed, so one Spec
// can be validated, printed or run again as it was written.
type Resolved struct {
	Spec
	// RealTmpRoot is TmpRoot with its links resolved, once: where the
	// checks compare destinations and where a kept tmpfs run directory is
	// copied to (collect walks a path without following links).
	RealTmpRoot string
	// LeasedFrom is the range HostUID and HostGID were leased from
	// (jail/supervise's leaseIDs), "" when the caller fixed them or the run is rootless.
	LeasedFrom string
}

// Validate checks the spec and returns its resolved copy, or an error
// wrapping ErrBadSpec that says what is wrong and how to fix it. It
// creates nothing on disk: the writability of --collect is probed with an
// unnamed file (O_TMPFILE) that vanishes; that of --report is checked by
// supervise.Run, which makes the report's unnamed file first
// (runfiles.OpenReport).
func (s *Spec) Validate() (*Resolved, error) {
	c := s.clone()
	realTmp, err := c.check()
	if err != nil {
		return nil, err
	}
	return &Resolved{Spec: c, RealTmpRoot: realTmp}, nil
}

// clone is a deep copy of s: the checks resolve paths in place, in slices
// the caller still holds.
func (s *Spec) clone() Spec {
	c := *s
	c.Command = slices.Clone(s.Command)
	c.Env = slices.Clone(s.Env)
	c.DataDirs = slices.Clone(s.DataDirs)
	c.OutputIgnore = slices.Clone(s.OutputIgnore)
	c.ReadOnly = slices.Clone(s.ReadOnly)
	c.ReadWrite = slices.Clone(s.ReadWrite)
	c.AllowTCP = slices.Clone(s.AllowTCP)
	c.DBPorts = slices.Clone(s.DBPorts)
	c.AllowHosts = slices.Clone(s.AllowHosts)
	c.AllowRanges = slices.Clone(s.AllowRanges)
	c.OptIns = slices.Clone(s.OptIns)
	c.RequireLayers = maps.Clone(s.RequireLayers)
	return c
}

// LookHost looks at the host for a run of s: what of s decides what the
// host is looked at for, handed to view.LookHost.
func LookHost(s *Spec) view.HostView {
	net, _ := netmode.Lookup(s.Net) // unknown or "": Validate refuses it or fills in the default, which has no resolver; the zero row looks at none
	return view.LookHost(view.Wanted{
		Resolver: net.Resolver, Root: s.Root, DataDirs: s.DataDirs, ReadOnly: s.ReadOnly, ReadWrite: s.ReadWrite,
		LandlockDisabled: s.disabled(promise.ProtectLandlock),
	})
}
