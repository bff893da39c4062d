package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// cgroup v2 only: they run in the VM harness (.ci/vmtests), whose kernel has
// a pure cgroup v2 hierarchy with every controller enabled at the root, and
// skip on hybrid hosts, where the controllers the jail uses are on v1.

// requireCgroup2 skips on a host whose memory controller is on cgroup v1;
// under the VM harness hostCgroupVersion fails instead.
func requireCgroup2(t *testing.T) {
	t.Helper()
	if v := hostCgroupVersion(t); v != 2 {
		t.Skipf("needs the memory, cpu and pids controllers on cgroup v2; this host has memory on cgroup v%d (hybrid): run it in the VM harness, .ci/vmtests", v)
	}
}

// On v2 the init is born inside its leaf (CLONE_INTO_CGROUP), so the whole
// run is charged to it from the first instruction. Inside, the cgroup
// namespace shows the leaf as "0::/"; from outside, the report is what
// shows it: v2 files written and memory used by the run.
func TestCgroupV2BornInLeaf(t *testing.T) {
	requireRoot(t)
	requireCgroup2(t)
	id := runID(t, "v2")
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--memory", "256M", "--cpus", "1", "--pids", "64", "--",
		"/bin/cat", "/proc/self/cgroup")
	wantStatus(t, r, report.StatusOK, 0)
	c := cgroupOf(t, r)
	if c.Version != 2 {
		t.Fatalf("enforced.cgroup.version = %d, want 2", c.Version)
	}
	for _, f := range []string{"memory.max", "memory.swap.max", "cpu.max", "pids.max"} {
		if _, ok := written(c, f); !ok {
			t.Errorf("written has no %s: %v", f, c.Written)
		}
	}
	if len(c.Paths) != 1 {
		t.Errorf("paths = %v, want the one v2 leaf", c.Paths)
	}
	if c.Usage.PeakMemoryBytes <= 0 {
		t.Errorf("usage.peak_memory_bytes = %d, want > 0", c.Usage.PeakMemoryBytes)
	}
	if strings.TrimSpace(r.stdout) != "0::/" {
		t.Errorf("/proc/self/cgroup inside = %q, want 0::/ (the leaf, seen through the cgroup namespace)", r.stdout)
	}
	wantNoLeaf(t, id, r)
}

// A delegated parent given with --cgroup-parent, as a service manager hands
// one out: it holds no processes (the no-internal-process rule lets it
// enable controllers for its children) and the jail's leaf goes below it.
func TestCgroupV2DelegatedParent(t *testing.T) {
	parent := delegatedV2Parent(t, "scidex-test-parent")

	id := runID(t, "deleg")
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--cgroup-parent", parent, "--memory", "128M", "--pids", "32", "--", "/bin/true")
	wantStatus(t, r, report.StatusOK, 0)
	c := cgroupOf(t, r)
	if len(c.Paths) != 1 || filepath.Dir(c.Paths[0]) != parent {
		t.Errorf("leaf paths = %v, want one directly below %s", c.Paths, parent)
	}
	for file := range c.Written {
		if !strings.HasPrefix(file, parent+"/") {
			t.Errorf("written %s lies outside the delegated parent %s", file, parent)
		}
	}
	if v, _ := written(c, "memory.max"); v != "134217728" {
		t.Errorf("written memory.max = %q, want 134217728", v)
	}
	wantNoLeaf(t, id, r, parent)
}

// delegatedV2Parent makes a cgroup named name at the root of the v2
// hierarchy (the VM's: never the host's), passing the memory, cpu and pids
// controllers on to its children, as a service manager delegates one; it
// is removed when the test ends. Only in the VM harness: a test that
// needs one skips elsewhere.
func delegatedV2Parent(t *testing.T, name string) string {
	t.Helper()
	requireRoot(t)
	requireCgroup2(t)
	if !testutil.Cgroup2Required() {
		t.Skipf("creates a cgroup at the root of the hierarchy: runs only in the VM harness (%s=1)", testutil.RequireCgroup2Env)
	}
	mounts, err := testutil.ReadMounts()
	if err != nil {
		t.Fatal(err)
	}
	mount := testutil.Cgroup2Mount(mounts)
	if mount == "" {
		t.Fatalf("no cgroup2 mount of the whole hierarchy found in mountinfo")
	}
	parent := filepath.Join(mount, name)
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatalf("mkdir %s: %v", parent, err)
	}
	t.Cleanup(func() {
		if err := os.Remove(parent); err != nil {
			t.Errorf("rmdir %s: %v", parent, err)
		}
	})
	// The root enables every controller for its children (the harness's
	// init); the parent passes them on to its own.
	ctl := filepath.Join(parent, "cgroup.subtree_control")
	if err := os.WriteFile(ctl, []byte("+memory +cpu +pids"), 0o644); err != nil {
		t.Fatalf("write %s: %v", ctl, err)
	}
	return parent
}
