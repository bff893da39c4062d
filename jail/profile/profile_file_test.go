package profile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadProfilesFile: the profiles file is opened without blocking,
// checked to be a regular file on the open fd and read with a bound.
func TestReadProfilesFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxProfilesFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(`{"profiles": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path    string
		errText string
	}{
		{ok, ""},
		{fifo, "is a FIFO, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "more than the 1048576 a profiles file may have"},
		{filepath.Join(dir, "missing"), "no such file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := readProfilesFile(c.path); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("readProfilesFile(%s) still blocked after 10 s", c.path)
		}
		if c.errText == "" {
			if err != nil {
				t.Errorf("readProfilesFile(%s) = %v, want nil", c.path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.errText) {
			t.Errorf("readProfilesFile(%s) = %v, want an error holding %q", c.path, err, c.errText)
		}
	}
}
