package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// ReportSchema names the report's format; it changes when a field changes
// meaning or goes away (new fields may appear within a version).
const ReportSchema = "scidex-jail.report/v1"

// Status is why a run ended: exactly one reason.
type Status string

const (
	StatusOK          Status = "ok"           // the target exited 0
	StatusExitNonzero Status = "exit_nonzero" // the target exited with another code
	StatusSignaled    Status = "signaled"     // the target died of a signal it was not sent by the jail
	StatusTimeout     Status = "timeout"      // the wall-clock budget ran out; the jail ended the run
	StatusCancelled   Status = "cancelled"    // the jail got SIGTERM/SIGINT/SIGHUP and ended the run
	StatusSetupError  Status = "setup_error"  // the jail failed before the target ran (or it could not be executed)
	StatusOOMKilled   Status = "oom_killed"   // the cgroup's OOM killer killed the target or a descendant
	StatusPIDsLimit   Status = "pids_limit"   // a fork failed at the PID limit and the run failed
	StatusDiskLimit   Status = "disk_limit"   // the run directory's budget filled up and the run failed
	// StatusDeliveryFailed: the run ended (as analysis_status says) but its
	// outputs (--collect, --keep) or its report could not be delivered;
	// scidex-jail exits ExitDeliveryFailed (122).
	StatusDeliveryFailed Status = "delivery_failed"
	// StatusOutputLimit: what the analysis left went over its output
	// budget (entries, bytes, one file's bytes, post-run time); the run's
	// own status and exit code are in analysis_status and
	// analysis_exit_code, and scidex-jail exits ExitOutputLimit (123).
	StatusOutputLimit Status = "output_limit"
)

// ExitOutputLimit is scidex-jail's exit status for StatusOutputLimit: beside
// ExitDeliveryFailed, below 124 (timeout(1)'s) and 125-127 (the jail's own
// failures), where no common tool puts a meaning.
const ExitOutputLimit = 123

// Report is the one JSON object a run produces.
type Report struct {
	Schema  string    `json:"schema"`
	ID      string    `json:"id"`
	Status  Status    `json:"status"`
	Command []string  `json:"command"`
	Started time.Time `json:"started_at"`

	ExitCode int    `json:"exit_code"`        // what scidex-jail itself exits with
	Signal   string `json:"signal,omitempty"` // e.g. "SIGKILL" when the target died of one

	WallSeconds   float64 `json:"wall_seconds"`
	CPUUserSecs   float64 `json:"cpu_user_seconds"`
	CPUSystemSecs float64 `json:"cpu_system_seconds"`
	PeakRSSBytes  int64   `json:"peak_rss_bytes"` // largest single process, from rusage

	// Start is how a run of scidex-jail serve began: "slot" (it took an
	// init prepared ahead) or "cold" (none was ready: as `run` starts);
	// empty for `run`.
	Start string `json:"start,omitempty"`
	// Served is the server's admission figures for a run of scidex-jail
	// serve (its wait for a place is the queued phase); nil for `run`.
	Served *Served `json:"served,omitempty"`
	// Cleanup is CleanupAfterReply for a served run whose reply went
	// before its cleanup (the init's exit, the leaf's and the run
	// directory's removal); empty: the cleanup came first, as for every
	// `run`.
	Cleanup string `json:"cleanup,omitempty"`

	Limits   LimitsReport   `json:"limits"`
	Enforced EnforcedReport `json:"enforced"`
	Phases   []Phase        `json:"phases"`

	RunDir        string   `json:"run_dir"`
	Kept          bool     `json:"kept"`
	Outputs       []Output `json:"outputs"`
	CollectedTo   string   `json:"collected_to,omitempty"`
	DiskUsedBytes int64    `json:"disk_used_bytes"` // of the run directory's budget, when it has one

	// Streams: the analysis' stdout and stderr; nil in a report made
	// before the jail had decided them (added within the version).
	Streams *Streams `json:"streams,omitempty"`
	// Egress: what the egress network mode decided (egress.go); nil for
	// a run of another mode, or one that failed before its network was
	// decided (added within the version).
	Egress *Egress `json:"egress,omitempty"`

	SetupError      *SetupError `json:"setup_error,omitempty"`
	Warnings        []string    `json:"warnings,omitempty"`
	CompletionNotes string      `json:"completion_notes"`

	// Set only with status delivery_failed or output_limit: how the run
	// itself ended (the status and exit code it would have had) and what
	// could not be delivered. The analysis' signal stays in signal.
	AnalysisStatus   Status   `json:"analysis_status,omitempty"`
	AnalysisExitCode *int     `json:"analysis_exit_code,omitempty"`
	DeliveryErrors   []string `json:"delivery_errors,omitempty"`

	ownNotes string // the completion notes before a delivery failure
}

// Phase is one timed setup step.
type Phase struct {
	Name   string `json:"name"`
	Where  string `json:"where"` // supervisor or init
	Micros int64  `json:"us"`
}

// SetupError says which stage failed before the target ran.
type SetupError struct {
	Stage   protocol.Stage `json:"stage"` // one of protocol.Stages()
	Message string         `json:"message"`
}

// Summary is the one line for stderr.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scidex-jail: run id=%s status=%s exit=%d", r.ID, r.Status, r.ExitCode)
	if r.Signal != "" {
		fmt.Fprintf(&b, " signal=%s", r.Signal)
	}
	files, _ := r.outputFiles()
	fmt.Fprintf(&b, " wall=%.3fs cpu=%.3fs output_files=%d", r.WallSeconds, r.CPUUserSecs+r.CPUSystemSecs, files)
	if r.Status != StatusOK {
		// Without --report this line is all a caller sees: say why.
		fmt.Fprintf(&b, ": %s", r.CompletionNotes)
	}
	return b.String()
}

// outputFiles counts the regular files among the outputs, as the summary
// line and the completion notes both say it.
func (r *Report) outputFiles() (files, whole int) { return OutputFiles(r.Outputs) }
