package supervise

import (
	"time"

	"github.com/scidex/scidex-jail/jail"
)

// A slot's view is built ahead (viewAhead), so a slot serves only runs of
// its view: its root's data dirs, its read-only and writable paths, its
// limits' sizes, its CPUs and network mode. A server's slots are made from
// a template of each slot profile, a request naming only the profile; a
// run of another shape (its own root, say: every analysis of a platform)
// starts cold. The server then makes its next slots in the run's shape
// (SlotShape), so that runs of one shape back to back take slots again
// from the second on.

// SlotShape is a template for slots of run's shape: run's spec as a slot
// of template's would be made (template's ID, which names the slots'
// leaves, and command), without what only the run has (its report, its
// collection, the run directory kept, its start).
func SlotShape(template, run *jail.Spec) *jail.Spec {
	s := *run
	s.ID, s.Command = template.ID, template.Command
	s.Report, s.Collect, s.CollectMerge, s.Keep, s.Started = "", "", false, false, time.Time{}
	return &s
}

// SameShape says whether slots made from a and b would serve the same
// runs (their plans have one key); false when either cannot be planned.
func SameShape(a, b *jail.Spec) bool {
	ka, oka := shapeKey(a)
	kb, okb := shapeKey(b)
	return oka && okb && ka == kb
}

func shapeKey(s *jail.Spec) (string, bool) {
	r, err := s.Validate()
	if err != nil {
		return "", false
	}
	plan, _, err := jail.BuildPlan(r, jail.LookHost(&r.Spec))
	if err != nil {
		return "", false
	}
	return planKey(plan), true
}

// MadeFor says whether the slot was made from template (the very spec).
func (sl *Slot) MadeFor(template *jail.Spec) bool { return sl.template == template }
