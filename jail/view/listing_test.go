package view

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestListingKeptUntilChanged: a listing is read again after every change
// of its directory's entries (added, removed, renamed, the directory
// replaced), and only then.
func TestListingKeptUntilChanged(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "etc")
	mkdirs(t, dir, "python3", "python3.11", "hosts")
	// An hour ahead: the directory's times are old enough for a listing
	// to be kept (stamp.Racy), as /etc's are on a host.
	l := &listing{dir: dir, prefix: "python3", now: func() time.Time { return time.Now().Add(time.Hour) }}
	// The kernel's timestamps tick every few milliseconds: each change
	// is given its own time, as a change made after the listing has.
	step := time.Now().Add(-time.Hour)
	changed := func() {
		t.Helper()
		step = step.Add(time.Second)
		if err := os.Chtimes(dir, step, step); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name   string
		change func()
		want   []string
		reads  int
	}{
		{"first", func() {}, []string{"python3", "python3.11"}, 1},
		{"unchanged", func() {}, []string{"python3", "python3.11"}, 1},
		{"added", func() { mkdirs(t, dir, "python3.12"); changed() }, []string{"python3", "python3.11", "python3.12"}, 2},
		{"removed", func() { rm(t, dir, "python3"); changed() }, []string{"python3.11", "python3.12"}, 3},
		{"renamed", func() { mv(t, filepath.Join(dir, "python3.11"), filepath.Join(dir, "python3.13")); changed() }, []string{"python3.12", "python3.13"}, 4},
		{"unchanged again", func() {}, []string{"python3.12", "python3.13"}, 4},
		{"replaced", func() {
			other := filepath.Join(parent, "new")
			mkdirs(t, other, "python3.14")
			mv(t, dir, filepath.Join(parent, "old"))
			mv(t, other, dir)
		}, []string{"python3.14"}, 5},
	}
	for _, s := range steps {
		s.change()
		got := l.paths()
		want := joinAll(dir, s.want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: paths() = %q, want %q", s.name, got, want)
		}
		if l.reads != s.reads {
			t.Errorf("%s: listings read = %d, want %d", s.name, l.reads, s.reads)
		}
	}
}

// TestListingRacy: a directory changed within stamp.Racy of the listing
// (here: just made) is listed again every time, however unchanged.
func TestListingRacy(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir, "python3")
	l := &listing{dir: dir, prefix: "python3", now: time.Now}
	for i := 1; i <= 3; i++ {
		if got, want := l.paths(), joinAll(dir, []string{"python3"}); !slices.Equal(got, want) {
			t.Fatalf("paths() = %q, want %q", got, want)
		}
		if l.reads != i {
			t.Errorf("after %d calls: listings read = %d, want %d", i, l.reads, i)
		}
	}
}

// TestEtcPythonIsGlob: the kept listing of /etc is the glob it replaced.
func TestEtcPythonIsGlob(t *testing.T) {
	want, _ := filepath.Glob("/etc/python3*")
	for i := range 2 {
		if got := etcPython.paths(); !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("etcPython.paths() (call %d) = %q, want %q", i+1, got, want)
		}
	}
}

func mkdirs(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range append([]string{""}, names...) {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func rm(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func mv(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
