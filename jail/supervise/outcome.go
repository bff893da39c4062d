package supervise

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// setupFailure is a setup step that failed before the target ran: in the
// init (its error message) or in the supervisor (a step of execute). Stage
// is where (protocol.Stage), Exit what scidex-jail exits
// with.
type setupFailure struct {
	Stage jail.Stage
	Msg   string
	Exit  int
}

// failAt is a supervisor step's failure at stage, with the setup exit code.
func failAt(stage jail.Stage, err error) *setupFailure {
	return &setupFailure{Stage: stage, Msg: err.Error(), Exit: protocol.ExitSetup}
}

// initFailure is the failure the init reported in m.
func initFailure(m *protocol.SetupFailed) *setupFailure {
	return &setupFailure{Stage: m.Stage, Msg: m.Error, Exit: m.ExitCode}
}

// outcome is everything that decides how a run ended, gathered from the
// run's values (outcomeOf); settle turns it into the report's status, exit
// code and completion notes, as one pure function.
type outcome struct {
	Started   bool          // the init reported the target started
	Failed    *setupFailure // a setup error (stage, message, exit code), from the init or the supervisor
	TimedOut  bool
	Cancelled bool
	CancelSig syscall.Signal // the signal that cancelled the run
	// PostRunCancelled: the cancel came after the analysis ended, while
	// its outputs were read; the analysis' own end is in Code and Signal.
	PostRunCancelled bool
	Over             *jail.OverBudget // the first output budget gone over; nil: none
	Code             int              // the target's (or, without its report, the init's) exit code; -1 unknown
	Signal           int              // the signal it died of; 0 none
	OOMKills         int64            // from the cgroup leaf
	PIDsHits         int64            // fork failures at the PID limit
	DiskFull         bool             // the run directory's budget was (nearly) full at the end

	// For the sentence.
	Wall      time.Duration
	Timeout   time.Duration
	Grace     time.Duration
	Memory    int64
	PIDs      int64
	Disk      int64
	Outputs   int    // regular files left in the run directory
	Delivered int    // of those, the ones hashed (and, collected, copied) whole
	Collected string // where they were copied
	Kept      string // the kept run directory, when kept
	// LastWords: what the analysis said last on stderr (lastWords), for
	// a failure; Truncated: each stream over its budget, with the bytes
	// dropped.
	LastWords string
	Truncated []string
}

// verdict is what the report says of the run's end.
type verdict struct {
	Status     report.Status
	ExitCode   int
	Signal     string // the signal's name, when the target died of one
	SetupError *report.SetupError
	Notes      string

	// With StatusOutputLimit: the status and exit code the run would
	// have had.
	AnalysisStatus   report.Status
	AnalysisExitCode *int
}

// settle picks the one reason the run ended and the exit code, then the
// sentence for the caller's logs.
func settle(o outcome) verdict {
	v := reason(o)
	if v.ExitCode < 0 {
		v.ExitCode = protocol.ExitSetup
	}
	v.Notes = notes(v, o)
	if o.Over != nil && v.Status != report.StatusCancelled && v.SetupError == nil {
		// Never ok: what was listed is listed, but not everything was
		// read, hashed or copied.
		code := v.ExitCode
		v.AnalysisStatus, v.AnalysisExitCode = v.Status, &code
		v.Status, v.ExitCode = report.StatusOutputLimit, report.ExitOutputLimit
		v.Notes = fmt.Sprintf("The run's outputs went %s: what was not listed, hashed or copied says so in its entry (skipped). %s", o.Over, v.Notes)
	}
	return v
}

// reason is the one reason the run ended, with its exit code (-1: not
// known) and signal.
func reason(o outcome) verdict {
	v := verdict{ExitCode: o.Code}
	if o.Signal != 0 {
		v.Signal = unix.SignalName(syscall.Signal(o.Signal))
	}
	setup := func(st report.Status, code int) {
		v.Status, v.ExitCode = st, code
		v.SetupError = &report.SetupError{Stage: o.Failed.Stage, Message: o.Failed.Msg}
	}
	switch {
	case o.PostRunCancelled:
		// The analysis had ended; its outputs were being read. Exit as
		// a shell does for the signal, whatever the analysis exited with:
		// the caller asked to stop, and the listing is not whole.
		v.Status, v.ExitCode = report.StatusCancelled, 128+int(o.CancelSig)
	case o.Cancelled && !o.Started:
		// Cancelled before the target ran (or before the init could say
		// it did): exit as a shell does for the signal that ended it.
		v.Status, v.ExitCode, v.Signal = report.StatusCancelled, 128+int(o.CancelSig), ""
	case o.Failed != nil && o.Failed.Stage == protocol.StageExec && o.PIDsHits > 0:
		// The fork of the target itself hit the PID limit.
		setup(report.StatusPIDsLimit, protocol.ExitSetup)
	case o.Failed != nil:
		setup(report.StatusSetupError, o.Failed.Exit)
		v.Signal = ""
	case !o.Started:
		// The init died before saying anything: killed during setup.
		v.Status, v.ExitCode = report.StatusSetupError, protocol.ExitSetup
		if o.TimedOut {
			v.Status = report.StatusTimeout
		}
		v.SetupError = &report.SetupError{Stage: protocol.StageInit, Message: fmt.Sprintf("the init ended before starting the target (exit code %d, signal %s)", o.Code, v.Signal)}
	default:
		v.Status = ranStatus(o)
	}
	return v
}

// ranStatus is how a run whose target started ended.
func ranStatus(o outcome) report.Status {
	switch {
	case o.TimedOut:
		return report.StatusTimeout
	case o.Cancelled:
		return report.StatusCancelled
	case o.OOMKills > 0:
		// Reported so even when the main process survived the kill of a
		// child and exited on its own.
		return report.StatusOOMKilled
	case o.Code != 0 && o.PIDsHits > 0:
		return report.StatusPIDsLimit
	case o.Code != 0 && o.DiskFull:
		return report.StatusDiskLimit
	case o.Signal != 0:
		return report.StatusSignaled
	case o.Code == 0:
		return report.StatusOK
	}
	return report.StatusExitNonzero
}

// failed says whether the analysis ran and failed: its last words say why.
func failed(v verdict) bool {
	switch v.Status {
	case report.StatusExitNonzero, report.StatusSignaled, report.StatusTimeout, report.StatusOOMKilled, report.StatusPIDsLimit, report.StatusDiskLimit:
		return true
	}
	return false
}

// notes is the one sentence for the caller's logs.
func notes(v verdict, o outcome) string {
	var b strings.Builder
	wall := o.Wall.Seconds()
	switch v.Status {
	case report.StatusOK:
		fmt.Fprintf(&b, "The analysis finished normally (exit code 0) after %.2f s", wall)
	case report.StatusExitNonzero:
		fmt.Fprintf(&b, "The analysis failed with exit code %d after %.2f s", v.ExitCode, wall)
	case report.StatusSignaled:
		fmt.Fprintf(&b, "The analysis was killed by %s after %.2f s (not by the jail)", v.Signal, wall)
	case report.StatusTimeout:
		fmt.Fprintf(&b, "The analysis hit its %s wall-clock timeout and was stopped (SIGTERM, then SIGKILL of every process after a %s grace)", o.Timeout, o.Grace)
	case report.StatusCancelled:
		if !o.Started {
			fmt.Fprintf(&b, "The run was cancelled by %s to the jail before the analysis started; it never ran", unix.SignalName(o.CancelSig))
			break
		}
		if o.PostRunCancelled {
			fmt.Fprintf(&b, "The run was cancelled by %s to the jail after the analysis ended (exit code %d, after %.2f s), while its outputs were read: the listing may be incomplete", unix.SignalName(o.CancelSig), o.Code, wall)
			break
		}
		fmt.Fprintf(&b, "The run was cancelled by a signal to the jail after %.2f s; the analysis was stopped", wall)
	case report.StatusOOMKilled:
		fmt.Fprintf(&b, "The analysis ran out of memory: the cgroup's OOM killer killed %d process(es) at the %s limit (exit code %d)", o.OOMKills, limits.SizeWords(o.Memory), v.ExitCode)
	case report.StatusPIDsLimit:
		fmt.Fprintf(&b, "The analysis failed (exit code %d) after hitting its limit of %d processes/threads %d time(s)", v.ExitCode, o.PIDs, o.PIDsHits)
	case report.StatusDiskLimit:
		fmt.Fprintf(&b, "The analysis failed (exit code %d) after filling its %s run directory budget (shared with its scratch: HOME, TMPDIR, caches)", v.ExitCode, limits.SizeWords(o.Disk))
	case report.StatusSetupError:
		fmt.Fprintf(&b, "The analysis did not run: the jail failed at stage %q: %s", v.SetupError.Stage, v.SetupError.Message)
	}
	if o.LastWords != "" && failed(v) {
		fmt.Fprintf(&b, "; last words: %s", o.LastWords)
	}
	for _, t := range o.Truncated {
		fmt.Fprintf(&b, "; %s", t)
	}
	fmt.Fprintf(&b, "; %d output file(s) listed", o.Outputs)
	switch {
	case o.Collected == "":
	case o.Delivered < o.Outputs:
		fmt.Fprintf(&b, ", %d of them collected to %s", o.Delivered, o.Collected)
	default:
		fmt.Fprintf(&b, " and collected to %s", o.Collected)
	}
	if o.Kept != "" {
		fmt.Fprintf(&b, "; run directory kept at %s", o.Kept)
	}
	b.WriteString(".")
	return b.String()
}
