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
