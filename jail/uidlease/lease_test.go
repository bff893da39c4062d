package uidlease

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// leaseDir is a lease directory of the test's own, owned by whoever runs
// it (CI's unit tests run as nobody).
func leaseDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "uids")
}

func TestAcquireTakesEachIDOnce(t *testing.T) {
	dir, me := leaseDir(t), uint32(os.Geteuid())
	r := Range{5000, 5002}
	held := map[int]bool{}
	var leases []*Lease
	for range r.Size() {
		l, err := acquire(dir, me, r)
		if err != nil {
			t.Fatalf("acquire(%s) with %d held = %v, want a lease", r, len(leases), err)
		}
		if held[l.ID()] || !r.Contains(uint64(l.ID())) {
			t.Fatalf("acquire(%s) = %d, want a free id of the range (held %v)", r, l.ID(), held)
		}
		held[l.ID()] = true
		leases = append(leases, l)
	}
	if l, err := acquire(dir, me, r); !errors.Is(err, ErrFull) {
		t.Fatalf("acquire(%s) with every id held = %v, %v; want ErrFull", r, l, err)
	}
	leases[1].Release()
	l, err := acquire(dir, me, r)
	if err != nil || l.ID() != leases[1].ID() {
		t.Fatalf("acquire(%s) after %d was released = %v, %v; want %d", r, leases[1].ID(), l, err, leases[1].ID())
	}
	leases[1] = l
	for _, l := range leases {
		l.Release()
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("lock files left after every release: %v, want none", names)
	}
}

// TestAcquireAfterHolderDied: a lock file left by a holder that did not
// release (killed) is taken by the next lease of its id.
func TestAcquireAfterHolderDied(t *testing.T) {
	dir, me := leaseDir(t), uint32(os.Geteuid())
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "7000"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := acquire(dir, me, Range{7000, 7000})
	if err != nil || l.ID() != 7000 {
		t.Fatalf("acquire(7000-7000) over a stale lock file = %v, %v; want 7000", l, err)
	}
	l.Release()
}

func TestOpenDirRefuses(t *testing.T) {
	me := uint32(os.Geteuid())
	for _, c := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"a link", func(t *testing.T, path string) {
			if err := os.Symlink(t.TempDir(), path); err != nil {
				t.Fatal(err)
			}
		}},
		{"writable by others", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"another owner", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := leaseDir(t)
			c.make(t, path)
			owner := me
			if c.name == "another owner" {
				owner = me + 1
			}
			if l, err := acquire(path, owner, Range{1, 1}); err == nil {
				l.Release()
				t.Errorf("acquire in %s (%s) = lease %d, want refused", path, c.name, l.ID())
			}
		})
	}
}

func TestReleaseNil(t *testing.T) {
	var l *Lease
	l.Release() // a run with fixed ids has no lease
}

// TestSweep: gc removes the lock files of killed jails and leaves a held
// one and anything not a lock file.
func TestSweep(t *testing.T) {
	dir, me := leaseDir(t), uint32(os.Geteuid())
	held, err := acquire(dir, me, Range{8000, 8000})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	for _, name := range []string{"8001", "8002", "notes"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := sweep(dir, me)
	want := []string{filepath.Join(dir, "8001"), filepath.Join(dir, "8002")}
	if err != nil || !slices.Equal(removed, want) {
		t.Errorf("sweep(%s) = %v, %v; want %v", dir, removed, err, want)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 2 || names[0].Name() != "8000" || names[1].Name() != "notes" {
		t.Errorf("after sweep, %s holds %v, want the held lock 8000 and notes", dir, names)
	}
}

// BenchmarkAcquireRelease is the cost a run as root pays for its lease:
// with TMPDIR on a tmpfs, as /run is on a systemd host, 8 µs here; on
// ext4 (this machine's /run, and /tmp) 108 µs, the file's creation and
// removal going through the journal.
func BenchmarkAcquireRelease(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "uids")
	for range b.N {
		l, err := acquire(dir, uint32(os.Geteuid()), Default)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}
