package jail

import (
	"github.com/scidex/scidex-jail/jail/runfiles"

	"fmt"
	"strconv"
	"strings"
	"time"
)

// OutputBudget bounds the trusted side's work on what an analysis leaves
// in its run directory: everything there was made by untrusted code, and
// listing, hashing and copying it is done by the supervisor, outside every
// cgroup, on the analysis' behalf. A field of 0 is switched off (written
// none on the command line and in profiles; a 0 given there is refused, as
// for cpus and pids: a budget's absence must be written out).
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

// defaultOutputBudget is the built-in profiles' budget, for a disk budget
// of disk: no honest analysis whose run directory holds at most disk bytes
// stores more than disk bytes of files, so the byte budgets are the disk
// budget; ten thousand entries and three minutes are far beyond what an
// honest analysis leaves and what hashing a disk budget's worth takes.
func defaultOutputBudget(disk int64) OutputBudget {
	return OutputBudget{Entries: 10_000, Bytes: disk, FileBytes: disk, Time: 3 * time.Minute}
}

// MaxOutputEntries bounds the entry budget: at 20 KiB a report entry at
// most, a report of this many is 20 GiB, which nothing should hold.
const MaxOutputEntries = 1 << 20

// ParseOutputEntries reads an entry budget: a whole number, or none.
func ParseOutputEntries(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit {
		return 0, nil
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number: give a budget such as 10000, or none for no budget", s)
	}
	if v == 0 {
		return 0, fmt.Errorf("0 entries is refused: give a budget such as 10000, or write none for no budget")
	}
	return v, checkOutputEntries(v)
}

func checkOutputEntries(v int64) error {
	switch {
	case v < 0:
		return fmt.Errorf("%d is negative: give a budget such as 10000, or none for no budget", v)
	case v > MaxOutputEntries:
		return fmt.Errorf("%d is above %d: give e.g. 10000, or none for no budget", v, MaxOutputEntries)
	}
	return nil
}

// ParseOutputSize reads a byte budget for outputs: a size (ParseSize), or
// none; 0 is refused.
func ParseOutputSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit {
		return 0, nil
	}
	v, err := ParseSize(t)
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return 0, fmt.Errorf("0 bytes is refused: give a budget such as 1G, or write none for no budget")
	}
	return v, nil
}

// ParseOutputTime reads the post-run wall budget: a duration, or none; 0
// is refused.
func ParseOutputTime(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit {
		return 0, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: give e.g. 3m or 90s, or none for no budget", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: give a positive duration such as 3m, or write none for no budget", t)
	}
	return d, nil
}

// check validates a budget, naming the field as the caller spells it.
func (b OutputBudget) check(name func(field string) string) error {
	if err := checkOutputEntries(b.Entries); err != nil {
		return fmt.Errorf("%s %w", name("entries"), err)
	}
	if b.Bytes < 0 || b.FileBytes < 0 || b.Time < 0 {
		return fmt.Errorf("%s, %s and %s must not be negative", name("bytes"), name("file_bytes"), name("time"))
	}
	return nil
}

// off names the output budgets switched off, for limits.none.
func (b OutputBudget) off() []string {
	var out []string
	for _, l := range []struct {
		name string
		off  bool
	}{{"output_entries", b.Entries == 0}, {"output_bytes", b.Bytes == 0}, {"output_file_bytes", b.FileBytes == 0}, {"output_time", b.Time == 0}} {
		if l.off {
			out = append(out, l.name)
		}
	}
	return out
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

// OverBudget says which output budget a run went over (runfiles.OverBudget).
type OverBudget = runfiles.OverBudget
