package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestReportUnheldLimits: a limit no layer held is reported as not
// enforced, its field 0 and its name in the notes, never as the profile's
// value. Without the cgroup leaf (--unsafe-disable cgroup: the README's
// rootless run on a hybrid host) nothing holds memory, swap, cpus and
// pids; every other limit has a layer on every run.
func TestReportUnheldLimits(t *testing.T) {
	requireRoot(t)
	noCgroup := []string{"memory", "swap", "cpus", "pids"}
	cases := []struct {
		name     string
		rootless bool
		flags    []string
		unheld   []string
		none     []string
	}{
		{"root, with its cgroup", false, nil, []string{}, []string{}},
		{"root, no cgroup", false, []string{"--unsafe-disable", "cgroup"}, noCgroup, []string{}},
		{"root, no cgroup, no memory limit asked", false, []string{"--unsafe-disable", "cgroup", "--memory", "none"}, []string{"swap", "cpus", "pids"}, []string{"memory"}},
		{"rootless, no cgroup", true, []string{"--unsafe-disable", "cgroup"}, noCgroup, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runMaybeRootless(t, c.rootless, append(c.flags, "--", "/bin/true")...)
			wantStatus(t, r, report.StatusOK, 0)
			l := r.report.Limits
			if !slices.Equal(l.NotEnforced, c.unheld) || !slices.Equal(l.None(), c.none) {
				t.Errorf("limits.not_enforced, none = %q, %q, want %q, %q", l.NotEnforced, l.None(), c.unheld, c.none)
			}
			notes := r.report.CompletionNotes
			for _, name := range []string{"memory", "swap", "cpus", "pids"} {
				lim := limits.ByName(name)
				unheld := slices.Contains(c.unheld, name)
				if v := l.Values.Get(lim); unheld && !v.IsZero() {
					t.Errorf("limits' %s = %v, want 0 (not enforced)", name, v)
				}
				if unheld != strings.Contains(notes, " "+name) {
					t.Errorf("completion notes = %q, want %s named: %v", notes, name, unheld)
				}
			}
			if got, want := l.Values.Int(limits.Memory) > 0, !slices.Contains(c.unheld, "memory") && !slices.Contains(c.none, "memory"); got != want {
				t.Errorf("limits.memory_bytes = %d, want the profile's (2G): %v", l.Values.Int(limits.Memory), want)
			}
			if got, want := strings.Contains(notes, "Not enforced"), len(c.unheld) > 0; got != want {
				t.Errorf("completion notes = %q, want a sentence on what was not enforced: %v", notes, want)
			}
		})
	}
}

// runMaybeRootless runs the binary with args after `run --id`, as root or
// as nobody (65534), on a fresh tmp-root either can write.
func runMaybeRootless(t *testing.T, rootless bool, args ...string) result {
	t.Helper()
	root := tmpRoot(t)
	if !rootless {
		return runJail(t, runOpts{}, append([]string{"run", "--id", "t", "--tmp-root", root}, args...)...)
	}
	if err := os.Chmod(root, 0o1777); err != nil {
		t.Fatal(err)
	}
	rep := root + "/report.json"
	cmd := exec.Command(jailBin, append([]string{"run", "--id", "t", "--tmp-root", root, "--report", rep}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run scidex-jail as nobody: %v", err)
	}
	r := finishJail(t, cmd, nil, rep, nil, nil)
	r.code, r.stdout, r.stderr = cmd.ProcessState.ExitCode(), out.String(), errb.String()
	return r
}
