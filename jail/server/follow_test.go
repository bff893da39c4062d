package server

import (
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestAnalysisStarted: a run's shape is followed only when its report
// has the supervisor's init phase (from "go" to the target's start),
// which only a run whose target started has; a setup failure at the
// init's Landlock or exec, with the init's own phases, has not.
func TestAnalysisStarted(t *testing.T) {
	sup := func(names ...string) []report.Phase {
		var ps []report.Phase
		for _, n := range names {
			ps = append(ps, report.Phase{Name: n, Where: "supervisor"})
		}
		return ps
	}
	tests := []struct {
		name   string
		phases []report.Phase
		want   bool
	}{
		{"ran", sup("startup", "validate", "policy", "config", "init", "analysis", "outputs"), true},
		{"refused at landlock", append(sup("startup", "validate", "policy", "config"), report.Phase{Name: "config", Where: "init"}), false},
		{"the init's phases alone", []report.Phase{{Name: "init", Where: "init"}}, false},
		{"no phases", nil, false},
	}
	for _, tt := range tests {
		if got := analysisStarted(&report.Report{Phases: tt.phases}); got != tt.want {
			t.Errorf("%s: analysisStarted() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
