package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/runfiles"
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

// EnforcedReport is what was in force while the target ran.
type EnforcedReport struct {
	Namespaces   []string                            `json:"namespaces"`
	HostUID      int                                 `json:"host_uid"`
	HostGID      int                                 `json:"host_gid"`
	UID          int                                 `json:"uid"` // inside the user namespace
	Identity     IdentityReport                      `json:"identity"`
	NoNewPrivs   bool                                `json:"no_new_privs"`
	Capabilities string                              `json:"capabilities"`
	Net          string                              `json:"net"`
	AllowTCP     []uint16                            `json:"allow_tcp"` // outbound TCP ports (net host only)
	Mounts       MountReport                         `json:"mounts"`
	CPUs         string                              `json:"cpus"`     // the CPUs the analysis could run on (a kernel CPU list), as /sys/devices/system/cpu/online showed them
	Landlock     *LandlockReport                     `json:"landlock"` // null: disabled by --unsafe-disable
	Seccomp      *protocol.Seccomp                   `json:"seccomp"`  // null: disabled by --unsafe-disable
	Cgroup       *CgroupReport                       `json:"cgroup"`   // null: disabled by --unsafe-disable
	Promises     map[promise.Promise][]promise.Layer `json:"promises"` // promise -> the layers that hold it on this run
	Degraded     []string                            `json:"degraded"` // promises holding with fewer layers than required (explicit opt-in only)
}

// MountReport is the target's filesystem view.
type MountReport struct {
	Generated []string `json:"generated"`  // the view's own files over the host's: the analysis' /etc/passwd and /etc/group
	ReadOnly  []string `json:"read_only"`  // host paths bound read-only (besides the system dirs)
	ReadWrite []string `json:"read_write"` // host paths bound writable (besides the run directory)
	System    []string `json:"system"`     // bound read-only from the host
	RunDir    string   `json:"run_dir"`    // "tmpfs, N bytes" or "bound from the host"
	Scratch   string   `json:"scratch"`    // where HOME, TMPDIR and the caches were, and what bounded them
	DataDirs  []string `json:"data_dirs"`  // each data dir of the profile: its host path and its link in the run directory, or why it is not there
	Meminfo   string   `json:"meminfo"`    // what /proc/meminfo showed: the run's limit or the host's
	ShmBytes  int64    `json:"shm_bytes"`
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

// Output is one entry left in the run directory (runfiles.Output).
type Output = runfiles.Output

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

// LandlockReport is the Landlock ruleset in force.
type LandlockReport struct {
	ABI      int      `json:"abi"`      // of the running kernel
	Required int      `json:"required"` // what the policy needs in full
	Rules    []string `json:"rules"`    // e.g. "rx /usr", "ro /work/data", "rw /tmp/scidex-analysis-x", "tcp-connect 443"
	Degraded []string `json:"degraded"` // rights this kernel's Landlock does not enforce (other layers may hold the promise: see promises)
}

// CgroupReport is the run's cgroup leaf: where, which version, what was
// written and what was used.
type CgroupReport struct {
	Version int               `json:"version"`
	Paths   []string          `json:"paths"`
	Written map[string]string `json:"written"` // file -> value, as written before the target started
	Usage   *CgroupUsage      `json:"usage,omitempty"`
}

// CgroupUsage is what the leaf counted.
type CgroupUsage = cgroupfs.Usage

// outputFiles counts the regular files among the outputs, as the summary
// line and the completion notes both say it.
func (r *Report) outputFiles() (files, whole int) { return OutputFiles(r.Outputs) }

// OutputFiles counts the regular files in outs, and of those the ones
// hashed (and, collected, copied) whole.
func OutputFiles(outs []Output) (files, whole int) {
	for _, o := range outs {
		if o.Type == runfiles.OutputFile {
			files++
			if o.SHA256 != "" && o.Skipped == "" {
				whole++
			}
		}
	}
	return files, whole
}
