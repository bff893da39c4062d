package jail

import (
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// OutputBudget bounds the trusted side's work on what an analysis leaves
// in its run directory (runfiles.Budget says how each field counts). A
// field of 0 is switched off (written none on the command line and in
// profiles; a 0 given there is refused, as for cpus and pids: a budget's
// absence must be written out). The rules of its four fields are rows of
// jail/limits' table.
type OutputBudget = runfiles.Budget

func outputLimitsReport(b OutputBudget) report.OutputLimitsReport {
	return report.OutputLimitsReport{Entries: b.Entries, Bytes: b.Bytes, FileBytes: b.FileBytes, TimeSeconds: b.Time.Seconds()}
}

// OverBudget says which output budget a run went over (runfiles.OverBudget).
type OverBudget = runfiles.OverBudget
