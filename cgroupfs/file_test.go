package cgroupfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile: the plain-syscall reader returns what os.ReadFile does, for
// a file far larger than its first buffer and for an empty one, and a
// missing file is fs.ErrNotExist with its path in the error.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 1000)
	for name, data := range map[string][]byte{"big": big, "empty": nil, "short": []byte("max\n")} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("readFile(%s) = %d bytes, %v; want %d bytes", name, len(got), err, len(data))
		}
	}
	// A kernel file whose size stat does not know.
	want, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readFile("/proc/self/mountinfo"); err != nil || len(got) == 0 || !strings.HasPrefix(string(want), string(got[:min(len(got), 20)])) {
		t.Errorf("readFile(/proc/self/mountinfo) = %q..., %v", got[:min(len(got), 40)], err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := readFile(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("readFile(missing) = %v, want fs.ErrNotExist naming the path", err)
	}
}

// TestWriteFile: one write of the whole value; a failure names the value
// and the file.
func TestWriteFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(p, "12345"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "12345" {
		t.Errorf("after writeFile: %q, want 12345", got)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	err := writeFile(missing, "1")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("writeFile(missing) = %v, want fs.ErrNotExist naming the path", err)
	}
}
