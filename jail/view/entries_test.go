package view

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDirLookKept: a look at a directory's entries is made again only
// when the directory's stamp changes (an entry made, removed, renamed,
// or a link made in its place), and every time when its times are too
// recent to trust or the look says it depends on more than them.
func TestDirLookKept(t *testing.T) {
	dir := t.TempDir()
	names := []string{"usr", "bin", "lib64"}
	keep := true
	found := func() ([]string, bool) {
		var out []string
		for _, n := range names {
			if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil {
				out = append(out, n+":"+fi.Mode().Type().String())
			}
		}
		return out, keep
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	d := &dirLook[string]{dirs: []string{dir}, now: later, look: found}
	mkdir := func(n string) func() {
		return func() {
			if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name   string
		change func()
		looks  int
	}{
		{"first", mkdir("usr"), 1},
		{"the same", func() {}, 1},
		{"an entry made", mkdir("bin"), 2},
		{"kept", func() {}, 2},
		{"a directory replaced by a link", func() {
			os.Remove(filepath.Join(dir, "bin"))
			if err := os.Symlink("usr/bin", filepath.Join(dir, "bin")); err != nil {
				t.Fatal(err)
			}
		}, 3},
		{"a link made again to another target", func() {
			tmp := filepath.Join(dir, "bin.new")
			if err := os.Symlink("usr/sbin", tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(dir, "bin")); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"an entry removed", func() { os.Remove(filepath.Join(dir, "bin")) }, 5},
		{"kept again", func() {}, 5},
		{"the look may not be kept", func() { keep = false; mkdir("lib64")() }, 6},
		{"so it is made each time", func() {}, 7},
		{"keepable again", func() { keep = true }, 8},
		{"kept once more", func() {}, 8},
		{"times too recent: made", func() { d.now = time.Now; os.Remove(filepath.Join(dir, "lib64")) }, 9},
		{"and made again", func() {}, 10},
	}
	for _, s := range steps {
		s.change()
		got := d.get()
		want, _ := found()
		if !slices.Equal(got, want) {
			t.Errorf("%s: get() = %q, want %q", s.name, got, want)
		}
		if d.looks != s.looks {
			t.Errorf("%s: looked %d times, want %d", s.name, d.looks, s.looks)
		}
		if len(got) > 0 {
			got[0] = "changed by the caller" // each call's own copy
		}
	}
}

// TestHostLooksKept: the system entries and devices LookHost takes are,
// kept or not, what looking again finds.
func TestHostLooksKept(t *testing.T) {
	var devs []string
	for _, d := range DevicesRW {
		if _, err := os.Stat(d); err == nil {
			devs = append(devs, d)
		}
	}
	var etc []string
	for _, f := range append(slices.Clone(EtcReadable), etcPython.paths()...) {
		if _, err := os.Stat(f); err == nil {
			etc = append(etc, f)
		}
	}
	for i := range 3 {
		if got := etcFound(); !slices.Equal(got, etc) {
			t.Errorf("etcFound() (call %d) = %q, want %q", i+1, got, etc)
		}
		if got, want := systemEntries.get(), hostSystemEntries(); !slices.Equal(got, want) {
			t.Errorf("systemEntries.get() (call %d) = %v, want %v", i+1, got, want)
		}
		if got := devices.get(); !slices.Equal(got, devs) {
			t.Errorf("devices.get() (call %d) = %q, want %q", i+1, got, devs)
		}
	}
}

// TestEntriesFollowLinks: entries kept by their directories' stamps are
// there as long as those stay, but a link among them is followed at each
// call: its target, in a directory of its own, may go with no change to
// the link's; an entry in a subdirectory changes with the subdirectory.
func TestEntriesFollowLinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	etc, ssl := filepath.Join(dir, "etc"), filepath.Join(dir, "etc", "ssl")
	if err := os.MkdirAll(ssl, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(elsewhere, "UTC")
	for _, f := range []string{filepath.Join(etc, "passwd"), target} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, filepath.Join(etc, "localtime")); err != nil {
		t.Fatal(err)
	}
	paths := []string{filepath.Join(etc, "passwd"), filepath.Join(etc, "localtime"), filepath.Join(ssl, "certs")}
	d := &dirLook[etcEntry]{dirs: parents(paths), now: func() time.Time { return time.Now().Add(time.Hour) },
		look: lookEntries(func() []string { return paths })}
	steps := []struct {
		name   string
		change func()
		want   []string
		looks  int
	}{
		{"first", func() {}, paths[:2], 1},
		{"kept", func() {}, paths[:2], 1},
		{"the link's target gone", func() { os.Remove(target) }, paths[:1], 1},
		{"back", func() { os.WriteFile(target, nil, 0o644) }, paths[:2], 1},
		{"an entry made in the subdirectory", func() { os.Mkdir(paths[2], 0o755) }, paths, 2},
		{"kept with it", func() {}, paths, 2},
		{"the subdirectory replaced", func() {
			tmp := filepath.Join(etc, "ssl.new")
			os.Mkdir(tmp, 0o755)
			if err := os.Rename(tmp, ssl); err != nil {
				os.RemoveAll(ssl)
				os.Rename(tmp, ssl)
			}
		}, paths[:2], 3},
	}
	for _, s := range steps {
		s.change()
		if got := followLinks(d.get()); !slices.Equal(got, s.want) {
			t.Errorf("%s: followLinks(get()) = %q, want %q", s.name, got, s.want)
		}
		if d.looks != s.looks {
			t.Errorf("%s: looked %d times, want %d", s.name, d.looks, s.looks)
		}
	}
}
