package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/server"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// L is a value per row, for limits.Of.
type L = map[*limits.Limit]any

// TestLimitFlagsOverProfile: a limit flag given replaces the profile's
// value (0 and none included), one left out keeps it, and the profile's
// tmpfs sizes follow a smaller --memory.
func TestLimitFlagsOverProfile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "profiles.json")
	if err := os.WriteFile(cfg, []byte(`{"profiles": {"t": {"base": "default", "timeout": "1h", "grace": "10s", "disk": "4G", "shm": "64M",
		"memory": "8G", "swap": "0", "cpus": 2, "pids": 512, "output_entries": 10000, "output_bytes": "4G", "output_file_bytes": "4G",
		"output_time": "3m", "net": "host", "allow_tcp": [443]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The profile's run, and one with the flags given over it.
	run := func(t *testing.T, args ...string) *jail.Spec {
		t.Helper()
		c, err := parseQuiet(t, append([]string{"run", "--id", "x", "--config", cfg, "--profile", "t"}, args...)...)
		if err != nil {
			t.Fatalf("parse(%q) = %v, want no error", args, err)
		}
		return resolved(t, c, dir)
	}
	set := func(m L) func(*jail.Spec) {
		return func(s *jail.Spec) {
			v := limits.Of(m)
			for l := range m {
				s.Limits.Set(l, v.Get(l))
			}
		}
	}
	cases := []struct {
		name string
		args []string
		want func(*jail.Spec)
	}{
		{"nothing given", nil, func(*jail.Spec) {}},
		{"timeout none", []string{"--timeout", "none"}, set(L{limits.Timeout: 0})},
		{"timeout 0", []string{"--timeout", "0"}, set(L{limits.Timeout: 0})},
		{"timeout 90s", []string{"--timeout=90s"}, set(L{limits.Timeout: 90 * time.Second})},
		{"grace 0", []string{"--grace", "0"}, set(L{limits.Grace: 0})},
		{"cpus none", []string{"--cpus", "none"}, set(L{limits.CPUQuota: 0})},
		{"cpus 0.5", []string{"--cpus", "0.5"}, set(L{limits.CPUQuota: 0.5})},
		{"pids none", []string{"--pids", "none"}, set(L{limits.PIDs: 0})},
		{"pids 64", []string{"--pids", "64"}, set(L{limits.PIDs: 64})},
		{"swap 1G", []string{"--swap", "1G"}, set(L{limits.Swap: 1 << 30})},
		{"memory none keeps the tmpfs sizes", []string{"--memory", "none"}, set(L{limits.Memory: 0})},
		{"smaller memory shrinks disk and shm", []string{"--memory", "32M"}, set(L{limits.Memory: 32 << 20, limits.Disk: 32 << 20, limits.Shm: 32 << 20})},
		{"disk given is kept", []string{"--memory", "1G", "--disk", "2G"}, set(L{limits.Memory: 1 << 30, limits.Disk: 2 << 30,
			limits.OutputBytes: 2 << 30, limits.OutputFileBytes: 2 << 30})}, // follow the disk given
		{"disk 0", []string{"--disk", "0"}, set(L{limits.Disk: 0})},
		{"shm given", []string{"--shm", "1M"}, set(L{limits.Shm: 1 << 20})},
		{"output budgets given", []string{"--output-entries", "500", "--output-bytes", "none", "--output-file-bytes", "1M", "--output-time", "30s"},
			set(L{limits.OutputEntries: 500, limits.OutputBytes: 0, limits.OutputFileBytes: 1 << 20, limits.OutputTime: 30 * time.Second})},
		{"smaller disk lowers the output byte budgets", []string{"--disk", "64M"}, set(L{limits.Disk: 64 << 20, limits.OutputBytes: 64 << 20, limits.OutputFileBytes: 64 << 20})},
		{"output bytes given stay over a smaller disk", []string{"--disk", "64M", "--output-bytes", "1G"}, set(L{limits.Disk: 64 << 20, limits.OutputBytes: 1 << 30, limits.OutputFileBytes: 64 << 20})},
		{"net and ports", []string{"--net", "loopback", "--allow-tcp", "80, 8080", "--allow-tcp", "22"}, func(s *jail.Spec) {
			s.Net, s.AllowTCP = "loopback", []uint16{80, 8080, 22}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, want := run(t, tc.args...), run(t)
			tc.want(want)
			if got.Limits != want.Limits || got.Net != want.Net || !slices.Equal(got.AllowTCP, want.AllowTCP) {
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
// sweeps the same default tmp-root; serve waits for a reply the server
// package's default.
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
		if f.TmpRoot != jail.DefaultTmpRoot || f.UID != nil || f.GID != nil || f.UIDRange != uidlease.Default.String() || f.Profile != "default" {
			t.Errorf("parse(%q) shared flags = %+v, want tmp-root %s, no uid or gid, uid range %s, profile default",
				args, f, jail.DefaultTmpRoot, uidlease.Default)
		}
	}
	if c, err := parseQuiet(t, "gc"); err != nil || c.GC.TmpRoot != jail.DefaultTmpRoot {
		t.Errorf("parse(gc) = tmp-root %q, %v; want %s", c.GC.TmpRoot, err, jail.DefaultTmpRoot)
	}
	if c, err := parseQuiet(t, "serve"); err != nil || c.Serve.ReplyTimeout != server.DefaultReplyWait {
		t.Errorf("parse(serve) = reply-timeout %v, %v; want server.DefaultReplyWait, %v", c.Serve.ReplyTimeout, err, server.DefaultReplyWait)
	}
}
