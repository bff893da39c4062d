package runfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSweepDue: the runs that start one after another in one tmp-root,
// each at its own time: sweepDue(root, what, at) = got, want w. A run
// sweeps when no run has swept the same kind of leftover there within
// SweepInterval, and whenever the stamp says nothing it can trust.
func TestSweepDue(t *testing.T) {
	root := t.TempDir()
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		what string
		at   time.Time
		want bool
		why  string
	}{
		{"files", t0, true, "no stamp yet"},
		{"files", t0, false, "swept at this very moment"},
		{"files", t0.Add(SweepInterval / 2), false, "swept half an interval ago"},
		{"leaves", t0.Add(SweepInterval / 2), true, "the leaves have their own stamp"},
		{"files", t0.Add(SweepInterval - 1), false, "swept just under an interval ago"},
		{"files", t0.Add(SweepInterval), true, "swept an interval ago"},
		{"files", t0.Add(SweepInterval + 1), false, "the run before stamped it again"},
		{"leaves", t0.Add(SweepInterval), false, "leaves swept half an interval ago"},
		{"files", t0, true, "a stamp in the future (the clock was set back)"},
		{"files", t0.Add(1), false, "stamped again by the run before"},
	}
	for i, s := range steps {
		if got := sweepDue(root, s.what, s.at); got != s.want {
			t.Errorf("step %d (%s): sweepDue(root, %q, t0%+v) = %v, want %v", i, s.why, s.what, s.at.Sub(t0), got, s.want)
		}
	}
}

// TestSweepDueFailsSafe: when the stamp cannot be read, trusted or kept,
// a run sweeps: sweepDue(root, "files", t) = got, want true, for each of
// the runs (where no stamp can be kept, every run).
func TestSweepDueFailsSafe(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	garbage := t.TempDir()
	if err := unix.Lsetxattr(garbage, sweepStamp("files"), []byte("not a time"), 0); err != nil {
		t.Fatalf("set a garbage stamp on %s: %v", garbage, err)
	}
	roots := []struct {
		root, why string
		runs      int
	}{
		{"", "no tmp-root", 2},
		{filepath.Join(t.TempDir(), "missing"), "a tmp-root that does not exist", 2},
		{"/proc", "a file system without extended attributes", 2},
		{garbage, "a stamp that is not a time", 1},
	}
	for _, r := range roots {
		for i := range r.runs {
			if got := sweepDue(r.root, "files", t0.Add(time.Duration(i))); !got {
				t.Errorf("%s: sweepDue(%q, \"files\", t0+%d) = false, want true", r.why, r.root, i)
			}
		}
	}
	if os.Geteuid() == 0 && !strings.HasPrefix(sweepStamp("files"), "trusted.") {
		t.Errorf("as root sweepStamp(\"files\") = %q, want a trusted.* attribute only root can set", sweepStamp("files"))
	}
}
