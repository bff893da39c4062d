package supervise

import (
	"slices"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestPhaseTimerQueued: a server's request that waited for a place has
// its wait as the queued phase, between startup (its parsing and
// admission) and Run's first step; the wait is never in startup.
func TestPhaseTimerQueued(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Millisecond) }
	for _, c := range []struct {
		name              string
		started, accepted time.Time
		want              []report.Phase
	}{
		{"run: no process start", time.Time{}, time.Time{}, []report.Phase{}},
		{"run", ms(-2), time.Time{}, []report.Phase{{Name: "startup", Where: "supervisor", Micros: 2000}}},
		{"served, waited 8 s", ms(-8001), ms(-8000), []report.Phase{
			{Name: "startup", Where: "supervisor", Micros: 1000}, {Name: "queued", Where: "supervisor", Micros: 8e6}}},
		{"served, a place free", ms(-1), t0, []report.Phase{
			{Name: "startup", Where: "supervisor", Micros: 1000}, {Name: "queued", Where: "supervisor", Micros: 0}}},
		{"accepted before received (a bug's)", ms(-1000), ms(-2000), []report.Phase{{Name: "startup", Where: "supervisor", Micros: 1e6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := newPhaseTimer(t0, c.started, c.accepted).phases; !slices.Equal(got, c.want) {
				t.Errorf("newPhaseTimer(t0, %v, %v).phases = %+v, want %+v", c.started.Sub(t0), c.accepted.Sub(t0), got, c.want)
			}
		})
	}
}
