package supervise

import (
	"testing"

	"github.com/scidex/scidex-jail/jail"
)

// TestRunPartSum: a run's part of its config names the digest of the
// view its slot was sent (slotView) when the run asks for that view,
// whatever its own part (command, names, meminfo), and another digest
// when what the slot's init is confined with differs (issue 36).
func TestRunPartSum(t *testing.T) {
	plan, _, err := jail.BuildPlan(asResolved(testSpec()), testHost())
	if err != nil {
		t.Fatalf("BuildPlan(testSpec()) = %v, want nil", err)
	}
	slot := plan.Init
	slot.Mounts.Meminfo = "MemTotal: 1 kB\n"
	view := slotView(&slot)
	for _, c := range []struct {
		name   string
		change func(*jail.Plan)
		same   bool
	}{
		{"its run", func(*jail.Plan) {}, true},
		{"another run of its shape", func(p *jail.Plan) {
			p.Init.Command, p.Init.Hostname, p.Init.Mounts.Meminfo = []string{"/bin/true"}, "other", "MemTotal: 2 kB\n"
		}, true},
		{"another uid", func(p *jail.Plan) { p.Init.UID++ }, false},
		{"no seccomp", func(p *jail.Plan) { p.Init.Security.Seccomp = nil }, false},
		{"another Landlock", func(p *jail.Plan) {
			ll := *p.Init.Security.Landlock
			ll.ConnectTCP = []uint16{443}
			p.Init.Security.Landlock = &ll
		}, false},
	} {
		p, _, err := jail.BuildPlan(asResolved(testSpec()), testHost())
		if err != nil {
			t.Fatal(err)
		}
		p.Init.Mounts.Meminfo = "MemTotal: 1 kB\n"
		c.change(p)
		part := runPart(&p.Init)
		if got := part.ViewSum == view.ViewSum; got != c.same || part.ViewSum == "" {
			t.Errorf("%s: runPart(cfg).ViewSum %q, slotView's %q: agree %t, want %t", c.name, part.ViewSum, view.ViewSum, got, c.same)
		}
		if part.Mounts.System != nil || part.Security.Landlock != nil {
			t.Errorf("%s: runPart(cfg) carries the view: %+v", c.name, part)
		}
	}
}
