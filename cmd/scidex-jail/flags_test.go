package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/promise"
)

// TestLimitFlagsOverProfile: a limit flag given replaces the profile's
// value (0 and none included), one left out keeps it, and the profile's
// tmpfs sizes follow a smaller --memory.
func TestLimitFlagsOverProfile(t *testing.T) {
	profile := func() jail.Spec {
		return jail.Spec{
			Timeout: time.Hour, Grace: 10 * time.Second, DiskBytes: 4 << 30, ShmBytes: 64 << 20,
			Net: promise.NetNone, AllowTCP: []uint16{443},
			Resources: jail.Resources{MemoryBytes: 8 << 30, SwapBytes: 0, CPUs: 2, PIDs: 512},
			Outputs:   jail.OutputBudget{Entries: 10_000, Bytes: 4 << 30, FileBytes: 4 << 30, Time: 3 * time.Minute},
		}
	}
	cases := []struct {
		name string
		args []string
		want func(*jail.Spec)
	}{
		{"nothing given", nil, func(*jail.Spec) {}},
		{"timeout none", []string{"--timeout", "none"}, func(s *jail.Spec) { s.Timeout = 0 }},
		{"timeout 0", []string{"--timeout", "0"}, func(s *jail.Spec) { s.Timeout = 0 }},
		{"timeout 90s", []string{"--timeout=90s"}, func(s *jail.Spec) { s.Timeout = 90 * time.Second }},
		{"grace 0", []string{"--grace", "0"}, func(s *jail.Spec) { s.Grace = 0 }},
		{"cpus none", []string{"--cpus", "none"}, func(s *jail.Spec) { s.Resources.CPUs = 0 }},
		{"cpus 0.5", []string{"--cpus", "0.5"}, func(s *jail.Spec) { s.Resources.CPUs = 0.5 }},
		{"pids none", []string{"--pids", "none"}, func(s *jail.Spec) { s.Resources.PIDs = 0 }},
		{"pids 64", []string{"--pids", "64"}, func(s *jail.Spec) { s.Resources.PIDs = 64 }},
		{"swap 1G", []string{"--swap", "1G"}, func(s *jail.Spec) { s.Resources.SwapBytes = 1 << 30 }},
		{"memory none keeps the tmpfs sizes", []string{"--memory", "none"}, func(s *jail.Spec) { s.Resources.MemoryBytes = 0 }},
		{"smaller memory shrinks disk and shm", []string{"--memory", "32M"}, func(s *jail.Spec) {
			s.Resources.MemoryBytes, s.DiskBytes, s.ShmBytes = 32<<20, 32<<20, 32<<20
		}},
		{"disk given is kept", []string{"--memory", "1G", "--disk", "2G"}, func(s *jail.Spec) {
			s.Resources.MemoryBytes, s.DiskBytes = 1<<30, 2<<30
			s.Outputs.Bytes, s.Outputs.FileBytes = 2<<30, 2<<30 // follow the disk given
		}},
		{"disk 0", []string{"--disk", "0"}, func(s *jail.Spec) { s.DiskBytes = 0 }},
		{"shm given", []string{"--shm", "1M"}, func(s *jail.Spec) { s.ShmBytes = 1 << 20 }},
		{"output budgets given", []string{"--output-entries", "500", "--output-bytes", "none", "--output-file-bytes", "1M", "--output-time", "30s"}, func(s *jail.Spec) {
			s.Outputs = jail.OutputBudget{Entries: 500, Bytes: 0, FileBytes: 1 << 20, Time: 30 * time.Second}
		}},
		{"smaller disk lowers the output byte budgets", []string{"--disk", "64M"}, func(s *jail.Spec) {
			s.DiskBytes, s.Outputs.Bytes, s.Outputs.FileBytes = 64<<20, 64<<20, 64<<20
		}},
		{"output bytes given stay over a smaller disk", []string{"--disk", "64M", "--output-bytes", "1G"}, func(s *jail.Spec) {
			s.DiskBytes, s.Outputs.Bytes, s.Outputs.FileBytes = 64<<20, 1<<30, 64<<20
		}},
		{"net and ports", []string{"--net", "host", "--allow-tcp", "80, 8080", "--allow-tcp", "22"}, func(s *jail.Spec) {
			s.Net, s.AllowTCP = promise.NetHost, []uint16{80, 8080, 22}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--id", "x"}, tc.args...)
			c, err := parseQuiet(t, args...)
			if err != nil {
				t.Fatalf("parse(%q) = %v, want no error", args, err)
			}
			got, want := profile(), profile()
			c.Run.limitFlags.apply(&got)
			tc.want(&want)
			if got.Timeout != want.Timeout || got.Grace != want.Grace || got.Resources != want.Resources ||
				got.DiskBytes != want.DiskBytes || got.ShmBytes != want.ShmBytes || got.Net != want.Net || !slices.Equal(got.AllowTCP, want.AllowTCP) ||
				got.Outputs != want.Outputs {
				t.Errorf("apply(%q) = %+v, want %+v", tc.args, got, want)
			}
		})
	}
}

// TestFlagValueRefused: a limit the rule refuses ends the parse, naming
// the flag and saying what to give instead.
func TestFlagValueRefused(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--pids", "0"}, "--pids: 0 processes is refused: give a limit such as 512, or write none for no limit"},
		{[]string{"--pids", "8"}, "--pids: 8 is below 16"},
		{[]string{"--cpus", "0"}, "--cpus: 0 CPUs is refused"},
		{[]string{"--cpus", "NaN"}, "give a decimal number such as 0.5 or 2"},
		{[]string{"--cpus=-1"}, "--cpus: -1 CPUs is negative"},
		{[]string{"--timeout", "soon"}, `--timeout: "soon" is not a duration`},
		{[]string{"--timeout"}, "--timeout: expected duration value"},
		{[]string{"--grace", "none"}, `--grace: "none": give a duration such as 5s`},
		{[]string{"--grace=-1s"}, `--grace: "-1s": give a duration`},
		{[]string{"--memory", "1X"}, `--memory: size "1X": unknown unit "X"`},
		{[]string{"--swap", "none"}, `--swap: size "none" is not a non-negative number`},
		{[]string{"--shm", "-1"}, "--shm: expected size value"},
		{[]string{"--allow-tcp", "80,x"}, `--allow-tcp: "x": give TCP port numbers 1-65535`},
		{[]string{"--allow-tcp", "0"}, `--allow-tcp: "0": give TCP port numbers`},
		{[]string{"--allow-tcp", "65536"}, `--allow-tcp: "65536": give TCP port numbers`},
		{[]string{"--output-entries", "0"}, "--output-entries: 0 entries is refused: give a budget such as 10000, or write none"},
		{[]string{"--output-bytes", "0"}, "--output-bytes: 0 bytes is refused"},
		{[]string{"--output-file-bytes", "-1"}, "--output-file-bytes: expected size value"},
		{[]string{"--output-time", "0s"}, "--output-time: 0s: give a positive duration"},
	}
	for _, tc := range cases {
		args := append([]string{"run", "--id", "x"}, tc.args...)
		_, err := parseQuiet(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) = %v, want an error saying %q", args, err, tc.want)
		}
	}
}

// TestSharedFlagDefaults: run and check read the same shared flags, with
// jail's defaults (the struct tags cannot name the constants), and gc
// sweeps the same default tmp-root.
func TestSharedFlagDefaults(t *testing.T) {
	for _, args := range [][]string{{"run", "--id", "x"}, {"check"}} {
		c, err := parseQuiet(t, args...)
		if err != nil {
			t.Fatalf("parse(%q) = %v, want no error", args, err)
		}
		f := c.Run.jailFlags
		if args[0] == "check" {
			f = c.Check.jailFlags
		}
		if f.TmpRoot != jail.DefaultTmpRoot || f.UID != jail.DefaultHostUID || f.GID != jail.DefaultHostUID || f.Profile != "default" {
			t.Errorf("parse(%q) shared flags = %+v, want tmp-root %s, uid and gid %d, profile default",
				args, f, jail.DefaultTmpRoot, jail.DefaultHostUID)
		}
	}
	if c, err := parseQuiet(t, "gc"); err != nil || c.GC.TmpRoot != jail.DefaultTmpRoot {
		t.Errorf("parse(gc) = tmp-root %q, %v; want %s", c.GC.TmpRoot, err, jail.DefaultTmpRoot)
	}
}
