package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestDecodeReport: what run --server decodes of a reply's report gives
// the summary line and exit code the whole report gives, and a delivery
// failure's report (printed whole) comes back whole.
func TestDecodeReport(t *testing.T) {
	full := func(r report.Report) report.Report {
		r.Schema, r.Command, r.RunDir = report.ReportSchema, []string{"/usr/bin/true"}, "/tmp/scidex-analysis-x"
		r.Limits.Profile = "default"
		r.Enforced.Namespaces = []string{"user", "mount"}
		r.Phases = []report.Phase{{Name: "init", Where: "supervisor", Micros: 1700}}
		r.Served = &report.Served{MaxRuns: 2}
		return r
	}
	cases := []struct {
		name  string
		rep   report.Report
		whole bool // decoded whole: tell prints it
	}{
		{"ok", full(report.Report{ID: "a", Status: report.StatusOK, WallSeconds: 0.25, CPUUserSecs: 0.1, CPUSystemSecs: 0.05}), false},
		{"nonzero with outputs", full(report.Report{ID: "b", Status: report.StatusExitNonzero, ExitCode: 3, CompletionNotes: "the analysis exited 3",
			Outputs: []report.Output{{Path: "a.csv", Type: "file", Size: 3}, {Path: "d", Type: "dir"}}}), false},
		{"signaled", full(report.Report{ID: "c", Status: report.StatusSignaled, ExitCode: 137, Signal: "SIGKILL", CompletionNotes: "killed"}), false},
		{"delivery failed", full(report.Report{ID: "d", Status: report.StatusDeliveryFailed, ExitCode: 122, DeliveryErrors: []string{"no room"}}), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js, err := json.Marshal(&c.rep)
			if err != nil {
				t.Fatal(err)
			}
			var want report.Report
			if err := json.Unmarshal(js, &want); err != nil {
				t.Fatal(err)
			}
			got, err := decodeReport(js)
			if err != nil {
				t.Fatalf("decodeReport = %v", err)
			}
			if g, w := got.Summary(), want.Summary(); g != w {
				t.Errorf("decodeReport(%s).Summary() = %q, want %q", c.name, g, w)
			}
			if got.ExitCode != want.ExitCode || got.Status != want.Status {
				t.Errorf("decodeReport(%s) = status %q exit %d, want %q %d", c.name, got.Status, got.ExitCode, want.Status, want.ExitCode)
			}
			if whole := reflect.DeepEqual(*got, want); whole != c.whole {
				t.Errorf("decodeReport(%s) decoded whole = %v, want %v", c.name, whole, c.whole)
			}
		})
	}
}
