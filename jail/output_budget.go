package jail

import (
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// OutputBudget bounds the trusted side's work on what an analysis leaves
// in its run directory (runfiles.Budget says how each field counts). A
// field of 0 is switched off (written none on the command line and in
// profiles; a 0 given there is refused, as for cpus and pids: a budget's
// absence must be written out). The rules of its four fields are rows of
// jail/limits' table.
type OutputBudget = runfiles.Budget

// OutputLimitsReport is the output budget as the report gives it (0 = off,
// named in limits.none).
type OutputLimitsReport struct {
	Entries     int64   `json:"entries"`
	Bytes       int64   `json:"bytes"`
	FileBytes   int64   `json:"file_bytes"`
	TimeSeconds float64 `json:"time_seconds"`
}

func outputLimitsReport(b OutputBudget) OutputLimitsReport {
	return OutputLimitsReport{Entries: b.Entries, Bytes: b.Bytes, FileBytes: b.FileBytes, TimeSeconds: b.Time.Seconds()}
}

// OverBudget says which output budget a run went over (runfiles.OverBudget).
type OverBudget = runfiles.OverBudget
