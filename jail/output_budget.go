package jail

import (
	"fmt"
	"strconv"
	"time"
)

// OutputBudget bounds the trusted side's work on what an analysis leaves
// in its run directory: everything there was made by untrusted code, and
// listing, hashing and copying it is done by the supervisor, outside every
// cgroup, on the analysis' behalf. A field of 0 is switched off (written
// none on the command line and in profiles; a 0 given there is refused, as
// for cpus and pids: a budget's absence must be written out). The rules of
// its four fields are rows of jail/limits' table.
//
// Sizes are apparent sizes (st_size): what is read, hashed, copied and
// committed. A sparse file counts at its apparent size, and a file linked
// n times counts n times: neither is a way around the budget.
type OutputBudget struct {
	// Entries bounds the listing: each entry counts 1, and 1 more for
	// every full pathWeight bytes of its path and of a link's target, so
	// that the report and the supervisor's memory are bounded by Entries
	// alone (a chain of deep directories, or links with long targets, cost
	// what their names cost to write out).
	Entries int64
	// Bytes bounds the bytes hashed (and copied by --collect, --keep) in
	// all; FileBytes those of one file.
	Bytes     int64
	FileBytes int64
	// Time bounds the wall time of the post-run work as a whole: listing,
	// hashing, copying.
	Time time.Duration
}

// pathWeight is how many bytes of path count as one more entry.
const pathWeight = 256

// entryCost is what an entry of path p counts against Entries.
func entryCost(pathLen int) int64 { return 1 + int64(pathLen/pathWeight) }

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

func (b OutputBudget) report() OutputLimitsReport {
	return OutputLimitsReport{Entries: b.Entries, Bytes: b.Bytes, FileBytes: b.FileBytes, TimeSeconds: b.Time.Seconds()}
}

// OverBudget says which output budget a run went over, at which entry.
type OverBudget struct {
	Budget string // entries, bytes, file_bytes, time
	Limit  string // the budget, as the sentence gives it
	Path   string // the entry that crossed it ("" for time with no entry)
	Size   int64  // its apparent size (for time: -1)
}

func (o *OverBudget) String() string {
	what := map[string]string{
		"entries":    "entry budget",
		"bytes":      "budget of bytes hashed and copied in all",
		"file_bytes": "budget of bytes for one file",
		"time":       "post-run time budget",
	}[o.Budget]
	s := fmt.Sprintf("over the %s (%s)", what, o.Limit)
	if o.Path != "" {
		s += fmt.Sprintf(" at %s", strconv.Quote(o.Path))
		if o.Size >= 0 {
			s += fmt.Sprintf(" (%d bytes)", o.Size)
		}
	}
	return s
}
