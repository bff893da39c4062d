package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// Tests of the v2 backend. The "core" ones need only a writable cgroup2
// mount, no controllers: they run on hybrid hosts too (the development
// machines have /sys/fs/cgroup/unified) and cover CLONE_INTO_CGROUP,
// cgroup.kill, the freeze fallback, cpu.stat and removal. Limits need the
// controllers: those tests run in the VM harness (SCIDEX_REQUIRE_CGROUP2=1).

// requireCgroup2Mount returns this process's cgroup2 directory, where the
// test may create leaves, or skips naming what is missing.
func requireCgroup2Mount(t *testing.T) (host, string) {
	t.Helper()
	h, err := readHost()
	if err != nil {
		t.Fatalf("readHost() = %v", err)
	}
	var why string
	var dir string
	if h.v2 == nil {
		why = "no cgroup2 mount in /proc/self/mountinfo"
	} else if dir, err = h.v2.ownDir(); err != nil {
		why = err.Error()
	} else if err = h.checkWritable(Info{Version: 2, Parents: []string{dir}}); err != nil {
		why = err.Error()
	}
	if why == "" {
		return h, dir
	}
	if testutil.Cgroup2Required() {
		t.Fatalf("%s=1 but cgroup v2 is not usable: %s", testutil.RequireCgroup2Env, why)
	}
	t.Skipf("cgroup v2 not usable: %s", why)
	return h, ""
}

// newV2CoreLeaf creates a v2 leaf without controllers or limits in this
// process's own cgroup2 directory and removes it when the test ends.
func newV2CoreLeaf(t *testing.T) (*Leaf, host) {
	t.Helper()
	h, parent := requireCgroup2Mount(t)
	l := &Leaf{version: 2, role: map[string]string{}, fd: -1, written: map[string]string{}}
	if err := l.makeV2(parent, Config{Name: testName()}); err != nil {
		if rerr := l.Remove(); rerr != nil {
			t.Errorf("Remove() after failed makeV2 = %v", rerr)
		}
		t.Fatalf("makeV2(%s) = %v, want nil", parent, err)
	}
	t.Cleanup(func() {
		if err := l.Remove(); err != nil {
			t.Errorf("Remove() = %v, want nil", err)
		}
		assertGone(t, l.Paths())
	})
	return l, h
}

// cgroup2Of is the "0::" path of /proc/<pid>/cgroup.
func cgroup2Of(t *testing.T, pid int) string {
	t.Helper()
	lines, err := parseProcCgroup(readTrimmed(t, fmt.Sprintf("/proc/%d/cgroup", pid)))
	if err != nil {
		t.Fatalf("parseProcCgroup(/proc/%d/cgroup) = %v", pid, err)
	}
	for _, l := range lines {
		if l.ID == 0 && len(l.Controllers) == 0 {
			return l.Path
		}
	}
	t.Fatalf("/proc/%d/cgroup has no cgroup2 line", pid)
	return ""
}

// cgroupPath is the cgroup path of dir as /proc/<pid>/cgroup shows it.
func cgroupPath(h host, dir string) string {
	return filepath.Join(h.v2.root, strings.TrimPrefix(dir, h.v2.mount))
}

func TestV2CloneIntoCgroup(t *testing.T) {
	l, h := newV2CoreLeaf(t)
	fd, ok := l.FD()
	if !ok || fd < 0 {
		t.Fatalf("FD() = %d, %v, want an open fd", fd, ok)
	}
	cmd := startIn(t, l, "exec sleep 30", false)
	// Born in the leaf: the first look already finds it there.
	if got, want := cgroup2Of(t, cmd.Process.Pid), cgroupPath(h, l.Paths()[0]); got != want {
		t.Errorf("cgroup of child started with CgroupFD = %q, want %q", got, want)
	}
	assertIn(t, l, cmd.Process.Pid)
}

func TestV2CgroupKill(t *testing.T) {
	l, _ := newV2CoreLeaf(t)
	if _, err := os.Stat(filepath.Join(l.Paths()[0], "cgroup.kill")); err != nil {
		t.Fatalf("os.Stat(cgroup.kill) = %v, want it (Linux 5.14+)", err)
	}
	cmd := startIn(t, l, "sleep 30 & sleep 30 & exec sleep 30", false)
	if err := l.Kill(); err != nil {
		t.Fatalf("Kill() = %v, want nil", err)
	}
	waitSignaled(t, cmd)
	if got := procsIn(t, l); len(got) != 0 {
		t.Errorf("procs after Kill() = %v, want none", got)
	}
}

func TestV2KillFrozenFallback(t *testing.T) {
	l, _ := newV2CoreLeaf(t)
	cmd := startIn(t, l, "sleep 30 & sleep 30 & exec sleep 30", false)
	if err := l.killFrozen(time.Now().Add(drainTimeout)); err != nil {
		t.Fatalf("killFrozen() = %v, want nil", err)
	}
	waitSignaled(t, cmd)
	if got := procsIn(t, l); len(got) != 0 {
		t.Errorf("procs after killFrozen() = %v, want none", got)
	}
	if got := readTrimmed(t, filepath.Join(l.Paths()[0], "cgroup.freeze")); got != "0" {
		t.Errorf("cgroup.freeze after killFrozen() = %q, want \"0\" (thawed)", got)
	}
}

func TestV2RemoveKillsLiveProcess(t *testing.T) {
	l, _ := newV2CoreLeaf(t)
	cmd := startIn(t, l, "sleep 30 & exec sleep 30", false)
	if err := l.Remove(); err != nil {
		t.Fatalf("Remove() = %v, want nil", err)
	}
	waitSignaled(t, cmd)
	assertGone(t, l.Paths())
	if _, ok := l.FD(); ok {
		t.Errorf("FD() ok = true after Remove(), want false")
	}
}

func TestV2CPUStat(t *testing.T) {
	l, _ := newV2CoreLeaf(t)
	cmd := startIn(t, l, `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done`, false)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Wait() = %v, want nil", err)
	}
	u, err := l.Usage()
	if err != nil {
		t.Fatalf("Usage() = %v, want nil", err)
	}
	if u.CPUUsageUsec <= 0 || u.CPUUserUsec+u.CPUSystemUsec <= 0 {
		t.Errorf("Usage() = %+v, want CPU time > 0 after a busy loop", u)
	}
}

func TestMissingV2Message(t *testing.T) {
	tests := []struct {
		name string
		info Info
		want []string
		msg  string
	}{
		{"hybrid", Info{Parents: []string{"/sys/fs/cgroup/unified"}, Controllers: []string{"hugetlb"}}, []string{"memory"},
			"cgroup v2 memory controller not available: /sys/fs/cgroup/unified has controllers [hugetlb] ("},
		{"two", Info{Parents: []string{"/sys/fs/cgroup/a"}, Controllers: []string{"memory"}}, []string{"memory", "cpu", "pids"},
			"cgroup v2 cpu, pids controllers not available: /sys/fs/cgroup/a has controllers [memory] ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := missingV2(tt.info, tt.want)
			if !errors.Is(err, ErrUnsupported) || !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("missingV2(%+v, %v) = %v, want ErrUnsupported starting %q", tt.info, tt.want, err, tt.msg)
			}
		})
	}
	if err := missingV2(Info{Parents: []string{"/x"}, Controllers: []string{"cpu", "memory"}}, []string{"memory"}); err != nil {
		t.Errorf("missingV2(memory offered) = %v, want nil", err)
	}
}

// TestProbeV2 checks the probe against this host, whichever it is.
func TestProbeV2(t *testing.T) {
	h, err := readHost()
	if err != nil {
		t.Fatalf("readHost() = %v", err)
	}
	info, err := h.probeV2("")
	switch {
	case err == nil:
		if info.Version != 2 || !slices.Contains(info.Controllers, "memory") {
			t.Errorf("probeV2(\"\") = %+v, nil, want version 2 with memory", info)
		}
	case h.v2 != nil && !testutil.Cgroup2Required():
		// A hybrid host: the message names the parent and what it offers.
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "cgroup v2 memory controller not available: ") ||
			!strings.Contains(err.Error(), " has controllers [") {
			t.Errorf("probeV2(\"\") = %v, want ErrUnsupported naming the parent's controllers", err)
		}
	default:
		t.Errorf("probeV2(\"\") = %v; the host has cgroup2: %v, %s=%q", err, h.v2 != nil, testutil.RequireCgroup2Env, os.Getenv(testutil.RequireCgroup2Env))
	}
}
