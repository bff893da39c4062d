package bench

import (
	"errors"
	"strings"
	"testing"
)

func TestReportArg(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"separate", []string{"scidex-jail", "run", "--id", "a", "--report", "/r/a.json", "--", "/usr/bin/true"}, "/r/a.json"},
		{"joined", []string{"scidex-jail", "run", "--report=/r/b.json", "--", "true"}, "/r/b.json"},
		{"none", []string{"scidex-jail", "run", "--id", "a", "--", "true"}, ""},
		{"the command's own flag", []string{"scidex-jail", "run", "--", "tool", "--report", "x"}, ""},
		{"flag without value", []string{"scidex-jail", "run", "--report"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reportArg(tt.args); got != tt.want {
				t.Errorf("reportArg(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name          string
		ratio, target float64
		want          string
	}{
		{"met", 1.1, 1.2, "target <= 1.20: met"},
		{"on the bound", 1.2, 1.2, "target <= 1.20: met"},
		{"not met", 1.85, 1.2, "target <= 1.20: NOT met"},
		{"no target", 3, 0, "no target (for reference)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict(tt.ratio, tt.target); got != tt.want {
				t.Errorf("verdict(%v, %v) = %q, want %q", tt.ratio, tt.target, got, tt.want)
			}
		})
	}
}

func TestStartupPairs(t *testing.T) {
	tests := []struct {
		name, inVM string
		want       string // the first pair's name
	}{
		{"host", "", "jail-vs-nsproto-true"},
		{"vmtest VM", "1", "vm-jail-vs-nsproto-true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SCIDEX_IN_VM", tt.inVM)
			if got := startupPairs()[0].name; got != tt.want {
				t.Errorf("startupPairs()[0] with SCIDEX_IN_VM=%q = %s, want %s", tt.inVM, got, tt.want)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"output joined", errors.New("crun: exit status 1\nerror: mount\n  proc"), "crun: exit status 1 error: mount proc"},
		{"long cut", errors.New(strings.Repeat("x", 500)), strings.Repeat("x", 400) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneLine(tt.err); got != tt.want {
				t.Errorf("oneLine(%q) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestCrunSpec checks that crun's bundle enforces fullJail's limits
// (--memory 256M, no swap, --cpus 1, --pids 64) in a leaf named by the peer.
func TestCrunSpec(t *testing.T) {
	c := &crunPeer{command: []string{"/usr/bin/true"}, leaf: "scidex-bench-crun-1"}
	s := c.crunSpec()
	r := s.Linux.Resources
	tests := []struct {
		name      string
		got, want any
	}{
		{"memory", r.Memory.Limit, int64(256 << 20)},
		{"memory+swap", r.Memory.Swap, int64(256 << 20)},
		{"cpu quota", r.CPU.Quota, int64(100000)},
		{"cpu period", r.CPU.Period, int64(100000)},
		{"pids", r.Pids.Limit, int64(64)},
		{"cgroupsPath", s.Linux.CgroupsPath, "/scidex-bench-crun-1"},
		{"namespaces", len(s.Linux.Namespaces), 7},
		{"read-only root", s.Root.Readonly, true},
		{"command", strings.Join(s.Process.Args, " "), "/usr/bin/true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("crunSpec() %s = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
}
