package protocol

import (
	"testing"
)

// TestSameView: a run's config asks for a slot's view (ViewOf) whatever
// only the run decides, and not when anything else differs: the mounts
// but for the run directory's place, whether meminfo is shown, the CPUs,
// lo.
func TestSameView(t *testing.T) {
	base := fullConfig()
	view := ViewOf(base)
	if view.Mounts.RunDir != SlotRunDir || !view.View || view.Command != nil || view.Security.Seccomp != nil {
		t.Fatalf("ViewOf(fullConfig()) = run directory %q, view %t, command %q, seccomp %v; want %s, true and neither", view.Mounts.RunDir, view.View, view.Command, view.Security.Seccomp, SlotRunDir)
	}
	for _, c := range []struct {
		name   string
		change func(*Config)
		want   bool
	}{
		{"the same run", func(*Config) {}, true},
		{"what only the run decides", func(c *Config) {
			c.Command, c.Env, c.Hostname, c.UID, c.GID, c.Stdio = []string{"x"}, []string{"A=1"}, "h", 7, 7, false
			c.RunDir, c.Mounts.RunDir = "/tmp/scidex-analysis-other", "/tmp/scidex-analysis-other"
			c.Security.Seccomp, c.Security.Landlock = nil, nil
			c.Mounts.Meminfo = "MemTotal: 1 kB\n"
		}, true},
		{"another read-only path", func(c *Config) { c.Mounts.ReadOnly = append(c.Mounts.ReadOnly, "/srv/other") }, false},
		{"another disk budget", func(c *Config) { c.Mounts.RunDirBytes++ }, false},
		{"no meminfo", func(c *Config) { c.Mounts.Meminfo = "" }, false},
		{"other CPUs", func(c *Config) { c.CPUs++ }, false},
		{"no lo", func(c *Config) { c.Loopback = !c.Loopback }, false},
	} {
		run := fullConfig()
		c.change(run)
		if got := SameView(&view, run); got != c.want {
			t.Errorf("%s: SameView = %t, want %t", c.name, got, c.want)
		}
	}
}
