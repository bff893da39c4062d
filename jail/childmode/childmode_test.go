package childmode

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		name string
		argv []string
		want Mode
	}{
		{"the init as the jail starts it", Init.Argv(), Init},
		{"the probe as hostcheck starts it", Probe.Argv(), Probe},
		{"a typed command line", []string{"scidex-jail", "check"}, ""},
		{"a path to the init program", []string{"/usr/libexec/scidex-jail/scidex-jail-init"}, ""},
		{"a mode's marker as an argument", []string{"/usr/bin/scidex-jail", string(Probe)}, ""},
		{"no argv", nil, ""},
	} {
		if got := Of(c.argv); got != c.want {
			t.Errorf("%s: Of(%q) = %q, want %q", c.name, c.argv, got, c.want)
		}
	}
}

// TestModesDistinct: each mode has a marker of its own.
func TestModesDistinct(t *testing.T) {
	seen := map[Mode]bool{}
	for _, m := range Modes() {
		if m == "" || seen[m] || Of(m.Argv("x")) != m {
			t.Errorf("Modes() = %q: %q is empty, twice, or not selected by its own argv", Modes(), m)
		}
		seen[m] = true
	}
}
