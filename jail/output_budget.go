package jail

import (
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// OutputBudget bounds the trusted side's work on what an analysis leaves
// in its run directory (runfiles.Budget says how each field counts). A
// field of 0 is switched off (written none on the command line and in
// profiles; a 0 given there is refused, as for cpus and pids: a budget's
// absence must be written out). The rules of its four fields are rows of
// jail/limits' table.
type OutputBudget = runfiles.Budget

// outputBudget is s's output budget, from its rows of the table.
func (s *Spec) outputBudget() OutputBudget {
	return OutputBudget{
		Entries: s.Limits.Int(limits.OutputEntries), Bytes: s.Limits.Int(limits.OutputBytes),
		FileBytes: s.Limits.Int(limits.OutputFileBytes), Time: s.Limits.Duration(limits.OutputTime),
		Ignore: s.OutputIgnore,
	}
}

// OverBudget says which output budget a run went over (runfiles.OverBudget).
type OverBudget = runfiles.OverBudget
