package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail"
)

// Helpers of the cgroup end-to-end tests (cgroup_test.go). They look at the
// host's cgroup hierarchies the way the jail should have left them, reading
// /proc/self/cgroup and /proc/self/mountinfo themselves rather than asking
// package cgroupfs: a test that shares the code under test proves nothing.

// requireCgroup2Env is set by the VM harness (cmd/vmtest), whose kernel has
// a pure cgroup v2 hierarchy: there the v2 backend must be used, never
// skipped.
const requireCgroup2Env = "SCIDEX_REQUIRE_CGROUP2"

// cgroupHier is one mounted hierarchy and this process's cgroup in it.
type cgroupHier struct {
	version     int      // 1 or 2
	controllers []string // v1 only, e.g. [memory] or [cpu cpuacct]
	dir         string   // this process's cgroup directory in it
}

// ownCgroups lists this process's cgroup directory in every mounted
// hierarchy, v1 and v2 alike. Named v1 hierarchies (name=systemd) hold no
// controllers and are left out: the jail never makes leaves there.
func ownCgroups(t *testing.T) []cgroupHier {
	t.Helper()
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatalf("read /proc/self/cgroup: %v", err)
	}
	mounts := cgroupMounts(t)
	var out []cgroupHier
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			t.Fatalf("/proc/self/cgroup line %q: want id:controllers:path", line)
		}
		h := cgroupHier{version: 1}
		if f[0] == "0" && f[1] == "" {
			h.version = 2
		} else {
			h.controllers = strings.Split(f[1], ",")
			if strings.HasPrefix(h.controllers[0], "name=") {
				continue
			}
		}
		for _, m := range mounts {
			if m.version != h.version || (h.version == 1 && !containsAll(m.opts, h.controllers)) {
				continue
			}
			rel, err := filepath.Rel(m.root, f[2])
			if err != nil || strings.HasPrefix(rel, "..") {
				continue // mounted from a subtree we are not in
			}
			h.dir = filepath.Join(m.point, rel)
			out = append(out, h)
			break
		}
	}
	return out
}

type cgroupMount struct {
	version int
	root    string   // the hierarchy's path this mount shows
	point   string   // where it is mounted
	opts    []string // super options: the controllers on v1
}

func cgroupMounts(t *testing.T) []cgroupMount {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatalf("open mountinfo: %v", err)
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root point opts [optional...] - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		m := cgroupMount{root: a[3], point: a[4], opts: strings.Split(b[2], ",")}
		switch b[0] {
		case "cgroup":
			m.version = 1
		case "cgroup2":
			m.version = 2
		default:
			continue
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read mountinfo: %v", err)
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
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
	if os.Getenv(requireCgroup2Env) == "1" && v != 2 {
		t.Fatalf("%s=1 but the memory controller is on cgroup v1 here: the VM harness should boot a pure cgroup v2 kernel", requireCgroup2Env)
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
func cgroupOf(t *testing.T, r result) *jail.CgroupReport {
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
func written(c *jail.CgroupReport, base string) (string, bool) {
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
