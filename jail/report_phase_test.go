package jail

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestReportPhase: the report phase counts the time since the phase
// before, is the last phase, and the file the report is delivered to holds
// the same phases as the report in memory.
func TestReportPhase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	start := time.Now().Add(-3 * time.Millisecond)
	rep := &report.Report{Command: []string{"/bin/true"}, Phases: []report.Phase{{Name: "cleanup", Where: "supervisor", Micros: 5}}}
	deliverReport(rep, &phaseTimer{last: start}, path)
	if rep.Status == report.StatusDeliveryFailed {
		t.Fatalf("deliverReport: %v", rep.DeliveryErrors)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got report.Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("report file %q: not JSON: %v", b, err)
	}
	last := got.Phases[len(got.Phases)-1]
	if last.Name != "report" || last.Micros < 3000 {
		t.Errorf("last phase = %+v, want report, at least 3000 us (since the last)", last)
	}
	if !slices.Equal(got.Phases, rep.Phases) {
		t.Errorf("phases in the file %+v, in memory %+v", got.Phases, rep.Phases)
	}
}

// TestSettleStartup: the kernel's start of the process, when known, sets
// the startup phase's length, in first place, and nothing else.
func TestSettleStartup(t *testing.T) {
	t0 := time.Now()
	est := report.Phase{Name: "startup", Where: "supervisor", Micros: 1500}
	next := report.Phase{Name: "validate", Where: "supervisor", Micros: 7}
	exact := report.Phase{Name: "startup", Where: "supervisor", Micros: 2000}
	for _, c := range []struct {
		name    string
		phases  []report.Phase
		created time.Time
		want    []report.Phase
	}{
		{"unknown", []report.Phase{est, next}, time.Time{}, []report.Phase{est, next}},
		{"replaces the estimate", []report.Phase{est, next}, t0.Add(-2 * time.Millisecond), []report.Phase{exact, next}},
		{"added first", []report.Phase{next}, t0.Add(-2 * time.Millisecond), []report.Phase{exact, next}},
		{"after Run began", []report.Phase{est, next}, t0.Add(time.Millisecond), []report.Phase{est, next}},
	} {
		pt := &phaseTimer{t0: t0, phases: append([]report.Phase{}, c.phases...)}
		pt.settleStartup(c.created)
		if !slices.Equal(pt.phases, c.want) {
			t.Errorf("%s: phases = %+v, want %+v", c.name, pt.phases, c.want)
		}
	}
}
