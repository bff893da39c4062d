package bench

import "testing"

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
