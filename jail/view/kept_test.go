package view

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestKeptFileReadFresh: a kept file is read from its start each time,
// what it holds then, through the descriptor of its first read.
func TestKeptFileReadFresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overflowuid")
	f := &keptFile{path: path}
	for i, v := range []string{"65534\n", "7\n", "123456\n", strings.Repeat("9", 100) + "\n"} {
		// In place, as a sysctl changes: same inode.
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		fd := f.fd
		got, err := f.read()
		if err != nil || string(got) != v {
			t.Errorf("read() after writing %q = %q, %v, want it", v, got, err)
		}
		if i > 0 && i < 3 && f.fd != fd {
			t.Errorf("read() %d: descriptor %d, want the first read's %d", i+1, f.fd, fd)
		}
	}
}

// TestOverflowIDKept: OverflowID reads the kernel's value, again through
// its kept descriptor.
func TestOverflowIDKept(t *testing.T) {
	for _, kind := range []string{"uid", "gid"} {
		b, err := os.ReadFile("/proc/sys/kernel/overflow" + kind)
		if err != nil {
			t.Fatal(err)
		}
		want, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if got := OverflowID(kind); got != want {
				t.Errorf("OverflowID(%s) (call %d) = %d, want %d", kind, i+1, got, want)
			}
		}
		if overflowFiles[kind].fd <= 0 {
			t.Errorf("OverflowID(%s): no descriptor kept", kind)
		}
	}
}

// TestHostMeminfoKept: HostMeminfo reads the kernel's file whole, again
// through its kept descriptor, as a read by path would.
func TestHostMeminfoKept(t *testing.T) {
	want, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	fd := 0
	for i := range 3 {
		got, err := HostMeminfo()
		if err != nil {
			t.Fatalf("HostMeminfo() (call %d) = %v", i+1, err)
		}
		// The amounts move; the lines and the total do not.
		if g, w := strings.Count(string(got), "\n"), strings.Count(string(want), "\n"); g != w {
			t.Errorf("HostMeminfo() (call %d): %d lines, want %d\n%s", i+1, g, w, got)
		}
		if g, w := meminfoKB(string(got), "MemTotal"), meminfoKB(string(want), "MemTotal"); g != w || g <= 0 {
			t.Errorf("HostMeminfo() (call %d): MemTotal %d kB, want %d", i+1, g, w)
		}
		if i > 0 && meminfoFile.fd != fd {
			t.Errorf("HostMeminfo() (call %d): descriptor %d, want the first call's %d", i+1, meminfoFile.fd, fd)
		}
		fd = meminfoFile.fd
	}
	if fd <= 0 {
		t.Errorf("HostMeminfo(): no descriptor kept")
	}
}
