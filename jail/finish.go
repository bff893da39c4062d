package jail

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"golang.org/x/sys/unix"
)

func newReport(s *Spec, t0 time.Time) *Report {
	return &Report{
		Schema:  ReportSchema,
		ID:      s.ID,
		Command: s.Command,
		Started: t0.UTC(),
		RunDir:  s.RunDir(),
		Kept:    s.Keep,
		Outputs: []Output{},
		Limits: LimitsReport{
			Profile:        s.Profile,
			TimeoutSeconds: s.Timeout.Seconds(),
			GraceSeconds:   s.Grace.Seconds(),
			MemoryBytes:    s.Resources.MemoryBytes,
			SwapBytes:      s.Resources.SwapBytes,
			CPUs:           s.Resources.CPUs,
			PIDs:           s.Resources.PIDs,
			DiskBytes:      s.DiskBytes,
			ShmBytes:       s.ShmBytes,
			None:           s.offLimits(),
		},
		Phases: []Phase{},
	}
}

// recordEnforced fills the report's enforced when the target started: the
// plan's static part and what the init applied.
func (sv *supervisor) recordEnforced(e *protocol.Enforced) {
	r := &sv.rep.Enforced
	before := *r // promises and degraded (the plan), the cgroup leaf (made)
	*r = sv.plan.Enforced
	r.Promises, r.Degraded, r.Cgroup = before.Promises, before.Degraded, before.Cgroup
	if r.Degraded == nil {
		r.Degraded = []string{}
	}
	sv.recordSecurity(e)
}

// finish settles the status, lists and collects the outputs if the init did
// not get to it, and removes the cgroup leaf and the run directory. It runs
// on every path out of Run that has a report (the run directory may not
// exist: a cancel before it was made).
func (sv *supervisor) finish() {
	r := sv.rep
	t := time.Now()
	if !sv.outputsDone && sv.dir != nil {
		if sv.spec.DiskBytes > 0 {
			if sv.started {
				r.Warnings = append(r.Warnings, "the init was killed before the run directory could be read: its outputs (a tmpfs) are lost")
				sv.outputsLost("the init was killed before the run directory (a tmpfs) could be read")
			}
		} else {
			sv.readOutputs(sv.dir.path)
		}
	}
	// The leaf (usage, then kill what is left and remove) and the run
	// directory are independent: clean both at once.
	leafDone := make(chan []string, 1)
	go func() { leafDone <- sv.closeLeaf() }()
	var dirErr error
	switch {
	case sv.dir == nil:
	case sv.spec.Keep:
		if err := sv.dir.keep(); err != nil {
			r.Warnings = append(r.Warnings, err.Error())
		}
	default:
		dirErr = sv.dir.remove()
	}
	r.Warnings = append(r.Warnings, <-leafDone...)
	if dirErr != nil {
		r.Warnings = append(r.Warnings, dirErr.Error())
	}
	sv.settleStatus()
	if m := sv.exited; m != nil {
		r.CPUUserSecs = float64(m.UserUsec) / 1e6
		r.CPUSystemSecs = float64(m.SysUsec) / 1e6
		r.PeakRSSBytes = m.MaxRSSKB * 1024
	} else if ps := sv.procState(); ps != nil {
		r.CPUUserSecs = ps.UserTime().Seconds()
		r.CPUSystemSecs = ps.SystemTime().Seconds()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.PeakRSSBytes = ru.Maxrss * 1024
		}
	}
	if sv.started && sv.exited == nil {
		// The init died before it could report: the supervisor's clock is
		// all there is.
		r.WallSeconds = time.Since(sv.tStart).Seconds()
	}
	sv.phase("cleanup", t)
	r.CompletionNotes = sv.notes()
	for _, e := range sv.deliveryErrs {
		r.deliveryFailed(e)
	}
}

// procState is the init's wait status, or nil when it never ran.
func (sv *supervisor) procState() *os.ProcessState {
	if sv.cmd == nil {
		return nil
	}
	return sv.cmd.ProcessState
}

// settleStatus picks the one reason the run ended and the exit code.
func (sv *supervisor) settleStatus() {
	r := sv.rep
	code, sig := -1, 0
	if m := sv.exited; m != nil {
		code, sig = m.ExitCode, m.Signal
	} else if ps := sv.procState(); ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				code = ws.ExitStatus()
			case ws.Signaled():
				sig = int(ws.Signal())
				code = 128 + sig
			}
		}
	}
	if sig != 0 {
		r.Signal = unix.SignalName(syscall.Signal(sig))
	}
	switch {
	case sv.cancelled && !sv.started:
		// Cancelled before the target ran (or before the init could say
		// it did): exit as a shell does for the signal that ended it.
		r.Status, r.ExitCode, r.Signal = StatusCancelled, 128+int(sv.cancelSig), ""
	case sv.failed != nil && sv.failed.Stage == "exec" && sv.usage != nil && sv.usage.PIDsLimitHits > 0:
		// The fork of the target itself hit the PID limit.
		r.Status = StatusPIDsLimit
		r.SetupError = &SetupError{Stage: sv.failed.Stage, Message: sv.failed.Error}
		r.ExitCode = protocol.ExitSetup
	case sv.failed != nil:
		r.Status = StatusSetupError
		r.SetupError = &SetupError{Stage: sv.failed.Stage, Message: sv.failed.Error}
		r.ExitCode = sv.failed.ExitCode
		r.Signal = ""
	case !sv.started:
		// The init died before saying anything: killed during setup.
		r.Status = StatusSetupError
		if sv.timedOut {
			r.Status = StatusTimeout
		}
		r.SetupError = &SetupError{Stage: "init", Message: fmt.Sprintf("the init ended before starting the target (exit code %d, signal %s)", code, r.Signal)}
		r.ExitCode = protocol.ExitSetup
	case sv.timedOut:
		r.Status, r.ExitCode = StatusTimeout, code
	case sv.cancelled:
		r.Status, r.ExitCode = StatusCancelled, code
	case sv.usage != nil && sv.usage.OOMKills > 0:
		// Reported so even when the main process survived the kill of a
		// child and exited on its own.
		r.Status, r.ExitCode = StatusOOMKilled, code
	case code != 0 && sv.usage != nil && sv.usage.PIDsLimitHits > 0:
		r.Status, r.ExitCode = StatusPIDsLimit, code
	case code != 0 && sv.diskFull:
		r.Status, r.ExitCode = StatusDiskLimit, code
	case sig != 0:
		r.Status, r.ExitCode = StatusSignaled, code
	case code == 0:
		r.Status, r.ExitCode = StatusOK, 0
	default:
		r.Status, r.ExitCode = StatusExitNonzero, code
	}
	if r.ExitCode < 0 {
		r.ExitCode = protocol.ExitSetup
	}
}

// notes is the one sentence for the caller's logs.
func (sv *supervisor) notes() string {
	r := sv.rep
	var b strings.Builder
	switch r.Status {
	case StatusOK:
		fmt.Fprintf(&b, "The analysis finished normally (exit code 0) after %.2f s", r.WallSeconds)
	case StatusExitNonzero:
		fmt.Fprintf(&b, "The analysis failed with exit code %d after %.2f s", r.ExitCode, r.WallSeconds)
	case StatusSignaled:
		fmt.Fprintf(&b, "The analysis was killed by %s after %.2f s (not by the jail)", r.Signal, r.WallSeconds)
	case StatusTimeout:
		fmt.Fprintf(&b, "The analysis hit its %s wall-clock timeout and was stopped (SIGTERM, then SIGKILL of every process after a %s grace)", sv.spec.Timeout, sv.spec.Grace)
	case StatusCancelled:
		if !sv.started {
			fmt.Fprintf(&b, "The run was cancelled by %s to the jail before the analysis started; it never ran", unix.SignalName(sv.cancelSig))
			break
		}
		fmt.Fprintf(&b, "The run was cancelled by a signal to the jail after %.2f s; the analysis was stopped", r.WallSeconds)
	case StatusOOMKilled:
		fmt.Fprintf(&b, "The analysis ran out of memory: the cgroup's OOM killer killed %d process(es) at the %s limit (exit code %d)", sv.usage.OOMKills, sizeString(sv.spec.Resources.MemoryBytes), r.ExitCode)
	case StatusPIDsLimit:
		fmt.Fprintf(&b, "The analysis failed (exit code %d) after hitting its limit of %d processes/threads %d time(s)", r.ExitCode, sv.spec.Resources.PIDs, sv.usage.PIDsLimitHits)
	case StatusDiskLimit:
		fmt.Fprintf(&b, "The analysis failed (exit code %d) after filling its %s run directory budget", r.ExitCode, sizeString(sv.spec.DiskBytes))
	case StatusSetupError:
		fmt.Fprintf(&b, "The analysis did not run: the jail failed at stage %q: %s", r.SetupError.Stage, r.SetupError.Message)
	}
	fmt.Fprintf(&b, "; %d output file(s) listed", r.outputFiles())
	if r.CollectedTo != "" {
		fmt.Fprintf(&b, " and collected to %s", r.CollectedTo)
	}
	if r.Kept {
		fmt.Fprintf(&b, "; run directory kept at %s", r.RunDir)
	}
	b.WriteString(".")
	return b.String()
}

// sizeString prints a limit for a sentence: FormatSize's exact form with
// its unit spelled out (2GiB, 65 bytes), or "unlimited".
func sizeString(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	f := FormatSize(n)
	if last := f[len(f)-1]; last >= '0' && last <= '9' {
		return f + " bytes"
	}
	return f + "iB"
}
