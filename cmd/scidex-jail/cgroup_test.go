package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// End-to-end tests of the run's cgroup leaf: limits enforced by the real
// kernel, the status and usage the report gives for them, and that no leaf
// outlives its run. They pass on both backends: cgroup v1 on the hybrid
// development hosts, cgroup v2 inside the VM harness (.ci/vmtests runs them
// there with -test.run TestCgroup), and each asserts the version the host
// has.

func TestCgroupMemoryBombInChild(t *testing.T) {
	requireRoot(t)
	m := marker(t)
	outside := bystander(t, m)
	id := runID(t, "oom")
	// --disk 0: a run directory tmpfs would be charged to the leaf too.
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--memory", "128M", "--disk", "0", "--", "/bin/sh", "-c",
		`/usr/bin/python3 -c "a = bytearray(400 << 20)"; echo child-done $?`)
	// The shell survives its child's death and exits 0; the report still
	// says why the analysis failed.
	wantStatus(t, r, report.StatusOOMKilled, 0)
	if !strings.Contains(r.stdout, "child-done 137") {
		t.Errorf("stdout = %q, want the shell to report its child killed by SIGKILL (child-done 137)", r.stdout)
	}
	c := cgroupOf(t, r)
	if c.Usage.OOMKills < 1 {
		t.Errorf("usage.oom_kills = %d, want >= 1", c.Usage.OOMKills)
	}
	if c.Usage.PeakMemoryBytes <= 0 || c.Usage.PeakMemoryBytes > 128<<20 {
		t.Errorf("usage.peak_memory_bytes = %d, want in (0, 128MiB]", c.Usage.PeakMemoryBytes)
	}
	if !strings.Contains(r.report.CompletionNotes, "out of memory") {
		t.Errorf("completion notes = %q, want them to say out of memory", r.report.CompletionNotes)
	}
	if pids := testutil.ProcessesWith(m); !slices.Contains(pids, outside.Process.Pid) {
		t.Errorf("bystander sleep %d outside the jail is gone (marker pids %v): the OOM kill reached beyond the leaf", outside.Process.Pid, pids)
	}
	wantNoLeaf(t, id, r)
}

func TestCgroupForkBombContained(t *testing.T) {
	requireRoot(t)
	m := marker(t)
	outside := bystander(t, m)
	id := runID(t, "forkbomb")
	// dash gives up at the first failed fork ("Cannot fork") and, with
	// set -e, the script fails: no retry loop, no wait for the sleeps.
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--pids", "50", "--", "/bin/sh", "-c",
		fmt.Sprintf(`set -e; for i in $(seq 200); do sleep %s & done; wait`, m))
	if r.report == nil {
		t.Fatalf("no report written; %v", r)
	}
	if r.report.Status != report.StatusPIDsLimit || r.code == 0 || r.report.ExitCode != r.code {
		t.Fatalf("status, exit = %s, %d (report %d), want %s and a non-zero exit; %v", r.report.Status, r.code, r.report.ExitCode, report.StatusPIDsLimit, r)
	}
	c := cgroupOf(t, r)
	if c.Usage.PIDsLimitHits <= 0 {
		t.Errorf("usage.pids_limit_hits = %d, want > 0", c.Usage.PIDsLimitHits)
	}
	if v, ok := written(c, "pids.max"); !ok || v != "50" {
		t.Errorf("written pids.max = %q (present %v), want 50", v, ok)
	}
	// Every sleep inside is gone with the run; the one outside is not.
	if pids := testutil.ProcessesWith(m); len(pids) != 1 || pids[0] != outside.Process.Pid {
		t.Errorf("processes carrying the marker after the run = %v, want only the bystander %d", pids, outside.Process.Pid)
	}
	wantNoLeaf(t, id, r)
}

func TestCgroupCPUQuota(t *testing.T) {
	requireRoot(t)
	id := runID(t, "cpu")
	// Two shell busy loops would use two CPUs unlimited, 40x the quota;
	// the wall-clock budget ends them (no interpreter to start: the VM
	// runs this under emulation). A quota this small is exceeded even on
	// a machine so loaded that the loops get a tenth of a CPU: the
	// throttling shows whatever else runs.
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--cpus", "0.05", "--timeout", "3s", "--grace", "100ms", "--",
		"/bin/sh", "-c", "while :; do :; done & while :; do :; done")
	if r.report == nil || r.report.Status != report.StatusTimeout {
		t.Fatalf("busy loops ended by --timeout: report %+v, want status timeout; %v", r.report, r)
	}
	c := cgroupOf(t, r)
	// What the kernel enforced, from the leaf's own counters (cpu.stat's
	// nr_periods, nr_throttled and throttled_time on v1, throttled_usec
	// on v2), never wall time: on a loaded machine the run's wall time
	// holds a slow startup and the loops get less than they ask for. The
	// loops wanted 2 CPUs: the quota cut them off (throttled), and in the
	// periods they ran they used at most 5 ms of each 100 ms.
	u := c.Usage
	if u.NrThrottled <= 0 || u.ThrottledUsec <= 0 {
		t.Errorf("cpu.stat nr_throttled = %d, throttled = %d us, want both > 0 under --cpus 0.05 (nr_periods %d)", u.NrThrottled, u.ThrottledUsec, u.NrPeriods)
	}
	// The leaf's own CPU time: rusage misses the loops the final kill took.
	used := u.CPUUserUsec + u.CPUSystemUsec
	const quotaUsec = 5_000
	// Slack: the scheduler hands runtime out in slices per CPU and the
	// tick accounts it late, a few ms a period on 2 CPUs; the unlimited
	// loops would use 200 ms a period.
	const slackUsec = 10_000
	bound := u.NrPeriods*(quotaUsec+slackUsec) + 10*quotaUsec
	if used <= 0 || used > bound {
		t.Errorf("leaf cpu = %d us over %d periods, want > 0 and at most %d (a quota of %d us a period and %d us of slack)", used, u.NrPeriods, bound, quotaUsec, slackUsec)
	}
	t.Logf("cpu %d us, %d periods, %d throttled (%d us), wall %.2f s", used, u.NrPeriods, u.NrThrottled, u.ThrottledUsec, r.report.WallSeconds)
	wantNoLeaf(t, id, r)
}

// TestCgroupLimitsWritten checks the report against the files the backend
// of this host has, with the values the flags asked for.
func TestCgroupLimitsWritten(t *testing.T) {
	requireRoot(t)
	id := runID(t, "limits")
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--memory", "256M", "--cpus", "1.5", "--pids", "64", "--", "/bin/true")
	wantStatus(t, r, report.StatusOK, 0)
	c := cgroupOf(t, r)
	version := hostCgroupVersion(t)
	if c.Version != version {
		t.Fatalf("enforced.cgroup.version = %d, want %d (the host's)", c.Version, version)
	}
	want := map[string]string{"pids.max": "64"}
	if version == 1 {
		want["memory.limit_in_bytes"] = "268435456"
		want["cpu.cfs_quota_us"] = "150000"
		want["cpu.cfs_period_us"] = "100000"
	} else {
		want["memory.max"] = "268435456"
		want["memory.swap.max"] = "0"
		want["cpu.max"] = "150000 100000"
	}
	for file, w := range want {
		if got, ok := written(c, file); !ok || got != w {
			t.Errorf("written[%s] = %q (present %v), want %q; written %v", file, got, ok, w, c.Written)
		}
	}
	// Every leaf sits directly in this process's cgroup of its hierarchy.
	var parents []string
	for _, h := range ownCgroups(t) {
		parents = append(parents, h.dir)
	}
	if len(c.Paths) == 0 {
		t.Errorf("enforced.cgroup.paths is empty")
	}
	for _, p := range c.Paths {
		if !slices.Contains(parents, filepath.Dir(p)) || !strings.HasPrefix(filepath.Base(p), "scidex-"+id+"-") {
			t.Errorf("leaf path %s is not scidex-%s-* directly below one of %v", p, id, parents)
		}
	}
	if c.Usage.PeakMemoryBytes <= 0 {
		t.Errorf("usage.peak_memory_bytes = %d, want > 0: the init ran in the leaf", c.Usage.PeakMemoryBytes)
	}
	if r.report.Limits.Values.Int(limits.Memory) != 256<<20 || r.report.Limits.Values.CPUs(limits.CPUQuota) != 1.5 || r.report.Limits.Values.Int(limits.PIDs) != 64 {
		t.Errorf("limits = %+v, want memory 256MiB, 1.5 CPUs, 64 pids", r.report.Limits)
	}
	wantNoLeaf(t, id, r)
}

// TestCgroupNoLeafLeft ends runs every way a run can end and checks that
// each one removed its leaf in every hierarchy.
func TestCgroupNoLeafLeft(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		name   string
		args   []string
		status report.Status
	}{
		{"ok", []string{"--", "/bin/true"}, report.StatusOK},
		{"exit nonzero", []string{"--", "/bin/sh", "-c", "exit 3"}, report.StatusExitNonzero},
		{"timeout", []string{"--timeout", "300ms", "--grace", "100ms", "--", "/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done"}, report.StatusTimeout},
		{"command not found", []string{"--", "no-such-command-xyz"}, report.StatusSetupError},
		{"oom", []string{"--memory", "64M", "--disk", "0", "--", "/usr/bin/python3", "-c", "a = bytearray(200 << 20)"}, report.StatusOOMKilled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := runID(t, "leaf")
			args := append([]string{"run", "--id", id, "--tmp-root", tmpRoot(t)}, c.args...)
			r := runJail(t, runOpts{}, args...)
			if r.report == nil || r.report.Status != c.status {
				t.Fatalf("scidex-jail %q: report %+v, want status %s; %v", args, r.report, c.status, r)
			}
			if r.report.Enforced.Cgroup == nil || len(r.report.Enforced.Cgroup.Paths) == 0 {
				t.Errorf("report has no cgroup leaf paths: %+v", r.report.Enforced.Cgroup)
			}
			wantNoLeaf(t, id, r)
		})
	}
	t.Run("cancel", func(t *testing.T) {
		id := runID(t, "leaf")
		cmd, wait := startJail(t, "run", "--id", id, "--tmp-root", tmpRoot(t), "--grace", "200ms", "--", "/bin/sh", "-c",
			"echo ready; while :; do sleep 1; done")
		// While the run lives its leaf is there, in every hierarchy with a
		// controller the jail uses: the listing below can see it.
		during := leavesOf(t, id)
		cmd.Process.Signal(syscall.SIGTERM)
		r := wait()
		wantStatus(t, r, report.StatusCancelled, 128+15)
		if len(during) == 0 || r.report.Enforced.Cgroup == nil || len(during) != len(r.report.Enforced.Cgroup.Paths) {
			t.Errorf("leaves seen during the run = %v, want the report's %v", during, r.report.Enforced.Cgroup)
		}
		wantNoLeaf(t, id, r)
	})
}

func TestCgroupThreadEnvDefaults(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cases := []struct {
		name string
		args []string
		want map[string]string // "" = unset
	}{
		{"half a CPU", []string{"--cpus", "0.5"}, map[string]string{"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}},
		{"one and a half", []string{"--cpus", "1.5"}, map[string]string{"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}},
		{"profile default", nil, map[string]string{"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}},
		{"caller sets one", []string{"--cpus", "3", "--env", "OMP_NUM_THREADS=7"}, map[string]string{"OMP_NUM_THREADS": "7", "OPENBLAS_NUM_THREADS": "3", "MKL_NUM_THREADS": "3"}},
		{"no quota", []string{"--cpus", "none"}, map[string]string{"OMP_NUM_THREADS": "", "OPENBLAS_NUM_THREADS": "", "MKL_NUM_THREADS": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"run", "--id", runID(t, "env"), "--tmp-root", root}, c.args...), "--", "/usr/bin/env")
			r := runJail(t, runOpts{env: []string{"OMP_NUM_THREADS=99"}}, args...)
			wantStatus(t, r, report.StatusOK, 0)
			got := map[string]string{}
			for _, kv := range strings.Split(r.stdout, "\n") {
				if k, v, ok := strings.Cut(kv, "="); ok && strings.HasSuffix(k, "_NUM_THREADS") {
					if _, dup := got[k]; dup {
						t.Errorf("%s is set twice in the environment", k)
					}
					got[k] = v
				}
			}
			for k, w := range c.want {
				if got[k] != w {
					t.Errorf("scidex-jail %q: %s = %q, want %q (env: %v)", c.args, k, got[k], w, got)
				}
			}
		})
	}
}

func TestCgroupBadLimits(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"memory below the init", []string{"--memory", "1M"}, "--memory"},
		{"pids below the runtime", []string{"--pids", "2"}, "--pids"},
		{"negative cpus", []string{"--cpus=-1"}, "--cpus"},
		{"unknown size unit", []string{"--memory", "12X"}, "--memory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := runID(t, "bad")
			args := append(append([]string{"run", "--id", id, "--tmp-root", root}, c.args...), "--", "/bin/true")
			r := runJail(t, runOpts{}, args...)
			if r.code != 125 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("scidex-jail %q = exit %d, stderr %q; want exit 125 naming %s", args, r.code, r.stderr, c.want)
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("tmp-root after a refused run holds %v, want nothing", got)
			}
			wantNoLeaf(t, id, r)
		})
	}
}
