package supervise

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestReportSchemaRules: reports as the supervisor builds them (before a
// run, set up, settled, delivery failed) pass; the rules that matter fail
// when broken. Real reports of every status are checked end to end in
// cmd/scidex-jail (TestReportSchemaEveryStatus).
func TestReportSchemaRules(t *testing.T) {
	schema, err := testutil.CompileReportSchema(report.JSONSchema)
	if err != nil {
		t.Fatal(err)
	}
	base := func() *report.Report {
		s := testSpec()
		s.Profile = "default"
		r := newReport(s, time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.UTC))
		r.Status, r.CompletionNotes = report.StatusOK, "The analysis finished normally."
		return r
	}
	planned := func() *report.Report {
		r := base()
		p, _, err := jail.BuildPlan(asResolved(testSpec()), testHost())
		if err != nil {
			t.Fatalf("BuildPlan: %v", err)
		}
		r.Enforced = p.Enforced
		r.Enforced.Landlock = &report.LandlockReport{ABI: 7, Required: 6, Rules: []string{"rx /usr"}, Degraded: []string{}}
		r.Enforced.Seccomp = &report.SeccompReport{Policy: "default/none", Arch: "amd64", SHA256: strings.Repeat("ab", 32), Denied: []string{}}
		r.Enforced.Cgroup = &report.CgroupReport{Version: 1, Paths: []string{"/sys/fs/cgroup/pids/x"}, Written: map[string]string{"pids.max": "64"}, Usage: &report.CgroupUsage{PeakMemoryBytes: 1}}
		r.Phases = []report.Phase{{Name: "startup", Where: "supervisor", Micros: 900}, {Name: "mounts", Where: "init", Micros: 80}}
		r.Outputs = []report.Output{
			{Path: "a.csv", Type: "file", Size: 3, SHA256: strings.Repeat("0f", 32)},
			{Path: "\uFFFD", PathB64: "/w==", Type: "symlink", Target: "a.csv"},
		}
		return r
	}
	code := 0
	for _, c := range []struct {
		name   string
		report func() *report.Report
		want   string // "" to pass, else a piece of the validator's message
	}{
		{"setup error before the plan", func() *report.Report {
			r := base()
			r.Status, r.ExitCode, r.SetupError = report.StatusSetupError, 125, &report.SetupError{Stage: "cgroup", Message: "no"}
			return r
		}, ""},
		{"planned, settled", planned, ""},
		{"delivery failed", func() *report.Report {
			r := planned()
			r.AnalysisStatus, r.AnalysisExitCode, r.Status = r.Status, &code, report.StatusDeliveryFailed
			r.DeliveryErrors, r.ExitCode = []string{"collect: no space"}, 122
			return r
		}, ""},
		{"served, queued", func() *report.Report {
			r := planned()
			r.Start, r.Served = "slot", &report.Served{MaxRuns: 2, Queue: 64, Running: 2, QueuedAhead: 3}
			r.Phases = append([]report.Phase{{Name: "queued", Where: "supervisor", Micros: 8e6}}, r.Phases...)
			return r
		}, ""},
		{"served with no run place", func() *report.Report {
			r := planned()
			r.Served = &report.Served{MaxRuns: 0}
			return r
		}, "max_runs"},
		{"unknown status", func() *report.Report { r := base(); r.Status = "fine"; return r }, "status"},
		{"setup_error without its stage", func() *report.Report { r := base(); r.Status = report.StatusSetupError; return r }, "setup_error"},
		{"delivery_failed without the analysis' status", func() *report.Report { r := base(); r.Status = report.StatusDeliveryFailed; return r }, "analysis_status"},
		{"other version", func() *report.Report { r := base(); r.Schema = "scidex-jail.report/v0"; return r }, "schema"},
		{"negative wall time", func() *report.Report { r := base(); r.WallSeconds = -1; return r }, "wall_seconds"},
		{"bad sha256", func() *report.Report { r := planned(); r.Outputs[0].SHA256 = "xyz"; return r }, "sha256"},
		{"bad base64 name", func() *report.Report { r := planned(); r.Outputs[1].PathB64 = "%%"; return r }, "path_b64"},
		{"bad output type", func() *report.Report { r := planned(); r.Outputs[0].Type = "fifo"; return r }, "type"},
		{"bad phase place", func() *report.Report { r := planned(); r.Phases[0].Where = "target"; return r }, "where"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.report())
			if err != nil {
				t.Fatal(err)
			}
			err = schema.Validate(b)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil\n%s", err, b)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate = %v, want an error naming %q", err, c.want)
			}
		})
	}
}
