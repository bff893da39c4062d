package runfiles

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func newDir(t *testing.T, root, id string) *Dir {
	t.Helper()
	d, stale, err := CreateDir(root, id, os.Getuid(), os.Getgid())
	if err != nil {
		t.Fatalf("CreateDir(%s, %s) = %v", root, id, err)
	}
	if stale {
		t.Errorf("CreateDir(%s, %s) removed a stale directory, want a fresh one", root, id)
	}
	return d
}

// TestCreateDir: a fresh run directory is 0700, marked, locked for as long
// as its Dir lives, and nothing else is left in the tmp-root.
func TestCreateDir(t *testing.T) {
	root := t.TempDir()
	d := newDir(t, root, "a1")
	defer d.Close()
	if want := filepath.Join(root, DirPrefix+"a1"); d.Path() != want {
		t.Errorf("Path() = %s, want %s", d.Path(), want)
	}
	fi, err := os.Lstat(d.Path())
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("run directory = %v, %v; want a directory of mode 0700", fi, err)
	}
	if names := list(t, root); len(names) != 1 {
		t.Errorf("tmp-root holds %q, want only the run directory", names)
	}
	fd, err := unix.Open(d.Path(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !hasMark(fd) {
		t.Errorf("run directory has no %s mark, want one (a sweep would not know it)", runDirMark())
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("flock of a live run directory = %v, want EWOULDBLOCK (held)", err)
	}
}

// TestCreateDirBusy: a second run of a live ID is refused with ErrBusy
// and leaves nothing; once the first is gone, the ID is free again.
func TestCreateDirBusy(t *testing.T) {
	root := t.TempDir()
	d := newDir(t, root, "a1")
	if _, _, err := CreateDir(root, "a1", os.Getuid(), os.Getgid()); !errors.Is(err, ErrBusy) {
		t.Fatalf("CreateDir of a live ID = %v, want ErrBusy", err)
	}
	if names := list(t, root); len(names) != 1 {
		t.Errorf("tmp-root after a refused run holds %q, want only the live run's directory", names)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if names := list(t, root); len(names) != 0 {
		t.Errorf("tmp-root after Remove holds %q, want nothing", names)
	}
	newDir(t, root, "a1").Remove()
}

// TestCreateDirStale: a dead run's directory of the same ID (unlocked) is
// replaced, what it held is gone, and CreateDir says it removed one.
func TestCreateDirStale(t *testing.T) {
	root := t.TempDir()
	d := newDir(t, root, "a1")
	if err := os.WriteFile(filepath.Join(d.Path(), "old"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Close() // the jail died: the lock is gone, the directory stays
	d2, stale, err := CreateDir(root, "a1", os.Getuid(), os.Getgid())
	if err != nil || !stale {
		t.Fatalf("CreateDir over a dead run's directory = %v, stale %v; want it replaced", err, stale)
	}
	defer d2.Remove()
	if _, err := os.Lstat(filepath.Join(d2.Path(), "old")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead run's file is still there (%v), want a fresh directory", err)
	}
}

// TestCreateDirPlanted: what someone else planted at the run directory's
// name is refused (ErrBadSpec, exit 125), never used, never followed, and
// left as it was.
func TestCreateDirPlanted(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, path, target string)
	}{
		{"symlink to a directory", func(t *testing.T, path, target string) {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"regular file", func(t *testing.T, path, _ string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, target := t.TempDir(), t.TempDir()
			path := filepath.Join(root, DirPrefix+"a1")
			c.plant(t, path, target)
			_, _, err := CreateDir(root, "a1", os.Getuid(), os.Getgid())
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("CreateDir over a planted %s = %v, want ErrBadSpec", c.name, err)
			}
			if names := list(t, root); len(names) != 1 {
				t.Errorf("tmp-root holds %q, want only what was planted", names)
			}
			if names := list(t, target); len(names) != 0 {
				t.Errorf("the link's target holds %q, want it untouched", names)
			}
		})
	}
}

// TestDirKeep: a kept run directory stays, unmarked, so no sweep takes it.
func TestDirKeep(t *testing.T) {
	root := t.TempDir()
	d := newDir(t, root, "a1")
	if err := d.Keep(); err != nil {
		t.Fatal(err)
	}
	if removed, err := Sweep(root, nil); err != nil || len(removed) != 0 {
		t.Errorf("Sweep after Keep = %q, %v; want the kept directory left alone", removed, err)
	}
	if _, err := os.Lstat(d.Path()); err != nil {
		t.Errorf("kept run directory: %v, want it there", err)
	}
}

// TestRemoveNeverFollows: Remove takes a link the analysis planted as a
// link; its target, outside, is untouched.
func TestRemoveNeverFollows(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDir(t, root, "a1")
	if err := os.Symlink(outside, filepath.Join(d.Path(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "precious")); err != nil {
		t.Errorf("the link's target lost its file: %v", err)
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
