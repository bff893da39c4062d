package cgroupfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/internal/testutil"
)

// Tests that move the test process between cgroups. They run only in the VM
// harness (SCIDEX_REQUIRE_CGROUP2=1), a throwaway pure cgroup v2 machine:
// on a shared host moving our own process is not ours to do.

// requireVM skips unless the VM harness runs the tests on a v2 host.
func requireVM(t *testing.T) host {
	t.Helper()
	requireVersion(t, 2)
	if !testutil.Cgroup2Required() {
		t.Skipf("moves the test process between cgroups: runs only in the VM harness (%s=1)", testutil.RequireCgroup2Env)
	}
	h, err := readHost()
	if err != nil {
		t.Fatalf("readHost() = %v", err)
	}
	return h
}

// moveSelf moves the test process into dir.
func moveSelfTo(t *testing.T, dir string) {
	t.Helper()
	if err := sysfile.Write(filepath.Join(dir, "cgroup.procs"), fmt.Sprint(os.Getpid())); err != nil {
		t.Fatalf("move test process to %s: %v", dir, err)
	}
}

// mkCgroup creates dir and removes it when the test ends.
func mkCgroup(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("Mkdir(%s) = %v", dir, err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("rmdir %s: %v", dir, err)
		}
	})
}

// returnHome moves the test process back to its cgroup when the test ends.
func returnHome(t *testing.T, h host) {
	t.Helper()
	home, err := h.v2.ownDir()
	if err != nil {
		t.Fatalf("own cgroup: %v", err)
	}
	t.Cleanup(func() { moveSelfTo(t, home) })
}

// A delegated parent, given explicitly, that holds no processes: the test
// process sits in a sibling, as a service manager's "runner" would.
func TestV2DelegatedParent(t *testing.T) {
	h := requireVM(t)
	for _, form := range []string{"directory", "cgroup path"} {
		t.Run(form, func(t *testing.T) {
			parent := filepath.Join(h.v2.mount, testName()+"-parent")
			mkCgroup(t, parent)
			mkCgroup(t, filepath.Join(parent, "runner"))
			returnHome(t, h)
			moveSelfTo(t, filepath.Join(parent, "runner"))

			arg := parent
			if form == "cgroup path" {
				arg = cgroupPath(h, parent)
			}
			l := newLeaf(t, Config{Parent: arg, Limits: Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 20}}})
			if got := filepath.Dir(l.Paths()[0]); got != parent {
				t.Errorf("leaf %s is in %s, want in %s", l.Paths()[0], got, parent)
			}
			sc := parseList(readTrimmed(t, filepath.Join(parent, "cgroup.subtree_control")))
			for _, c := range []string{"memory", "cpu", "pids"} {
				if !slices.Contains(sc, c) {
					t.Errorf("%s/cgroup.subtree_control = %v, want %s enabled", parent, sc, c)
				}
			}
			cmd := startIn(t, l, `x=$(head -c 300000000 /dev/zero | tr '\0' x)`, false)
			waitSignaled(t, cmd)
			if u, err := l.Usage(); err != nil || u.OOMKills < 1 || u.PeakMemoryBytes <= 0 {
				t.Errorf("Usage() = %+v, %v, want an OOM kill and a peak", u, err)
			}
			if err := l.Remove(); err != nil {
				t.Errorf("Remove() = %v, want nil", err)
			}
		})
	}
}

// The default parent is our own cgroup; when it holds us, the kernel's "no
// internal processes" rule makes Create move us to the supervisor leaf.
func TestV2SupervisorMove(t *testing.T) {
	h := requireVM(t)
	parent := filepath.Join(h.v2.mount, testName()+"-own")
	mkCgroup(t, parent)
	mkCgroup(t, filepath.Join(parent, supervisorLeaf)) // Create adopts it: EEXIST is fine there
	returnHome(t, h)
	moveSelfTo(t, parent)

	l := newLeaf(t, Config{Limits: Limits{MemoryKey: {N: 64 << 20}, PIDsKey: {N: 20}}})
	if got := filepath.Dir(l.Paths()[0]); got != parent {
		t.Errorf("leaf %s is in %s, want in %s", l.Paths()[0], got, parent)
	}
	sup := filepath.Join(parent, supervisorLeaf)
	if got, want := cgroup2Of(t, os.Getpid()), cgroupPath(h, sup); got != want {
		t.Errorf("test process cgroup after Create = %q, want %q", got, want)
	}
	if got, want := l.Written()[filepath.Join(sup, "cgroup.procs")], fmt.Sprint(os.Getpid()); got != want {
		t.Errorf("Written()[supervisor cgroup.procs] = %q, want %q", got, want)
	}
	cmd := startIn(t, l, "exec sleep 30", false)
	assertIn(t, l, cmd.Process.Pid)
}

// A parent holding a process that is not ours is refused, not emptied.
func TestV2ParentWithForeignProcess(t *testing.T) {
	h := requireVM(t)
	parent := filepath.Join(h.v2.mount, testName()+"-busy")
	mkCgroup(t, parent)
	busy := &Leaf{version: 2, dirs: []string{parent}, fd: -1} // to start a process in parent
	cmd := startIn(t, busy, "exec sleep 30", true)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	l, err := Create(Config{Parent: parent, Name: testName(), Limits: Limits{MemoryKey: {N: 64 << 20}}})
	if err == nil {
		l.Remove()
		t.Fatalf("Create(parent holding pid %d) = nil error, want ErrUnsupported", cmd.Process.Pid)
	}
	if !isUnsupported(err) {
		t.Errorf("Create(parent holding pid %d) = %v, want ErrUnsupported", cmd.Process.Pid, err)
	}
	if got := cgroup2Of(t, cmd.Process.Pid); got != cgroupPath(h, parent) {
		t.Errorf("foreign process moved to %q, want left in %q", got, cgroupPath(h, parent))
	}
}
