package runfiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeReport writes b to path as a run does: its report file made, then
// written.
func writeReport(path string, b []byte) error {
	r, err := OpenReport(path, "--report", path)
	if err != nil {
		return err
	}
	return r.Write(b)
}

// TestWriteAtomic: the file is replaced whole, with mode 0644, and no
// temporary file is left; a write that cannot be made leaves the last
// whole file.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(path, []byte("new body\n")); err != nil {
		t.Fatalf("WriteAtomic = %v, want nil", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new body\n" {
		t.Errorf("file = %q, want the new body", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
	}
	if names := list(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only the report", names)
	}
	if err := writeReport(filepath.Join(path, "x"), []byte("other")); err == nil {
		t.Errorf("WriteAtomic below a file = nil, want an error")
	}
	if b, _ := os.ReadFile(path); string(b) != "new body\n" {
		t.Errorf("file after a failed write = %q, want the last whole one", b)
	}
	if names := list(t, dir); len(names) != 1 {
		t.Errorf("directory after a failed write holds %q, want only the report", names)
	}
}

// TestWriteAtomicNoFollow: a link planted in the report's directory path
// makes the write fail; nothing is written where the link points.
func TestWriteAtomicNoFollow(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "reports")); err != nil {
		t.Fatal(err)
	}
	err := writeReport(filepath.Join(dir, "reports", "r.json"), []byte("x"))
	if err == nil {
		t.Fatal("WriteAtomic through a link = nil, want an error")
	}
	if names := list(t, elsewhere); len(names) != 0 {
		t.Errorf("the link's target holds %q, want nothing", names)
	}
}

// TestCollectNeverOverwritesOrFollows: a file of the same name at the
// destination is an error and keeps its content; links and special files
// are never copied; a destination whose path holds a link is refused.
func TestCollectNeverOverwritesOrFollows(t *testing.T) {
	dir, dest := t.TempDir(), t.TempDir()
	write(t, dir, "a", "analysis")
	write(t, dir, "b", "b")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	write(t, dest, "a", "mine")
	outs, _, err := ListOutputs(context.Background(), dir, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	errs := Collect(context.Background(), dir, dest, outs)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not overwritten") {
		t.Errorf("Collect over an existing file = %v, want one error saying it was not overwritten", errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "a")); string(b) != "mine" {
		t.Errorf("existing file = %q, want it untouched", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "b")); string(b) != "b" {
		t.Errorf("copied file = %q, want %q", b, "b")
	}
	if _, err := os.Lstat(filepath.Join(dest, "l")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a link was copied (%v), want links never copied", err)
	}
	linked := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(linked, "out")); err != nil {
		t.Fatal(err)
	}
	if errs := Collect(context.Background(), dir, filepath.Join(linked, "out", "x"), outs); len(errs) != 1 {
		t.Errorf("Collect into a path through a link = %v, want it refused", errs)
	}
}

// TestReportFileUnwritten: a report file let go of unwritten leaves
// nothing in its directory, and one that cannot be made says why, as a
// bad spec naming --report.
func TestReportFileUnwritten(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenReport(filepath.Join(dir, "r.json"), "--report", "r.json")
	if err != nil {
		t.Fatalf("OpenReport = %v, want nil", err)
	}
	r.Close()
	r.Close()
	if names := list(t, dir); len(names) != 0 {
		t.Errorf("directory holds %q after an unwritten report, want nothing", names)
	}
	_, err = OpenReport("/proc/sys/r.json", "--report", "/proc/sys/r.json")
	if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), `--report "/proc/sys/r.json"`) || !strings.Contains(err.Error(), "pseudo file system") {
		t.Errorf("OpenReport under /proc = %v, want a bad spec naming --report and the pseudo file system", err)
	}
}
