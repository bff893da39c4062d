package supervise

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// TestReportPhase: the report phase counts the time since the phase
// before, is the last phase, and the file the report is delivered to holds
// the same phases as the report in memory.
func TestReportPhase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	start := time.Now().Add(-3 * time.Millisecond)
	rep := &report.Report{Command: []string{"/bin/true"}, Phases: []report.Phase{{Name: "cleanup", Where: "supervisor", Micros: 5}}}
	rf, err := runfiles.OpenReport(path, "--report", path)
	if err != nil {
		t.Fatal(err)
	}
	deliverReport(rep, &phaseTimer{last: start}, rf)
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
