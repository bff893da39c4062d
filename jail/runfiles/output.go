package runfiles

import (
	"fmt"
	"strconv"
	"time"
)

// OutputType is what kind of entry an output is. The report's JSON writes
// it as its name; a reader must take a kind it does not know as "other".
type OutputType string

const (
	OutputFile    OutputType = "file"    // a regular file: sized, hashed, copied by Collect
	OutputDir     OutputType = "dir"     // a directory: listed, never copied as such
	OutputSymlink OutputType = "symlink" // a symbolic link: its target named, never followed
	OutputOther   OutputType = "other"   // a FIFO, socket or device: named, never opened
)

// Budget bounds the trusted side's work on what an analysis left in its
// run directory: everything there was made by untrusted code, and listing,
// hashing and copying it is done outside every cgroup, on the analysis'
// behalf. A field of 0 is switched off.
//
// Sizes are apparent sizes (st_size): what is read, hashed, copied and
// committed. A sparse file counts at its apparent size, and a file linked
// n times counts n times: neither is a way around the budget.
type Budget struct {
	// Entries bounds the listing: each entry counts 1, and 1 more for
	// every full pathWeight bytes of its path and of a link's target
	// (entryCost), so that the report and the supervisor's memory are
	// bounded by Entries alone.
	Entries int64
	// Bytes bounds the bytes hashed (and copied by Collect) in all;
	// FileBytes those of one file.
	Bytes     int64
	FileBytes int64
	// Time bounds the wall time of the post-run work as a whole: listing,
	// hashing, copying.
	Time time.Duration
	// Ignore are names (DefaultIgnore: the caches tools keep in the
	// working directory) the listing skips at any depth: not outputs,
	// not counted against Entries.
	Ignore []string
	// Links are the jail's own links at the top of the run directory
	// (./data), by name: an entry of that name that is still a link to
	// that target is not an output, and not counted.
	Links map[string]string
}

// pathWeight is how many bytes of path count as one more entry.
const pathWeight = 256

// entryCost is what an entry of path p counts against Entries: 1, and 1
// more for every full pathWeight bytes of its path and of a link's
// target, so that the report and the supervisor's memory are bounded by
// Entries alone.
func entryCost(pathLen int) int64 { return 1 + int64(pathLen/pathWeight) }

// Output is one entry left in the run directory. Names are bytes on Linux;
// one that is not UTF-8 has U+FFFD for each bad byte in Path and, exactly,
// base64-encoded in PathB64 (the same for link targets), for a reader
// that takes UTF-8 text only (the report, jail/report's Output).
type Output struct {
	Path      string // relative to the run directory
	PathB64   string
	Type      OutputType
	Size      int64
	SHA256    string
	Target    string // symlinks: never followed
	TargetB64 string
	// Skipped says why a file was not hashed or copied, or a directory
	// not listed (in full): over a budget, unreadable, changed while it
	// was read, the post-run work stopped. Empty: it was.
	Skipped string

	overBudget bool // skipped by a budget, not by an error
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
