package cgroupfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountersReadFresh: a kept file is read from its start each time,
// what it holds then; a missing file is looked for again.
func TestCountersReadFresh(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.failcnt")
	var c counters
	t.Cleanup(c.close)
	write := func(s string) {
		t.Helper()
		// In place, as the kernel's file changes: same inode.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	steps := []struct {
		name   string
		before func()
		want   string
		ok     bool
	}{
		{"missing", func() {}, "", false},
		{"made", func() { write("1\n") }, "1\n", true},
		{"grown", func() { write("12345\n" + strings.Repeat("x", 1000)) }, "12345\n" + strings.Repeat("x", 1000), true},
		{"shrunk", func() { write("7\n") }, "7\n", true},
		// A file that fills the first buffer is read again whole, from
		// its start, into a bigger one.
		{"a buffer's worth", func() { write(strings.Repeat("y", 512)) }, strings.Repeat("y", 512), true},
		{"many buffers' worth", func() { write(strings.Repeat("z", 10000)) }, strings.Repeat("z", 10000), true},
		{"small again", func() { write("8\n") }, "8\n", true},
	}
	for _, s := range steps {
		s.before()
		got, ok, err := c.read(path)
		if err != nil || ok != s.ok || got != s.want {
			t.Errorf("%s: read(%s) = %q, %v, %v, want %q, %v, nil", s.name, path, got, ok, err, s.want, s.ok)
		}
	}
	if len(c.fds) != 1 {
		t.Errorf("kept descriptors = %d, want 1", len(c.fds))
	}
}

// TestUsageKeepsFiles: Create opens the leaf's counter files, and Usage
// reads them, fresh, through the same descriptors; Remove closes them.
func TestUsageKeepsFiles(t *testing.T) {
	eachVersion(t, func(t *testing.T, v int) {
		l, err := Create(Config{Name: testName(), Limits: Limits{MemoryKey: {N: 256 << 20}, PIDsKey: {N: 64}}})
		if err != nil {
			t.Fatalf("Create() = %v, want nil", err)
		}
		t.Cleanup(func() { l.Remove() })
		kept := fdsUnder(t, l.Paths())
		if kept == 0 {
			t.Fatalf("descriptors into the leaf after Create() = 0, want its counter files opened with it")
		}
		before, err := l.Usage()
		if err != nil {
			t.Fatalf("Usage() = %v, want nil", err)
		}
		if n := fdsUnder(t, l.Paths()); n != kept {
			t.Errorf("descriptors into the leaf after Usage() = %d, want the %d Create opened", n, kept)
		}
		cmd := startIn(t, l, `i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done`, false)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("Wait() = %v, want nil", err)
		}
		after, err := l.Usage()
		if err != nil {
			t.Fatalf("Usage() = %v, want nil", err)
		}
		if after.CPUUsageUsec <= before.CPUUsageUsec || after.PeakMemoryBytes <= before.PeakMemoryBytes {
			t.Errorf("Usage() after a process ran = %+v, want more CPU time and a higher peak than before it, %+v", after, before)
		}
		if n := fdsUnder(t, l.Paths()); n != kept {
			t.Errorf("descriptors into the leaf after a second Usage() = %d, want the %d of the first", n, kept)
		}
		if err := l.Remove(); err != nil {
			t.Fatalf("Remove() = %v, want nil", err)
		}
		if n := fdsUnder(t, l.Paths()); n != 0 {
			t.Errorf("descriptors into the leaf after Remove() = %d, want 0", n)
		}
	})
}

// fdsUnder counts this process's descriptors open on files in dirs (not
// the directories themselves).
func fdsUnder(t *testing.T, dirs []string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		for _, d := range dirs {
			if strings.HasPrefix(target, d+"/") {
				n++
			}
		}
	}
	return n
}
