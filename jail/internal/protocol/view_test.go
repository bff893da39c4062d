package protocol

import (
	"reflect"
	"slices"
	"testing"
)

// TestViewOf: a run's config asks for a slot's view (ViewOf) whatever
// only the run decides, and not when anything else differs: the mounts
// but for the run directory's place, whether meminfo is shown, the CPUs,
// lo, and what the slot confines its init with ahead (issue 36): the
// identity, the Landlock policy but for the run directory's own path, the
// seccomp policy.
func TestViewOf(t *testing.T) {
	base := fullConfig()
	view := ViewOf(base)
	enc := string(EncodeConfig(&view))
	if view.Mounts.RunDir != SlotRunDir || !view.View || view.Command != nil || view.Hostname != "" {
		t.Fatalf("ViewOf(fullConfig()) = run directory %q, view %t, command %q, hostname %q; want %s, true and neither", view.Mounts.RunDir, view.View, view.Command, view.Hostname, SlotRunDir)
	}
	if got := view.Security.Landlock.ReadWrite; !slices.Equal(got, []string{SlotRunDir}) {
		t.Errorf("ViewOf(fullConfig()).Security.Landlock.ReadWrite = %q, want [%s]", got, SlotRunDir)
	}
	if got := base.Security.Landlock.ReadWrite; !slices.Equal(got, []string{"/tmp/r"}) {
		t.Errorf("ViewOf changed its run's Landlock policy: ReadWrite = %q, want [/tmp/r]", got)
	}
	for _, c := range []struct {
		name   string
		change func(*Config)
		want   bool
	}{
		{"the same run", func(*Config) {}, true},
		{"what only the run decides", func(c *Config) {
			c.Command, c.Env, c.Hostname, c.Stdio = []string{"x"}, []string{"A=1"}, "h", false
			c.RunDir, c.Mounts.RunDir = "/tmp/scidex-analysis-other", "/tmp/scidex-analysis-other"
			c.Security.Landlock.ReadWrite = []string{"/tmp/scidex-analysis-other"}
			c.Mounts.Meminfo = "MemTotal: 1 kB\n"
		}, true},
		{"another read-only path", func(c *Config) { c.Mounts.ReadOnly = append(c.Mounts.ReadOnly, "/srv/other") }, false},
		{"another disk budget", func(c *Config) { c.Mounts.RunDirBytes++ }, false},
		{"no meminfo", func(c *Config) { c.Mounts.Meminfo = "" }, false},
		{"other CPUs", func(c *Config) { c.CPUs++ }, false},
		{"no lo", func(c *Config) { c.Loopback = !c.Loopback }, false},
		{"another uid", func(c *Config) { c.UID++ }, false},
		{"another gid", func(c *Config) { c.GID++ }, false},
		{"other groups", func(c *Config) { c.Groups = []int{1000} }, false},
		{"groups kept", func(c *Config) { c.Setgroups = !c.Setgroups }, false},
		{"no Landlock", func(c *Config) { c.Security.Landlock = nil }, false},
		{"another writable path", func(c *Config) {
			c.Security.Landlock.ReadWrite = append(c.Security.Landlock.ReadWrite, "/srv/w")
		}, false},
		{"a path below the run directory", func(c *Config) {
			c.Security.Landlock.ReadOnly = []string{"/tmp/r/x"}
		}, false},
		{"another TCP port", func(c *Config) { c.Security.Landlock.ConnectTCP = []uint16{1} }, false},
		{"no seccomp", func(c *Config) { c.Security.Seccomp = nil }, false},
		{"another seccomp policy", func(c *Config) { c.Security.Seccomp.Label += "x" }, false},
	} {
		run := fullConfig()
		c.change(run)
		v := ViewOf(run)
		if got := string(EncodeConfig(&v)) == enc; got != c.want {
			t.Errorf("%s: the views agree = %t, want %t", c.name, got, c.want)
		}
	}
}

// TestRunPart: the run's part of its config (RunPart) and the view its
// slot built, both as the init decodes them, complete to the run's whole
// config (Complete), whatever digests they carry: the real run's config
// and the full one.
func TestRunPart(t *testing.T) {
	real, err := DecodeConfig(testLine(t, "config.json"))
	if err != nil {
		t.Fatalf("DecodeConfig(testdata/config.json) = %v", err)
	}
	full := fullConfig()
	full.View, full.ViewSum = false, ""
	for name, run := range map[string]*Config{"real": real, "full": full} {
		v := ViewOf(run)
		v.ViewSum = "the view's"
		view, err := DecodeConfig(EncodeConfig(&v))
		if err != nil {
			t.Fatalf("%s: DecodeConfig(its view) = %v", name, err)
		}
		p := RunPart(run)
		p.ViewSum = "the run's view's"
		part, err := DecodeConfig(EncodeConfig(&p))
		if err != nil {
			t.Fatalf("%s: DecodeConfig(its part) = %v", name, err)
		}
		got := Complete(view, part)
		a, b := reflect.ValueOf(*got), reflect.ValueOf(*run)
		for i := range a.NumField() {
			if f := a.Type().Field(i).Name; !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
				t.Errorf("%s: Complete(view, part).%s = %+v, want the run's %+v", name, f, a.Field(i).Interface(), b.Field(i).Interface())
			}
		}
		if len(EncodeConfig(part)) >= len(EncodeConfig(run)) {
			t.Errorf("%s: the part is %d bytes, the whole config %d: want fewer", name, len(EncodeConfig(part)), len(EncodeConfig(run)))
		}
	}
}
