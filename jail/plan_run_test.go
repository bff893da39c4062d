package jail

import (
	"testing"
	"time"
)

// TestBuildPlanRun: the supervisor's part of the plan, which it consults
// alone: the leaf to make (none when the layer is disabled by name), the
// run directory, the budgets and where the results go.
func TestBuildPlanRun(t *testing.T) {
	s := testSpec()
	s.Timeout, s.Grace, s.Keep, s.Collect, s.Report = time.Minute, 3*time.Second, true, "/srv/out", "/srv/r.json"
	r := asResolved(s)
	r.RealTmpRoot = "/private/tmp"
	p, _, err := BuildPlan(r, testHost())
	if err != nil {
		t.Fatalf("BuildPlan = %v, want nil", err)
	}
	want := RunPlan{ID: "a1", TmpRoot: "/tmp", Owner: [2]int{65534, 65534}, Timeout: time.Minute, Grace: 3 * time.Second,
		DiskBytes: 1 << 20, Keep: true, KeepTo: "/private/tmp/scidex-analysis-a1", Collect: "/srv/out", Report: "/srv/r.json"}
	if p.Run != want {
		t.Errorf("BuildPlan().Run = %+v, want %+v", p.Run, want)
	}
	if c := p.Cgroup; c == nil || c.Name != "scidex-a1" || c.Limits != s.Resources {
		t.Errorf("BuildPlan().Cgroup = %+v, want leaf scidex-a1 with the spec's resources", c)
	}

	s.DiskBytes, s.Disable = 0, []string{"cgroup"}
	p, _, _ = BuildPlan(asResolved(s), testHost())
	if p.Cgroup != nil || p.Run.KeepTo != "" {
		t.Errorf("BuildPlan(no disk budget, cgroup disabled) = cgroup %+v, keep to %q, want no leaf and no copy (kept in place)", p.Cgroup, p.Run.KeepTo)
	}
}
