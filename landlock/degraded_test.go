//go:build linux

package landlock

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// playKernel makes Restrict and ProbeABI see a kernel with the given
// effective ABI (0: no Landlock, as with ENOSYS) for the rest of the test.
func playKernel(t *testing.T, abi int) {
	t.Helper()
	saved := probe
	t.Cleanup(func() { probe = saved })
	probe = func() (kernel, error) {
		if abi == 0 {
			return kernel{}, &UnsupportedError{Err: unix.ENOSYS}
		}
		return kernel{abi: abi, reported: abi}, nil
	}
}

// TestRestrictDegraded plays an ABI 3 kernel on this ABI 7 one with
// AllowDegraded and checks that Result.Degraded tells the truth both ways:
// what ABI 3 enforces (truncate) is enforced, and what it lists as lost
// (TCP, scoping) is indeed not enforced.
func TestRestrictDegraded(t *testing.T) {
	if !inChild() {
		dir := t.TempDir()
		writeFile(t, dir, "ro/file.txt", "data", 0o644)
		runInChild(t, 5, "LLT_DIR="+dir, "LLT_PORT_B="+strconv.Itoa(int(listenLoopback(t))))
		return
	}
	dir, b := os.Getenv("LLT_DIR"), envPort(t, "LLT_PORT_B")
	playKernel(t, 3)
	res, err := Policy{
		ReadOnly:      []string{filepath.Join(dir, "ro")},
		HandleTCP:     true,
		ConnectTCP:    []uint16{1},
		Scope:         true,
		AllowDegraded: true,
	}.Restrict()
	if err != nil {
		t.Fatalf("Restrict() on ABI 3 with AllowDegraded = %v, want nil", err)
	}
	wantLost := []string{"net.tcp", "fs.ioctl_dev", "scope.signal", "scope.abstract_unix_socket"}
	if got := featureNames(res.Degraded); !slices.Equal(got, wantLost) {
		t.Errorf("Restrict().Degraded = %q, want features %q", res.Degraded, wantLost)
	}
	if res.ABI != 3 || res.Required != 6 {
		t.Errorf("Restrict() ABI, Required = %d, %d, want 3, 6", res.ABI, res.Required)
	}
	if slices.ContainsFunc(res.Rules, func(r string) bool { return strings.HasPrefix(r, "tcp") || strings.HasPrefix(r, "scope") }) {
		t.Errorf("Restrict().Rules = %q, want no tcp or scope rules on ABI 3", res.Rules)
	}
	roFile := filepath.Join(dir, "ro", "file.txt")
	runChecks(t, []check{
		{"ABI 3 truncate enforced", "truncate(ro/file.txt)", func() error { return unix.Truncate(roFile, 0) }, []error{unix.EACCES}},
		{"ABI 1 write enforced", "open(ro/file.txt, O_WRONLY)", func() error { return openClose(roFile, unix.O_WRONLY) }, []error{unix.EACCES}},
		{"unlisted dir denied", "os.ReadDir(dir)", func() error { _, err := os.ReadDir(dir); return err }, []error{unix.EACCES}},
		{"lost net.tcp", "connect(127.0.0.1:B)", func() error { return connectTCP(b) }, nil},
		{"lost scope.signal", "kill(parent, 0)", func() error { return unix.Kill(os.Getppid(), 0) }, nil},
	})
}

// TestRestrictRefusesOldKernel plays kernels older than the policy needs,
// without AllowDegraded: Restrict must refuse and leave the process
// unrestricted. It runs in a child so that a Restrict that wrongly goes
// ahead cannot restrict the other tests.
func TestRestrictRefusesOldKernel(t *testing.T) {
	if !inChild() {
		runInChild(t, 0, "LLT_DIR="+t.TempDir())
		return
	}
	dir := os.Getenv("LLT_DIR")
	p := Policy{ReadWrite: []string{dir}, HandleTCP: true, ConnectTCP: []uint16{443}, Scope: true}
	tests := []struct {
		name     string
		abi      int
		wantLost []string
	}{
		{"no landlock", 0, []string{notEnforced}},
		{"ABI 1", 1, []string{"fs.refer", "fs.truncate", "net.tcp", "fs.ioctl_dev", "scope.signal", "scope.abstract_unix_socket"}},
		{"ABI 4", 4, []string{"fs.ioctl_dev", "scope.signal", "scope.abstract_unix_socket"}},
		{"ABI 5", 5, []string{"scope.signal", "scope.abstract_unix_socket"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			playKernel(t, tt.abi)
			res, err := p.Restrict()
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Restrict() on ABI %d = %v, want an ErrUnsupported error", tt.abi, err)
			}
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("Restrict() on ABI %d = %T, want *UnsupportedError", tt.abi, err)
			}
			if ue.Found != tt.abi || ue.Needed != 6 {
				t.Errorf("Restrict() on ABI %d: Found, Needed = %d, %d, want %d, 6", tt.abi, ue.Found, ue.Needed, tt.abi)
			}
			if got := featureNames(ue.Lost); tt.abi > 0 && !slices.Equal(got, tt.wantLost) {
				t.Errorf("Restrict() on ABI %d: Lost = %q, want features %q", tt.abi, ue.Lost, tt.wantLost)
			}
			if tt.abi == 0 && !slices.Equal(ue.Lost, tt.wantLost) {
				t.Errorf("Restrict() on ABI 0: Lost = %q, want %q", ue.Lost, tt.wantLost)
			}
			for _, want := range []string{"ABI 6", "Linux >= 6.12", "AllowDegraded"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Restrict() on ABI %d = %q, want it to mention %q", tt.abi, err, want)
				}
			}
			if len(res.Rules) != 0 || res.Required != 6 {
				t.Errorf("Restrict() on ABI %d = %+v, want no rules and Required 6", tt.abi, res)
			}
		})
	}
	// Still unrestricted: a directory outside the policy is readable.
	if _, err := os.ReadDir(filepath.Dir(dir)); err != nil {
		t.Errorf("after refusals: os.ReadDir(%q) = %v, want nil (process must be unrestricted)", filepath.Dir(dir), err)
	}
}

// TestRestrictWithoutLandlock: with AllowDegraded and no Landlock at all,
// Restrict runs and says so in one entry.
func TestRestrictWithoutLandlock(t *testing.T) {
	playKernel(t, 0)
	res, err := Policy{ReadOnly: []string{t.TempDir()}, AllowDegraded: true}.Restrict()
	if err != nil {
		t.Fatalf("Restrict() without Landlock, AllowDegraded = %v, want nil", err)
	}
	if want := []string{notEnforced}; !slices.Equal(res.Degraded, want) || res.ABI != 0 {
		t.Errorf("Restrict() without Landlock = ABI %d, Degraded %q, want ABI 0, %q", res.ABI, res.Degraded, want)
	}
	if want := "landlock: not enforced at all"; notEnforced != want {
		t.Errorf("notEnforced = %q, want %q", notEnforced, want)
	}
}

// TestRestrictMinABI: with AllowDegraded, a kernel below MinABI is refused
// all the same, naming MinABI as the ABI needed, and the process stays
// unrestricted. In a child, so a wrong Restrict cannot restrict the others.
func TestRestrictMinABI(t *testing.T) {
	if !inChild() {
		runInChild(t, 0, "LLT_DIR="+t.TempDir())
		return
	}
	dir := os.Getenv("LLT_DIR")
	tests := []struct {
		name        string
		abi, minABI int
	}{
		{"no landlock, floor 1", 0, 1},
		{"ABI 1, floor 2", 1, 2},
		{"ABI 2, floor 6", 2, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			playKernel(t, tt.abi)
			p := Policy{ReadWrite: []string{dir}, Scope: true, AllowDegraded: true, MinABI: tt.minABI}
			_, err := p.Restrict()
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("Restrict() on ABI %d with MinABI %d = %v, want *UnsupportedError", tt.abi, tt.minABI, err)
			}
			if ue.Found != tt.abi || ue.Needed != tt.minABI {
				t.Errorf("Restrict() on ABI %d with MinABI %d: Found, Needed = %d, %d, want %d, %d", tt.abi, tt.minABI, ue.Found, ue.Needed, tt.abi, tt.minABI)
			}
		})
	}
	if _, err := os.ReadDir(filepath.Dir(dir)); err != nil {
		t.Errorf("after refusals: os.ReadDir(%q) = %v, want nil (process must be unrestricted)", filepath.Dir(dir), err)
	}
}

// TestValidateMinABI: a floor without AllowDegraded, or a negative one, is a
// mistake in the caller's policy.
func TestValidateMinABI(t *testing.T) {
	for _, p := range []Policy{{MinABI: 3}, {MinABI: -1, AllowDegraded: true}} {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "MinABI") {
			t.Errorf("Policy{MinABI: %d, AllowDegraded: %v}.Validate() = %v, want an error naming MinABI", p.MinABI, p.AllowDegraded, err)
		}
	}
	if err := (Policy{MinABI: 2, AllowDegraded: true}).Validate(); err != nil {
		t.Errorf("Policy{MinABI: 2, AllowDegraded: true}.Validate() = %v, want nil", err)
	}
}
