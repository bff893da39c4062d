package profile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/option"
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

// TestEveryFieldHasASetter: the profiles file takes every field of the
// option rows and of the limits, named by its path, and no field that is
// neither a row nor the description.
func TestEveryFieldHasASetter(t *testing.T) {
	o := option.FromProfile("x", option.ProfileField)
	for _, r := range option.All {
		if r.Field == "" {
			continue
		}
		name, set, ok := setterOf(o, r.Field)
		if !ok || set == nil || name != "profiles.x."+r.Field {
			t.Errorf("setterOf(%s) = %q, %v; want the row's setter, named profiles.x.%s", r.Field, name, ok, r.Field)
		}
	}
	for r := range optionSetters {
		if r.Field == "" {
			t.Errorf("a setter for the row %s, which has no profile field", r.Request)
		}
	}
}
