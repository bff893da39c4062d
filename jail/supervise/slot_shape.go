package supervise

import (
	"github.com/scidex/scidex-jail/jail"
)

// A slot's view is built ahead (viewAhead), so a slot serves only runs of
// its view: its root's data dirs, its read-only and writable paths, its
// limits' sizes, its CPUs and network mode. A server's slots are made from
// a template of each slot profile, a request naming only the profile; a
// run of another shape (its own root, say: every analysis of a platform)
// starts cold. The server then makes its next slots in the run's shape
// (jail/server's follow), so that runs of one shape back to back take
// slots again from the second on.

// SameShape says whether slots made from a and b would serve the same
// runs (their plans have one key); false when either cannot be planned.
func SameShape(a, b *jail.Spec) bool {
	ka, oka := shapeKey(a)
	kb, okb := shapeKey(b)
	return oka && okb && ka == kb
}

func shapeKey(s *jail.Spec) (SlotKey, bool) {
	r, err := s.Validate()
	if err != nil {
		return SlotKey{}, false
	}
	plan, _, err := jail.BuildPlan(r, jail.LookHost(&r.Spec))
	if err != nil {
		return SlotKey{}, false
	}
	return planKey(plan), true
}
