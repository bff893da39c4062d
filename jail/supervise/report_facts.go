package supervise

import (
	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// The facilities' values as the report gives them: cgroupfs and runfiles
// keep plain types, and jail/report owns every JSON name (and its schema),
// so the mapping is here, where the report is assembled, field by field.

// reportUsage is the leaf's counters in the report; nil for none read.
func reportUsage(u *cgroupfs.Usage) *report.CgroupUsage {
	if u == nil {
		return nil
	}
	return &report.CgroupUsage{
		PeakMemoryBytes: u.PeakMemoryBytes, OOMKills: u.OOMKills, MemoryLimitHits: u.MemoryLimitHits, PIDsLimitHits: u.PIDsLimitHits,
		CPUUsageUsec: u.CPUUsageUsec, CPUUserUsec: u.CPUUserUsec, CPUSystemUsec: u.CPUSystemUsec,
		NrPeriods: u.NrPeriods, NrThrottled: u.NrThrottled, ThrottledUsec: u.ThrottledUsec,
	}
}

// reportOutputs is the listing of the run directory in the report: never
// nil (the report's outputs is a list, [] when empty).
func reportOutputs(outs []runfiles.Output) []report.Output {
	r := make([]report.Output, len(outs))
	for i, o := range outs {
		r[i] = report.Output{
			Path: o.Path, PathB64: o.PathB64, Type: report.OutputType(o.Type), Size: o.Size,
			SHA256: o.SHA256, Target: o.Target, TargetB64: o.TargetB64, Skipped: o.Skipped,
		}
	}
	return r
}
