package jail

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/netmode"
)

// TestValidateResolves: Validate returns the resolved copy (links in the
// host paths followed, the network mode defaulted) and leaves the caller's
// spec, its slices included, exactly as it was.
func TestValidateResolves(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	for _, d := range []string{"real/root/data", "real/in", "real/rw", "real/reports", "tmp"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := &Spec{
		ID: "v1", Command: []string{"/bin/true"}, TmpRoot: filepath.Join(base, "tmp"), Limits: limits.Of(L{limits.Shm: 1 << 20}),
		Root: filepath.Join(link, "root"), DataDirs: []string{"data"},
		ReadOnly: []string{filepath.Join(link, "in")}, ReadWrite: []string{filepath.Join(link, "rw")},
		Report:  filepath.Join(link, "reports", "r.json"),
		Collect: filepath.Join(link, "out"),
		HostUID: os.Geteuid(), HostGID: os.Getegid(),
	}
	if os.Geteuid() == 0 {
		s.HostUID, s.HostGID = 65534, 65534 // fixed ids, as --uid and --gid give
	}
	before := s.clone()
	r, err := s.Validate()
	if err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
	if !reflect.DeepEqual(*s, before) {
		t.Errorf("Validate changed its input:\n got %+v\nwant %+v", *s, before)
	}
	for _, c := range []struct{ name, got, want string }{
		{"Root", r.Root, filepath.Join(real, "root")},
		{"ReadOnly[0]", r.ReadOnly[0], filepath.Join(real, "in")},
		{"ReadWrite[0]", r.ReadWrite[0], filepath.Join(real, "rw")},
		{"Report", r.Report, filepath.Join(real, "reports", "r.json")},
		{"Collect", r.Collect, filepath.Join(real, "out")},
		{"Net", string(r.Net), string(netmode.Default)},
		{"RealTmpRoot", r.RealTmpRoot, s.TmpRoot},
	} {
		if c.got != c.want {
			t.Errorf("Validate().%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestValidateRefuses: a refused spec gives no resolved value and is left
// as it was.
func TestValidateRefuses(t *testing.T) {
	s := &Spec{ID: "v1", Command: []string{"/bin/true"}, TmpRoot: "relative", HostUID: 1, HostGID: 1}
	before := s.clone()
	if r, err := s.Validate(); r != nil || err == nil {
		t.Errorf("Validate() = %v, %v; want nil and an error", r, err)
	}
	if !reflect.DeepEqual(*s, before) {
		t.Errorf("Validate changed its input: got %+v, want %+v", *s, before)
	}
}

// asResolved takes a test's spec as resolved as it is: BuildPlan's tests
// give paths that need not exist.
func asResolved(s *Spec) *Resolved { return &Resolved{Spec: *s, RealTmpRoot: s.TmpRoot} }
