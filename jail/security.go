package jail

import (
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/view"
	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
	"slices"
	"sync"
)

// landlockPolicy is the run's Landlock policy. Its paths are paths in the
// mount view, which binds every host path at the same place. ro is the
// data dirs and --ro paths; net is the network mode's row.
func landlockPolicy(s *Spec, h view.HostView, ro []string, net netmode.Mode) *landlock.Policy {
	if s.disabled(promise.ProtectLandlock) {
		return nil
	}
	// Fail closed is decided per promise (BuildPlan) before the init
	// exists: Landlock then enforces what this kernel offers, and refuses
	// only if it finds less than the ABI that decision relied on.
	p := &landlock.Policy{
		ReadOnly:      append(limitsViewPaths(s), ro...),
		ReadWrite:     append([]string{s.RunDir(), AnalysisHome, "/dev/shm"}, s.ReadWrite...),
		Scope:         true,
		AllowDegraded: true,
		MinABI:        h.Layers.LandlockABI,
	}
	for _, e := range h.System {
		if e.Symlink == "" && e.Path != "/etc" {
			p.ReadExec = append(p.ReadExec, e.Path)
		}
	}
	p.ReadExec = append(p.ReadExec, h.Extras...)
	p.ReadExec = append(p.ReadExec, h.Etc...)
	if h.DNS != "" {
		p.ReadExec = append(p.ReadExec, h.DNS)
	}
	p.Devices = append(p.Devices, h.Devices...)
	if net.TCPPorts {
		// A mode with a network to reach (Mode.TCPPorts says why the
		// others have no TCP rules).
		p.HandleTCP = true
		p.ConnectTCP = s.AllowTCP
	}
	return p
}

// seccompPolicy is the filter for the network mode's row: its network
// policy, labelled with the mode's name for the report.
func seccompPolicy(s *Spec, net netmode.Mode) *seccomp.Policy {
	if s.disabled(promise.ProtectSeccomp) {
		return nil
	}
	return &seccomp.Policy{Name: "default", Net: net.Seccomp, Label: string(net.Name)}
}

// seccompReport is the filter the init loads for pol (seccomp.Lookup is
// a pure table lookup: the init finds the same), a copy of the one
// looked up at pol's first run: the programs are built into the binary,
// so a policy's report cannot change while it runs, and the lookup (the
// program decoded, the digests' file parsed, the denied lines made) was
// about 30 us of every run's plan.
func seccompReport(pol seccomp.Policy) (*report.SeccompReport, error) {
	if r, ok := seccompReports.Load(pol); ok {
		c := *r.(*report.SeccompReport)
		c.Denied = slices.Clone(c.Denied)
		return &c, nil
	}
	prog, err := seccomp.Lookup(pol)
	if err != nil {
		return nil, err
	}
	r := &report.SeccompReport{Policy: pol.String(), Arch: prog.Arch, SHA256: prog.SHA256, Denied: prog.Denied()}
	seccompReports.Store(pol, r)
	c := *r
	c.Denied = slices.Clone(r.Denied)
	return &c, nil
}

// seccompReports are seccompReport's by policy (a seccomp.Policy), never
// changed once stored: each caller gets its own copy.
var seccompReports sync.Map

// RecordSecurity adds to r what the init enforced of the Landlock policy
// pol, as it found it (m, its Started): the ABI and what was lacking from
// the init, the rules from the policy. The seccomp filter is the plan's
// already (seccompReport).
func RecordSecurity(r *report.EnforcedReport, pol *landlock.Policy, m *protocol.Started) {
	if l := m.Landlock; l != nil && pol != nil {
		r.Landlock = &report.LandlockReport{ABI: l.ABI, Required: pol.Required(), Rules: pol.Rules(l.ABI), Degraded: l.Degraded}
		if r.Landlock.Degraded == nil {
			r.Landlock.Degraded = []string{}
		}
	}
	r.CPUs = m.CPUs
}
