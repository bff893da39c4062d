package jail

import (
	"github.com/scidex/scidex-jail/jail/runfiles"

	"time"
)

// OutputBudget bounds the trusted side's work on what an analysis leaves
// in its run directory (runfiles.Budget says how each field counts). A
// field of 0 is switched off (written none on the command line and in
// profiles; a 0 given there is refused, as for cpus and pids: a budget's
// absence must be written out). The rules of its four fields are rows of
// jail/limits' table.
type OutputBudget = runfiles.Budget

// defaultOutputBudget is the built-in profiles' budget, for a disk budget
// of disk: no honest analysis whose run directory holds at most disk bytes
// stores more than disk bytes of files, so the byte budgets are the disk
// budget; ten thousand entries and three minutes are far beyond what an
// honest analysis leaves and what hashing a disk budget's worth takes.
func defaultOutputBudget(disk int64) OutputBudget {
	return OutputBudget{Entries: 10_000, Bytes: disk, FileBytes: disk, Time: 3 * time.Minute}
}

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
