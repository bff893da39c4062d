package jail

import (
	"reflect"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// TestBuildPlanRun: the supervisor's part of the plan, which it consults
// alone: the leaf to make (none when the layer is disabled by name), the
// run directory, the budgets and where the results go.
func TestBuildPlanRun(t *testing.T) {
	s := testSpec()
	s.Limits.Set(limits.Timeout, limits.Int(time.Minute))
	s.Limits.Set(limits.Grace, limits.Int(3*time.Second))
	s.Keep, s.Collect, s.Report = true, "/srv/out", "/srv/r.json"
	r := asResolved(s)
	r.RealTmpRoot = "/private/tmp"
	p, _, err := BuildPlan(r, testHost())
	if err != nil {
		t.Fatalf("BuildPlan = %v, want nil", err)
	}
	want := RunPlan{ID: "a1", TmpRoot: "/tmp", Owner: [2]int{65534, 65534}, Timeout: time.Minute, Grace: 3 * time.Second,
		Outputs:   OutputBudget{Links: map[string]string{"data": "/srv/platform/data"}},
		DiskBytes: 1 << 20, Keep: true, KeepTo: "/private/tmp/scidex-analysis-a1", Collect: "/srv/out", Report: "/srv/r.json"}
	if !reflect.DeepEqual(p.Run, want) {
		t.Errorf("BuildPlan().Run = %+v, want %+v", p.Run, want)
	}
	if c := p.Cgroup; c == nil || c.Name != "scidex-a1" || !reflect.DeepEqual(c.Limits, cgroupLimits(s.Limits)) {
		t.Errorf("BuildPlan().Cgroup = %+v, want leaf scidex-a1 with the spec's resources", c)
	}

	// Leased ids: the range is the run's, for the leftover run directory
	// of a dead run of an id of it.
	r = asResolved(s)
	r.HostUID, r.HostGID, r.LeasedFrom = 61000, 61000, uidlease.Default.String()
	if p, _, _ = BuildPlan(r, testHost()); p.Run.Leased != uidlease.Default || p.Run.Owner != [2]int{61000, 61000} {
		t.Errorf("BuildPlan(leased).Run = leased %v, owner %v, want %v, 61000:61000", p.Run.Leased, p.Run.Owner, uidlease.Default)
	}

	s.Limits.Set(limits.Disk, limits.Amount{})
	s.OptIns = promise.OptIns{{Kind: promise.OptInDisable, Protection: promise.ProtectCgroup}}
	p, _, _ = BuildPlan(asResolved(s), testHost())
	if p.Cgroup != nil || p.Run.KeepTo != "" {
		t.Errorf("BuildPlan(no disk budget, cgroup disabled) = cgroup %+v, keep to %q, want no leaf and no copy (kept in place)", p.Cgroup, p.Run.KeepTo)
	}
}
