package cgroupfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/osthread"
)

// Tests of the v1 backend only.

// A Create that fails half way removes the leaves it made and leaves alone
// the directory it did not make.
func TestV1CreateFailureRemovesLeaves(t *testing.T) {
	requireVersion(t, 1)
	h, err := readHost()
	if err != nil {
		t.Fatalf("readHost() = %v", err)
	}
	lim := Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 1}, PIDsKey: {N: 20}}
	dirs, err := h.probeV1("", lim)
	if err != nil {
		t.Fatalf("probeV1() = %v", err)
	}
	if len(dirs) < 2 {
		t.Fatalf("probeV1() = %d hierarchies, want >= 2 (memory, cpu, pids)", len(dirs))
	}
	name := testName()
	// The last hierarchy already has a directory of that name: not ours.
	taken := filepath.Join(dirs[len(dirs)-1].parent, name)
	if err := os.Mkdir(taken, 0o755); err != nil {
		t.Fatalf("Mkdir(%s) = %v", taken, err)
	}
	t.Cleanup(func() { os.Remove(taken) })

	l, err := Create(Config{Name: name, Limits: lim})
	if err == nil {
		t.Cleanup(func() { l.Remove() })
		t.Fatalf("Create(%s) with %s taken = %v, nil, want an error", name, taken, l.Paths())
	}
	if !errors.Is(err, os.ErrExist) {
		t.Errorf("Create(%s) with %s taken = %v, want ErrExist", name, taken, err)
	}
	for _, d := range dirs[:len(dirs)-1] {
		assertGone(t, []string{filepath.Join(d.parent, name)})
	}
	if _, err := os.Stat(taken); err != nil {
		t.Errorf("os.Stat(%s) = %v, want the directory we did not create left in place", taken, err)
	}
}

// On v1 the leaf spans a hierarchy per controller; the usage of each must
// come from its own leaf.
func TestV1LeafSpansHierarchies(t *testing.T) {
	requireVersion(t, 1)
	l := newLeaf(t, Config{Limits: Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 1}, PIDsKey: {N: 20}}})
	for _, c := range []string{"memory", "cpu", "pids"} {
		d, ok := l.role[c]
		if !ok {
			t.Errorf("leaf has no %s hierarchy: %v", c, l.role)
			continue
		}
		if _, err := os.Stat(filepath.Join(d, c+".stat")); c == "cpu" && err != nil {
			t.Errorf("os.Stat(%s/cpu.stat) = %v, want the cpu hierarchy", d, err)
		}
	}
	if _, ok := l.FD(); ok {
		t.Errorf("FD() ok = true on v1, want false")
	}
}

// TestV1EnterThread: a thread that moves itself into the leaf forks a
// child born there, in every hierarchy; the jail's own process is never
// listed for a kill (a Kill of the leaf kills the child and not the test);
// and once the thread has ended the leaf is removed.
func TestV1EnterThread(t *testing.T) {
	requireVersion(t, 1)
	l := newLeaf(t, Config{Limits: Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 1}, PIDsKey: {N: 20}}})
	type res struct {
		cmd *exec.Cmd
		err error
	}
	got := make(chan res)
	tid := make(chan int, 1)
	osthread.Run(func() {
		tid <- unix.Gettid()
		if err := l.EnterThread(); err != nil {
			got <- res{err: err}
			return
		}
		cmd := exec.Command("/bin/sleep", "30")
		got <- res{cmd, cmd.Start()}
	})
	if <-tid == os.Getpid() {
		t.Errorf("osthread.Run ran f on the main thread, which cannot end")
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	assertIn(t, l, r.cmd.Process.Pid)
	if pids := procsIn(t, l); slices.Contains(pids, os.Getpid()) {
		t.Errorf("procsOf(leaf) = %v, holds the caller %d (a thread of it is in the leaf)", pids, os.Getpid())
	}
	if err := l.Kill(); err != nil {
		t.Fatalf("Kill() = %v", err)
	}
	waitSignaled(t, r.cmd)
}
