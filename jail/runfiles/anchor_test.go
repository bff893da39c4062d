package runfiles

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAnchor: a run directory made ahead is a locked .new directory a
// sweep leaves alone; Claim names it for its run, in its own tmp-root or
// another of its file system, as CreateDir would have made it (0700,
// marked, locked, nothing else left); a name a live run holds is ErrBusy,
// and the anchor is gone; Discard removes one never claimed.
func TestAnchor(t *testing.T) {
	for _, c := range []struct {
		name    string
		other   bool  // claim into another tmp-root
		held    bool  // a live run holds the ID
		discard bool  // discarded, never claimed
		want    error // Claim's
	}{
		{name: "own tmp-root"},
		{name: "another tmp-root", other: true},
		{name: "ID held", held: true, want: ErrBusy},
		{name: "discarded", discard: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			root, dest := filepath.Join(base, "a"), filepath.Join(base, "a")
			if c.other {
				dest = filepath.Join(base, "b")
			}
			for _, d := range []string{root, dest} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			a, err := PrepareAnchor(root, "slot-1", os.Getuid(), os.Getgid())
			if err != nil {
				t.Fatalf("PrepareAnchor = %v", err)
			}
			if left, err := sweepTmpRoot(root); err != nil || len(list(t, root)) != 1 {
				t.Fatalf("a sweep beside a live anchor: %v, %v; tmp-root holds %q, want the anchor kept", left, err, list(t, root))
			}
			if c.held {
				live := newDir(t, dest, "r1")
				defer live.Close()
			}
			if c.discard {
				if err := a.Discard(); err != nil || len(list(t, root)) != 0 {
					t.Fatalf("Discard = %v; tmp-root holds %q, want nothing", err, list(t, root))
				}
				return
			}
			d, _, err := a.Claim(dest, "r1", nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("Claim(%s, r1) = %v, want %v", dest, err, c.want)
			}
			if err != nil {
				if names := list(t, root); len(names) != 1 || names[0] != DirPrefix+"r1" {
					t.Errorf("after a refused Claim, tmp-root holds %q, want only the live run's", names)
				}
				return
			}
			defer d.Close()
			if want := filepath.Join(dest, DirPrefix+"r1"); d.Path() != want {
				t.Errorf("Path() = %s, want %s", d.Path(), want)
			}
			if names := list(t, dest); len(names) != 1 || names[0] != DirPrefix+"r1" {
				t.Errorf("tmp-root %s holds %q, want only the run directory", dest, names)
			}
			if c.other && len(list(t, root)) != 0 {
				t.Errorf("the anchor's tmp-root holds %q, want nothing", list(t, root))
			}
			fd, err := unix.Open(d.Path(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if !hasMark(fd) {
				t.Errorf("claimed run directory has no %s mark, want one", runDirMark())
			}
			if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
				t.Errorf("flock of a claimed run directory = %v, want EWOULDBLOCK (held)", err)
			}
			if err := a.Discard(); err != nil {
				t.Errorf("Discard of a claimed anchor = %v, want nothing done", err)
			}
			if _, _, err := a.Claim(dest, "r2", nil); err == nil {
				t.Errorf("a second Claim succeeded, want an error")
			}
		})
	}
}
