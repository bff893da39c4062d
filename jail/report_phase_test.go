package jail

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReportPhase: the report phase's length is written over its mark,
// in the file the report is delivered to, which stays valid JSON and
// agrees with the report in memory, and counts the time since the phase
// before; names that look like the mark, in the analysis' own strings, are
// left alone.
func TestReportPhase(t *testing.T) {
	for _, cmd := range [][]string{
		{"/bin/true"},
		{"/bin/echo", `"us": 999999999999`, "999999999999"},
	} {
		path := filepath.Join(t.TempDir(), "report.json")
		start := time.Now().Add(-3 * time.Millisecond)
		rep := &Report{Command: cmd, Phases: []Phase{{Name: "cleanup", Where: "supervisor", Micros: 5}}}
		deliverReport(rep, &phaseTimer{last: start}, path)
		if rep.Status == StatusDeliveryFailed {
			t.Fatalf("deliverReport: %v", rep.DeliveryErrors)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got Report
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("report file %q: not JSON: %v", b, err)
		}
		if strings.Join(got.Command, " ") != strings.Join(cmd, " ") {
			t.Errorf("command = %q, want %q", got.Command, cmd)
		}
		last := got.Phases[len(got.Phases)-1]
		if last.Name != "report" || last.Micros < 3000 || last.Micros >= reportMark {
			t.Errorf("last phase = %+v, want report, at least 3000 us (since last)", last)
		}
		if mem := rep.Phases[len(rep.Phases)-1]; mem != last {
			t.Errorf("report phase in memory %+v, in the file %+v", mem, last)
		}
	}
}

// TestSettleStartup: the kernel's start of the process, when known, sets
// the startup phase's length, in first place, and nothing else.
func TestSettleStartup(t *testing.T) {
	t0 := time.Now()
	est := Phase{Name: "startup", Where: "supervisor", Micros: 1500}
	next := Phase{Name: "validate", Where: "supervisor", Micros: 7}
	exact := Phase{Name: "startup", Where: "supervisor", Micros: 2000}
	for _, c := range []struct {
		name    string
		phases  []Phase
		created time.Time
		want    []Phase
	}{
		{"unknown", []Phase{est, next}, time.Time{}, []Phase{est, next}},
		{"replaces the estimate", []Phase{est, next}, t0.Add(-2 * time.Millisecond), []Phase{exact, next}},
		{"added first", []Phase{next}, t0.Add(-2 * time.Millisecond), []Phase{exact, next}},
		{"after Run began", []Phase{est, next}, t0.Add(time.Millisecond), []Phase{est, next}},
	} {
		pt := &phaseTimer{t0: t0, phases: append([]Phase{}, c.phases...)}
		pt.settleStartup(c.created)
		if !slices.Equal(pt.phases, c.want) {
			t.Errorf("%s: phases = %+v, want %+v", c.name, pt.phases, c.want)
		}
	}
}
