package jail

import (
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
			Outputs:        outputLimitsReport(s.Outputs),
			None:           s.offLimits(),
		},
		Phases: []Phase{},
	}
}

// recordEnforced fills the report's enforced when the target started: the
// plan's static part and what the init applied.
func (sv *supervisor) recordEnforced(e *protocol.Enforced) {
	r := &sv.rep.Enforced
	cg := r.Cgroup // the leaf the supervisor made: not in the plan
	*r = sv.plan.Enforced
	r.Cgroup = cg
	sv.recordSecurity(e)
}

// finish settles the status, lists and collects the outputs if the init did
// not get to it, and removes the cgroup leaf and the run directory. It runs
// on every path out of Run that has a report (the run directory may not
// exist: a cancel before it was made).
func (sv *supervisor) finish() {
	r := sv.rep
	if !sv.outputsDone && sv.dir != nil {
		if sv.spec.DiskBytes > 0 {
			if sv.started {
				r.Warnings = append(r.Warnings, "the init was killed before the run directory could be read: its outputs (a tmpfs) are lost")
				sv.outputsLost("the init was killed before the run directory (a tmpfs) could be read")
			}
		} else {
			sv.postRun(sv.dir.Path())
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
		if err := sv.dir.Keep(); err != nil {
			r.Warnings = append(r.Warnings, err.Error())
		}
	default:
		dirErr = sv.dir.Remove()
	}
	r.Warnings = append(r.Warnings, <-leafDone...)
	if dirErr != nil {
		r.Warnings = append(r.Warnings, dirErr.Error())
	}
	if m := sv.exited; m != nil {
		r.CPUUserSecs = float64(m.UserUsec) / 1e6
		r.CPUSystemSecs = float64(m.SysUsec) / 1e6
		r.PeakRSSBytes = m.MaxRSSKB * 1024
	} else if _, ru, ok := sv.initEnded(); ok {
		r.CPUUserSecs = float64(protocol.Micros(ru.Utime)) / 1e6
		r.CPUSystemSecs = float64(protocol.Micros(ru.Stime)) / 1e6
		r.PeakRSSBytes = ru.Maxrss * 1024
	}
	if sv.started && sv.exited == nil {
		// The init died before it could report: the supervisor's clock is
		// all there is.
		r.WallSeconds = time.Since(sv.tStart).Seconds()
	}
	sv.lap("cleanup")
	v := settle(sv.outcome())
	r.Status, r.ExitCode, r.Signal, r.SetupError, r.CompletionNotes = v.Status, v.ExitCode, v.Signal, v.SetupError, v.Notes
	r.AnalysisStatus, r.AnalysisExitCode = v.AnalysisStatus, v.AnalysisExitCode
	for _, e := range sv.deliveryErrs {
		r.deliveryFailed(e)
	}
}

// initEnded is how the init ended, once reaped (not when it never ran).
func (sv *supervisor) initEnded() (unix.WaitStatus, unix.Rusage, bool) {
	if sv.init == nil {
		return 0, unix.Rusage{}, false
	}
	return sv.init.ended()
}

// outcome gathers what decides how the run ended.
func (sv *supervisor) outcome() outcome {
	s, r := sv.spec, sv.rep
	o := outcome{
		Started: sv.started, Failed: sv.failed, TimedOut: sv.timedOut, Cancelled: sv.cancelled,
		CancelSig: sv.cancelSig, PostRunCancelled: sv.postRunCancelled, Over: sv.over, Code: -1, DiskFull: sv.diskFull,
		Wall: time.Duration(r.WallSeconds * float64(time.Second)), Timeout: s.Timeout, Grace: s.Grace,
		Memory: s.Resources.MemoryBytes, PIDs: s.Resources.PIDs, Disk: s.DiskBytes,
		Collected: r.CollectedTo,
	}
	o.Outputs, o.Delivered = r.outputFiles()
	if r.Kept {
		o.Kept = r.RunDir
	}
	if sv.usage != nil {
		o.OOMKills, o.PIDsHits = sv.usage.OOMKills, sv.usage.PIDsLimitHits
	}
	if m := sv.exited; m != nil {
		o.Code, o.Signal = m.ExitCode, m.Signal
	} else if ws, _, ok := sv.initEnded(); ok {
		switch {
		case ws.Exited():
			o.Code = ws.ExitStatus()
		case ws.Signaled():
			o.Signal = int(ws.Signal())
			o.Code = 128 + o.Signal
		}
	}
	return o
}
