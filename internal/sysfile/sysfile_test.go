package sysfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: Read returns what os.ReadFile does, for a file far larger than
// its first buffer and for an empty one, and a missing file is
// fs.ErrNotExist with its path in the error.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 1000)
	for name, data := range map[string][]byte{"big": big, "empty": nil, "short": []byte("max\n")} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("Read(%s) = %d bytes, %v; want %d bytes", name, len(got), err, len(data))
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := Read(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Read(missing) = %v, want fs.ErrNotExist naming the path", err)
	}
}

// TestReadAt: ReadAt reads the whole file from its start whatever the
// descriptor's offset (a kept descriptor read again, after a read to its
// end), a file far larger than its first buffer and a kernel file whose
// size stat does not know included; a bad descriptor's error names the
// path.
func TestReadAt(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 1000)
	p := filepath.Join(dir, "big")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, "/proc/meminfo"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fd := int(f.Fd())
		first, err := ReadAt(fd, path)
		if err != nil || len(first) == 0 {
			t.Fatalf("ReadAt(%s) = %d bytes, %v; want the file", path, len(first), err)
		}
		if _, err := io.ReadAll(f); err != nil { // the descriptor's offset at the end
			t.Fatal(err)
		}
		again, err := ReadAt(fd, path)
		if err != nil || len(again) == 0 || (path == p && !bytes.Equal(again, big)) {
			t.Errorf("ReadAt(%s) at the end of the file = %d bytes, %v; want the whole file again", path, len(again), err)
		}
	}
	closed := filepath.Join(dir, "closed")
	if _, err := ReadAt(-1, closed); err == nil || !strings.Contains(err.Error(), closed) {
		t.Errorf("ReadAt(-1) = %v, want an error naming %s", err, closed)
	}
}

// TestReadProc: kernel files whose size stat does not know are read whole.
func TestReadProc(t *testing.T) {
	want, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read("/proc/self/mountinfo"); err != nil || len(got) == 0 || !strings.HasPrefix(string(want), string(got[:min(len(got), 20)])) {
		t.Errorf("Read(/proc/self/mountinfo) = %q..., %v", got[:min(len(got), 40)], err)
	}
	b, err := Read("/proc/self/status")
	if err != nil || !strings.Contains(string(b), "\nCapBnd:") || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("Read(/proc/self/status) = %q, %v, want the whole status", b, err)
	}
	// Larger than the first buffer: read whole all the same.
	b, err = Read("/proc/self/smaps")
	if err != nil || len(b) <= 4096 || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("Read(/proc/self/smaps) = %d bytes, %v, want more than 4096, whole", len(b), err)
	}
	if _, err := Read("/proc/self/no-such-file"); err == nil || !strings.Contains(err.Error(), "no-such-file") {
		t.Errorf("Read(missing) = %v, want an error naming the file", err)
	}
}

// TestWrite: one write of the whole value; a failure names the value and
// the file.
func TestWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, "12345"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "12345" {
		t.Errorf("after Write: %q, want 12345", got)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	err := Write(missing, "1")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Write(missing) = %v, want fs.ErrNotExist naming the path", err)
	}
}
