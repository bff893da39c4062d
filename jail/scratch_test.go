package jail

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/fspath"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
)

func TestPlanScratch(t *testing.T) {
	cases := []struct {
		name      string
		disk, mem int64
		keep      bool
		wantBytes int64
		report    string
	}{
		{"in the disk budget", 1 << 20, 1 << 30, false, 0, "counts against the disk budget"},
		{"no budget: a tmpfs of the memory limit", 0, 1 << 30, false, 1 << 30, "counts against the memory limit"},
		{"no budget, no memory limit", 0, 0, false, 0, "half the machine's memory"},
		{"kept, in the budget", 1 << 20, 1 << 30, true, 0, ".scidex-scratch/"},
		{"kept, no budget", 0, 1 << 30, true, 0, ".scidex-scratch/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSpec()
			s.Limits.Set(limits.Disk, limits.Int(c.disk))
			s.Limits.Set(limits.Memory, limits.Int(c.mem))
			s.KeepScratch = c.keep
			var m protocol.Mounts
			planScratch(s, &m)
			want := protocol.Mounts{Scratch: "/home/analysis", ScratchTmp: "/home/analysis/tmp", ScratchBytes: c.wantBytes, KeepScratch: c.keep}
			if !reflect.DeepEqual(m, want) {
				t.Errorf("planScratch = %+v, want %+v", m, want)
			}
			if r := scratchReport(s); !strings.Contains(r, c.report) || !strings.HasPrefix(r, AnalysisHome) {
				t.Errorf("scratchReport = %q, want it to name %s and say %q", r, AnalysisHome, c.report)
			}
		})
	}
}

func TestScratchEnv(t *testing.T) {
	env := testSpec().targetEnv(nil)
	for _, e := range scratchEnv {
		if !slices.Contains(env, e.name+"="+e.value) {
			t.Errorf("targetEnv lacks %s=%s: %q", e.name, e.value, env)
		}
		if e.name != "PYTHONDONTWRITEBYTECODE" && !fspath.Within(e.value, AnalysisHome) {
			t.Errorf("%s = %q, want a place in the scratch %s", e.name, e.value, AnalysisHome)
		}
	}
	// The caller's --env wins, once.
	s := testSpec()
	s.Env = []string{"HOME=/elsewhere", "MPLCONFIGDIR=/x"}
	env = s.targetEnv(nil)
	for _, kv := range []string{"HOME=/elsewhere", "MPLCONFIGDIR=/x"} {
		if n := countPrefix(env, kv[:strings.Index(kv, "=")+1]); !slices.Contains(env, kv) || n != 1 {
			t.Errorf("targetEnv with --env %s = %q (%d entries), want it once", kv, env, n)
		}
	}
}

func countPrefix(env []string, prefix string) int {
	n := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, prefix) {
			n++
		}
	}
	return n
}

func TestValidateScratch(t *testing.T) {
	cases := []struct {
		name string
		spec func(*Spec)
		bad  string // "" = valid
	}{
		{"default", func(*Spec) {}, ""},
		{"ro beside it", func(s *Spec) { s.ReadOnly = []string{"/home/alice/data"} }, ""},
		{"ro above it", func(s *Spec) { s.ReadOnly = []string{"/home"} }, `--ro "/home"`},
		{"ro at it", func(s *Spec) { s.ReadOnly = []string{"/home/analysis"} }, `--ro "/home/analysis"`},
		{"rw below it", func(s *Spec) { s.ReadWrite = []string{"/home/analysis/x"} }, `--rw "/home/analysis/x"`},
		{"data dir below it", func(s *Spec) { s.Root = "/home/analysis/platform" }, `data_dirs "/home/analysis/platform/data"`},
		{"tmp-root in it", func(s *Spec) { s.TmpRoot = "/home/analysis/tmp" }, "--tmp-root"},
		{"tmp-root above it", func(s *Spec) { s.TmpRoot = "/home" }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSpec()
			c.spec(s)
			err := s.validateScratch()
			switch {
			case c.bad == "" && err != nil:
				t.Errorf("validateScratch = %v, want nil", err)
			case c.bad != "" && (!errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), c.bad)):
				t.Errorf("validateScratch = %v, want ErrBadSpec naming %s", err, c.bad)
			}
		})
	}
}
