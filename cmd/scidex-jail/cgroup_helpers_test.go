package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// Helpers of the cgroup end-to-end tests (cgroup_test.go). They look at the
// host's cgroup hierarchies the way the jail should have left them, through
// internal/testutil's reading of /proc/self/cgroup and /proc/self/mountinfo
// rather than asking package cgroupfs: a test that shares the code under
// test proves nothing.

// cgroupHier is one mounted hierarchy and this process's cgroup in it.
type cgroupHier struct {
	version     int      // 1 or 2
	controllers []string // v1 only, e.g. [memory] or [cpu cpuacct]
	dir         string   // this process's cgroup directory in it
}

// ownCgroups lists this process's cgroup directory in every mounted
// hierarchy, v1 and v2 alike (the first mount that shows it). Named v1
// hierarchies (name=systemd) hold no controllers and are left out: the jail
// never makes leaves there.
func ownCgroups(t *testing.T) []cgroupHier {
	t.Helper()
	cgs, err := testutil.OwnCgroups()
	if err != nil {
		t.Fatalf("own cgroups: %v", err)
	}
	var out []cgroupHier
	for _, c := range cgs {
		if c.Named() || len(c.Dirs) == 0 {
			continue
		}
		out = append(out, cgroupHier{version: c.Version, controllers: c.Controllers, dir: c.Dirs[0]})
	}
	return out
}

// hostCgroupVersion is the version the jail must use here: 1 when the
// memory controller sits on a v1 hierarchy (hybrid hosts such as the
// development machines), else 2. Under the VM harness it must be 2.
func hostCgroupVersion(t *testing.T) int {
	t.Helper()
	v := 2
	for _, h := range ownCgroups(t) {
		if h.version == 1 && slices.Contains(h.controllers, "memory") {
			v = 1
		}
	}
	if testutil.Cgroup2Required() && v != 2 {
		t.Fatalf("%s=1 but the memory controller is on cgroup v1 here: the VM harness should boot a pure cgroup v2 kernel", testutil.RequireCgroup2Env)
	}
	return v
}

// leavesOf lists the cgroup directories a run with this ID may have made:
// the jail names its leaves scidex-<ID>-<random> directly below the parent
// (this process's cgroup in each hierarchy, plus any extra parents). Only
// this ID's leaves count, so cgroupfs tests running at the same time in
// another package cannot disturb the result.
func leavesOf(t *testing.T, id string, extraParents ...string) []string {
	t.Helper()
	var parents []string
	for _, h := range ownCgroups(t) {
		parents = append(parents, h.dir)
	}
	parents = append(parents, extraParents...)
	var found []string
	for _, p := range parents {
		m, err := filepath.Glob(filepath.Join(p, "scidex-"+id+"-*"))
		if err != nil {
			t.Fatalf("glob below %s: %v", p, err)
		}
		for _, d := range m {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				found = append(found, d)
			}
		}
	}
	return found
}

// wantNoLeaf fails when any leaf of the run is left, by name or by the
// paths its report gave.
func wantNoLeaf(t *testing.T, id string, r result, extraParents ...string) {
	t.Helper()
	if left := leavesOf(t, id, extraParents...); len(left) != 0 {
		t.Errorf("cgroup leaves left after run %s: %v, want none", id, left)
	}
	if r.report == nil || r.report.Enforced.Cgroup == nil {
		return
	}
	for _, w := range r.report.Warnings {
		if strings.Contains(w, "cgroup") {
			t.Errorf("report warning %q, want the leaf read and removed cleanly", w)
		}
	}
	for _, p := range r.report.Enforced.Cgroup.Paths {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("leaf %s from the report still exists after the run (lstat: %v)", p, err)
		}
	}
}

// runID is an ID unique to this test process and call, so leaves and
// markers can be attributed to one run.
func runID(t *testing.T, prefix string) string {
	t.Helper()
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9)
}

// cgroupOf is the report's cgroup section, failing when it is missing or
// from another cgroup version than the host's.
func cgroupOf(t *testing.T, r result) *report.CgroupReport {
	t.Helper()
	if r.report == nil {
		t.Fatalf("no report written; %v", r)
	}
	c := r.report.Enforced.Cgroup
	if c == nil {
		t.Fatalf("report has no enforced.cgroup section; %v", r)
	}
	if v := hostCgroupVersion(t); c.Version != v {
		t.Fatalf("enforced.cgroup.version = %d, want %d, the version of this host's memory controller", c.Version, v)
	}
	if c.Usage == nil {
		t.Fatalf("report has no enforced.cgroup.usage; warnings %q; %v", r.report.Warnings, r)
	}
	return c
}

// written returns the value the report says was written to the file with
// this base name (e.g. memory.max), and whether there was one.
func written(c *report.CgroupReport, base string) (string, bool) {
	for path, v := range c.Written {
		if filepath.Base(path) == base {
			return v, true
		}
	}
	return "", false
}

// bystander starts a host process outside the jail carrying marker, and
// kills it when the test ends.
func bystander(t *testing.T, marker string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bystander sleep: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}
