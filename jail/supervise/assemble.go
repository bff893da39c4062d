package supervise

import (
	"slices"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// assembleReport builds a run's report, once, from its facts: the spec's
// limits, the plan's enforced part and what the init found applying it,
// the phases, the outputs, the usage, and the end settled from them
// (settle).
func assembleReport(f runFacts) *report.Report {
	r := newReport(&f.spec.Spec, f.t0)
	r.Warnings, r.Start, r.Served, r.Cleanup = f.warnings, f.start, f.served, f.cleanup
	r.Enforced = enforced(f.plan, f.end.started, f.cgroup)
	r.Phases = slices.Clone(f.phases)
	if f.out.read {
		r.Outputs = reportOutputs(f.out.list)
	}
	r.CollectedTo, r.DiskUsedBytes = f.out.collectedTo, f.out.diskUsed
	if f.stdioDecided {
		streams := f.stdio.Streams
		r.Streams = &streams
	}
	r.WallSeconds = f.wall
	if m := f.end.exited; m != nil {
		r.CPUUserSecs = float64(m.UserUsec) / 1e6
		r.CPUSystemSecs = float64(m.SysUsec) / 1e6
		r.PeakRSSBytes = m.MaxRSSKB * 1024
	} else if f.init.OK {
		r.CPUUserSecs = float64(protocol.Micros(f.init.RU.Utime)) / 1e6
		r.CPUSystemSecs = float64(protocol.Micros(f.init.RU.Stime)) / 1e6
		r.PeakRSSBytes = f.init.RU.Maxrss * 1024
	}
	v := settle(outcomeOf(f, r.Outputs))
	r.Status, r.ExitCode, r.Signal, r.SetupError, r.CompletionNotes = v.Status, v.ExitCode, v.Signal, v.SetupError, v.Notes
	r.AnalysisStatus, r.AnalysisExitCode = v.AnalysisStatus, v.AnalysisExitCode
	r.Limits = r.Limits.Unheld(f.plan.Unheld)
	if note := jail.UnheldNote(f.plan.Unheld); note != "" {
		r.CompletionNotes += " " + note
	}
	if note := hookNotes(f.hook); note != "" {
		r.CompletionNotes += " " + note
	}
	r.Egress = egressReport(f.plan, f.hook.Egress) // egress_report.go
	for _, e := range slices.Concat(f.out.deliveryErrs, f.stdioLost) {
		r.DeliveryFailed(e)
	}
	return r
}

func newReport(s *jail.Spec, t0 time.Time) *report.Report {
	return &report.Report{
		Schema:  report.ReportSchema,
		ID:      s.ID,
		Command: s.Command,
		Started: t0.UTC(),
		RunDir:  s.RunDir(),
		Kept:    s.Keep,
		Outputs: []report.Output{},
		Limits:  report.LimitsReport{Profile: s.Profile, Values: s.Limits},
		Phases:  []report.Phase{},
	}
}

// enforced is the report's enforced: the plan's static part and what the
// init found applying it once the target started (its Started); before that,
// only the promises and the identity the run was decided on. cg is the
// leaf the supervisor made, which is not in the plan.
func enforced(p *jail.Plan, started *protocol.Started, cg *report.CgroupReport) report.EnforcedReport {
	var e report.EnforcedReport
	if started != nil {
		e = p.Enforced
		jail.RecordSecurity(&e, p.Init.Security.Landlock, started)
	} else {
		e.Promises, e.Degraded, e.Identity = p.Enforced.Promises, p.Enforced.Degraded, p.Enforced.Identity
	}
	e.Cgroup = cg
	return e
}

// outcomeOf gathers what decides how the run ended; outs are the
// report's outputs.
func outcomeOf(f runFacts, outs []report.Output) outcome {
	s := f.spec
	o := outcome{
		Started: f.end.started != nil, Failed: f.failure(), TimedOut: f.sigs.TimedOut, Cancelled: f.sigs.Cancelled,
		CancelSig: f.sigs.CancelSig, PostRunCancelled: f.sigs.PostRunCancelled, Over: f.out.over, Code: -1, DiskFull: f.out.diskFull,
		Wall: time.Duration(f.wall * float64(time.Second)), Timeout: s.Limits.Duration(limits.Timeout), Grace: s.Limits.Duration(limits.Grace),
		Memory: s.Limits.Int(limits.Memory), PIDs: s.Limits.Int(limits.PIDs), Disk: s.Limits.Int(limits.Disk),
		Collected: f.out.collectedTo, Truncated: f.stdio.Truncations(),
	}
	if f.stdio.Stderr != nil {
		o.LastWords = lastWords(f.stdio.Stderr)
	}
	o.Outputs, o.Delivered = report.OutputFiles(outs)
	if s.Keep {
		o.Kept = s.RunDir()
	}
	if f.usage != nil {
		o.OOMKills, o.PIDsHits = f.usage.OOMKills, f.usage.PIDsLimitHits
	}
	if m := f.end.exited; m != nil {
		o.Code, o.Signal = m.ExitCode, m.Signal
	} else if ws := f.init.WS; f.init.OK {
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
