package supervise

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestSettle covers every status a run can end with, from the facts the
// supervisor gathers, without running anything.
func TestSettle(t *testing.T) {
	base := outcome{Started: true, Code: 0, Wall: 1500 * time.Millisecond, Timeout: 30 * time.Second, Grace: 10 * time.Second,
		Memory: 256 << 20, PIDs: 64, Disk: 1 << 30, Outputs: 2, Delivered: 2}
	with := func(f func(*outcome)) outcome { o := base; f(&o); return o }
	execFail := &setupFailure{Stage: "exec", Msg: "fork: resource temporarily unavailable", Exit: protocol.ExitSetup}
	cases := []struct {
		name       string
		o          outcome
		status     report.Status
		code       int
		signal     string
		setupStage string
		notes      string // in the sentence
	}{
		{"ok", base, report.StatusOK, 0, "", "", "finished normally (exit code 0) after 1.50 s; 2 output file(s) listed."},
		{"exit nonzero", with(func(o *outcome) { o.Code = 3 }), report.StatusExitNonzero, 3, "", "", "failed with exit code 3"},
		{"signaled", with(func(o *outcome) { o.Code, o.Signal = 139, int(syscall.SIGSEGV) }), report.StatusSignaled, 139, "SIGSEGV", "", "killed by SIGSEGV after 1.50 s (not by the jail)"},
		{"timeout", with(func(o *outcome) { o.TimedOut, o.Code, o.Signal = true, 137, int(syscall.SIGKILL) }), report.StatusTimeout, 137, "SIGKILL", "", "hit its 30s wall-clock timeout"},
		{"cancelled while running", with(func(o *outcome) { o.Cancelled, o.Code, o.Signal = true, 143, int(syscall.SIGTERM) }), report.StatusCancelled, 143, "SIGTERM", "", "cancelled by a signal to the jail after 1.50 s"},
		{"cancelled before start", with(func(o *outcome) { o.Started, o.Cancelled, o.CancelSig, o.Code = false, true, syscall.SIGTERM, -1 }), report.StatusCancelled, 143, "", "", "cancelled by SIGTERM to the jail before the analysis started"},
		{"oom killed", with(func(o *outcome) { o.OOMKills, o.Code, o.Signal = 1, 137, int(syscall.SIGKILL) }), report.StatusOOMKilled, 137, "SIGKILL", "", "killed 1 process(es) at the 256MiB limit"},
		{"oom killed child, main exited 0", with(func(o *outcome) { o.OOMKills = 2 }), report.StatusOOMKilled, 0, "", "", "OOM killer killed 2 process(es)"},
		{"pids limit", with(func(o *outcome) { o.PIDsHits, o.Code = 5, 1 }), report.StatusPIDsLimit, 1, "", "", "limit of 64 processes/threads 5 time(s)"},
		{"pids hits but exit 0 is ok", with(func(o *outcome) { o.PIDsHits = 5 }), report.StatusOK, 0, "", "", "finished normally"},
		{"pids limit at the fork of the target", with(func(o *outcome) { o.Started, o.Failed, o.PIDsHits, o.Code = false, execFail, 1, -1 }), report.StatusPIDsLimit, 125, "", "exec", "limit of 64"},
		{"disk limit", with(func(o *outcome) { o.DiskFull, o.Code = true, 1 }), report.StatusDiskLimit, 1, "", "", "filling its 1GiB run directory budget"},
		{"setup error", with(func(o *outcome) {
			o.Started, o.Code = false, -1
			o.Failed = &setupFailure{Stage: "landlock", Msg: "no", Exit: protocol.ExitSetup}
		}), report.StatusSetupError, 125, "", "landlock", `failed at stage "landlock": no`},
		{"command not found", with(func(o *outcome) {
			o.Started, o.Code = false, -1
			o.Failed = &setupFailure{Stage: "exec", Msg: "nope: command not found", Exit: protocol.ExitNotFound}
		}), report.StatusSetupError, 127, "", "exec", "command not found"},
		{"init killed in setup", with(func(o *outcome) { o.Started, o.Code, o.Signal = false, 137, int(syscall.SIGKILL) }), report.StatusSetupError, 125, "SIGKILL", "init", "the init ended before starting the target"},
		{"timeout during setup", with(func(o *outcome) { o.Started, o.TimedOut, o.Code, o.Signal = false, true, 137, int(syscall.SIGKILL) }), report.StatusTimeout, 125, "SIGKILL", "init", "wall-clock timeout"},
		{"cancelled after the analysis ended", with(func(o *outcome) { o.Cancelled, o.PostRunCancelled, o.CancelSig = true, true, syscall.SIGTERM }),
			report.StatusCancelled, 143, "", "", "cancelled by SIGTERM to the jail after the analysis ended (exit code 0"},
		{"cancelled after the analysis ended over budget", with(func(o *outcome) {
			o.Cancelled, o.PostRunCancelled, o.CancelSig, o.Over = true, true, syscall.SIGINT, &jail.OverBudget{Budget: "entries", Limit: "10", Path: "d/x", Size: 0}
		}), report.StatusCancelled, 130, "", "", "while its outputs were read"},
		{"output limit over ok", with(func(o *outcome) {
			o.Over = &jail.OverBudget{Budget: "file_bytes", Limit: "1GiB", Path: "big.bin", Size: 1 << 40}
		}),
			report.StatusOutputLimit, report.ExitOutputLimit, "", "", `outputs went over the budget of bytes for one file (1GiB) at "big.bin" (1099511627776 bytes)`},
		{"output limit over exit nonzero", with(func(o *outcome) {
			o.Code, o.Over = 2, &jail.OverBudget{Budget: "entries", Limit: "10000", Path: "d/x", Size: 0}
		}),
			report.StatusOutputLimit, report.ExitOutputLimit, "", "", "The analysis failed with exit code 2"},
		{"output limit over time", with(func(o *outcome) { o.Over = &jail.OverBudget{Budget: "time", Limit: "3m0s", Size: -1} }),
			report.StatusOutputLimit, report.ExitOutputLimit, "", "", "over the post-run time budget (3m0s):"},
		{"collected in part: the rest was not copied", with(func(o *outcome) {
			o.Collected, o.Delivered, o.Over = "/out", 1, &jail.OverBudget{Budget: "file_bytes", Limit: "1GiB", Path: "big.bin", Size: 1 << 40}
		}), report.StatusOutputLimit, report.ExitOutputLimit, "", "", "; 2 output file(s) listed, 1 of them collected to /out."},
		{"collected and kept", with(func(o *outcome) { o.Collected, o.Kept = "/out", "/tmp/scidex-analysis-x" }), report.StatusOK, 0, "", "", "collected to /out; run directory kept at /tmp/scidex-analysis-x."},
		{"last words of a failure", with(func(o *outcome) { o.Code, o.LastWords = 1, "KeyError: 'dose'" }), report.StatusExitNonzero, 1, "", "",
			"failed with exit code 1 after 1.50 s; last words: KeyError: 'dose'; 2 output file(s) listed."},
		{"last words of a timeout", with(func(o *outcome) {
			o.TimedOut, o.Code, o.Signal, o.LastWords = true, 137, int(syscall.SIGKILL), "step 9 of 10"
		}),
			report.StatusTimeout, 137, "SIGKILL", "", "grace); last words: step 9 of 10;"},
		{"no last words when ok", with(func(o *outcome) { o.LastWords = "warning: x" }), report.StatusOK, 0, "", "", "finished normally (exit code 0) after 1.50 s; 2 output file(s) listed."},
		{"truncated", with(func(o *outcome) {
			o.Truncated = []string{"stdout truncated: 9 of its 10 bytes dropped, over the budget of 1"}
		}), report.StatusOK, 0, "", "",
			"after 1.50 s; stdout truncated: 9 of its 10 bytes dropped, over the budget of 1; 2 output file(s) listed."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := settle(c.o)
			if v.Status != c.status || v.ExitCode != c.code || v.Signal != c.signal {
				t.Errorf("settle(%+v) = %s, %d, %q, want %s, %d, %q", c.o, v.Status, v.ExitCode, v.Signal, c.status, c.code, c.signal)
			}
			stage := ""
			if v.SetupError != nil {
				stage = string(v.SetupError.Stage)
			}
			if stage != c.setupStage {
				t.Errorf("settle(%+v).SetupError = %+v, want stage %q", c.o, v.SetupError, c.setupStage)
			}
			if !strings.Contains(v.Notes, c.notes) {
				t.Errorf("settle(%+v).Notes = %q, want it to hold %q", c.o, v.Notes, c.notes)
			}
			if (v.Status == report.StatusOutputLimit) != (v.AnalysisStatus != "" && v.AnalysisExitCode != nil) {
				t.Errorf("settle(%+v) = %s, analysis %q, %v: want the analysis' own end kept with output_limit only", c.o, v.Status, v.AnalysisStatus, v.AnalysisExitCode)
			}
		})
	}
}

// TestDeliveryFailed: a run whose outputs or report could not be delivered
// ends delivery_failed, exit 122, whatever the analysis did, which the
// report keeps beside the cause.
func TestDeliveryFailed(t *testing.T) {
	for _, o := range []outcome{
		{Started: true, Code: 0},
		{Started: true, TimedOut: true, Code: 137, Signal: int(syscall.SIGKILL), Timeout: time.Second},
	} {
		v := settle(o)
		r := &report.Report{Status: v.Status, ExitCode: v.ExitCode, CompletionNotes: v.Notes}
		r.DeliveryFailed("collect /out: no space left on device")
		r.DeliveryFailed("write report /r.json: read-only file system")
		if r.Status != report.StatusDeliveryFailed || r.ExitCode != report.ExitDeliveryFailed {
			t.Errorf("after deliveryFailed: %s, %d, want delivery_failed, %d", r.Status, r.ExitCode, report.ExitDeliveryFailed)
		}
		if r.AnalysisStatus != v.Status || r.AnalysisExitCode == nil || *r.AnalysisExitCode != v.ExitCode {
			t.Errorf("after deliveryFailed: analysis %s, %v, want %s, %d kept", r.AnalysisStatus, r.AnalysisExitCode, v.Status, v.ExitCode)
		}
		if len(r.DeliveryErrors) != 2 || !strings.HasPrefix(r.CompletionNotes, "The results were not delivered (collect /out") || !strings.Contains(r.CompletionNotes, v.Notes) {
			t.Errorf("after deliveryFailed: errors %q, notes %q, want both causes and the analysis' own notes", r.DeliveryErrors, r.CompletionNotes)
		}
	}
}
