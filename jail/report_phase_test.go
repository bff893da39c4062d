package jail

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestEncodeTimed: the report phase's length is written over its mark in
// the encoded bytes, which stay valid JSON and agree with the report in
// memory; names that look like the mark, in the analysis' own strings, are
// left alone.
func TestEncodeTimed(t *testing.T) {
	for _, cmd := range [][]string{
		{"/bin/true"},
		{"/bin/echo", `"us": 999999999999`, "999999999999"},
	} {
		start := time.Now().Add(-3 * time.Millisecond)
		sv := &supervisor{rep: &Report{Command: cmd, Phases: []Phase{{Name: "cleanup", Where: "supervisor", Micros: 5}}}, last: start}
		b, err := sv.encodeTimed()
		if err != nil {
			t.Fatal(err)
		}
		var got Report
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("encodeTimed() = %q: not JSON: %v", b, err)
		}
		if strings.Join(got.Command, " ") != strings.Join(cmd, " ") {
			t.Errorf("command = %q, want %q", got.Command, cmd)
		}
		last := got.Phases[len(got.Phases)-1]
		if last.Name != "report" || last.Micros < 3000 || last.Micros >= reportMark {
			t.Errorf("last phase = %+v, want report, at least 3000 us (since last)", last)
		}
		if mem := sv.rep.Phases[len(sv.rep.Phases)-1]; mem != last {
			t.Errorf("report phase in memory %+v, encoded %+v", mem, last)
		}
	}
}
