package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	run := filepath.Join(dir, "run")
	file := filepath.Join(dir, "file.txt")
	link := filepath.Join(dir, "link")
	for _, d := range []string{data, run, filepath.Join(run, "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("os.MkdirAll(%q) = %v, want nil", d, err)
		}
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatalf("os.WriteFile(%q) = %v, want nil", file, err)
	}
	if err := os.Symlink(filepath.Join(run, "inner"), link); err != nil {
		t.Fatalf("os.Symlink(%q) = %v, want nil", link, err)
	}
	linkDir := filepath.Join(dir, "linkdir")
	if err := os.Symlink(run, linkDir); err != nil {
		t.Fatalf("os.Symlink(%q) = %v, want nil", linkDir, err)
	}
	missing := filepath.Join(dir, "no-such-dir")

	tests := []struct {
		name string
		p    Policy
		want []string // substrings of the error; none: valid
		is   error    // errors.Is target, if any
	}{
		{"valid", Policy{ReadExec: []string{"/usr"}, ReadOnly: []string{data, file}, ReadWrite: []string{run}, Devices: []string{"/dev/null", "/dev/pts"}, HandleTCP: true, ConnectTCP: []uint16{443, 8443}}, nil, nil},
		{"empty", Policy{}, nil, nil},
		{"missing ro", Policy{ReadOnly: []string{data, missing}}, []string{`ro "` + missing + `"`}, fs.ErrNotExist},
		{"missing rw", Policy{ReadWrite: []string{missing}}, []string{`rw "` + missing + `"`}, fs.ErrNotExist},
		{"missing rx", Policy{ReadExec: []string{missing}}, []string{`rx "` + missing + `"`}, fs.ErrNotExist},
		{"missing dev", Policy{Devices: []string{"/dev/no-such-device"}}, []string{`dev "/dev/no-such-device"`}, fs.ErrNotExist},
		{"relative", Policy{ReadOnly: []string{"data"}}, []string{`ro "data": path is not absolute`}, nil},
		{"empty path", Policy{ReadWrite: []string{""}}, []string{`rw "": path is not absolute`}, nil},
		{"dev regular file", Policy{Devices: []string{file}}, []string{`dev "` + file + `" is a regular file`}, nil},
		{"ro inside rw", Policy{ReadOnly: []string{filepath.Join(run, "inner")}, ReadWrite: []string{run}}, []string{"lies inside rw", "would be writable"}, nil},
		{"rx is rw", Policy{ReadExec: []string{run}, ReadWrite: []string{run}}, []string{`rx "` + run + `" lies inside rw`}, nil},
		{"ro link into rw", Policy{ReadOnly: []string{link}, ReadWrite: []string{run}}, []string{"lies inside rw"}, nil},
		{"ro through a linked dir into rw", Policy{ReadOnly: []string{filepath.Join(linkDir, "inner")}, ReadWrite: []string{run}}, []string{"lies inside rw"}, nil},
		{"rw through a link", Policy{ReadOnly: []string{filepath.Join(run, "inner")}, ReadWrite: []string{linkDir}}, []string{"lies inside rw"}, nil},
		{"rw inside ro", Policy{ReadOnly: []string{dir}, ReadWrite: []string{run}}, nil, nil},
		{"ports without HandleTCP", Policy{ConnectTCP: []uint16{443}}, []string{"without HandleTCP"}, nil},
		{"port 0", Policy{HandleTCP: true, ConnectTCP: []uint16{0}}, []string{"port 0"}, nil},
		{"duplicate port", Policy{HandleTCP: true, ConnectTCP: []uint16{443, 443}}, []string{"443 listed twice"}, nil},
		{"all problems", Policy{ReadOnly: []string{missing}, HandleTCP: true, ConnectTCP: []uint16{0}}, []string{missing, "port 0"}, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", tt.p, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error containing %q", tt.p, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%+v) = %q, want it to contain %q", tt.p, err, w)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Validate(%+v) = %v, want errors.Is(err, %v)", tt.p, err, tt.is)
			}
		})
	}
}

// TestRestrictValidates: Restrict refuses an invalid policy before probing
// or restricting anything (so this runs in-process).
func TestRestrictValidates(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	_, err := Policy{ReadOnly: []string{missing}}.Restrict()
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Restrict() with missing path = %v, want an error naming %q", err, missing)
	}
	if errors.Is(err, ErrUnsupported) {
		t.Errorf("Restrict() with missing path = %v, want not ErrUnsupported", err)
	}
}

// TestPortList: the ports in messages read as fmt's %v wrote them.
func TestPortList(t *testing.T) {
	for _, ports := range [][]uint16{nil, {443}, {80, 443, 65535}} {
		if got, want := portList(ports), fmt.Sprint(ports); got != want {
			t.Errorf("portList(%v) = %s, want %s", ports, got, want)
		}
	}
}
