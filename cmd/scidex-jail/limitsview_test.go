package main

import (
	_ "embed"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// limitsScript prints what the analysis sees of its limits, one key=value
// a line: nproc without OMP_NUM_THREADS (which nproc honours) counts the
// affinity; Python's os.cpu_count reads /sys/devices/system/cpu/online.
const limitsScript = `
echo "memtotal=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
echo "memavailable=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)"
echo "nproc=$(env -u OMP_NUM_THREADS nproc)"
python3 -c 'import os; print("cpu_count=%d\naffinity=%d" % (os.cpu_count(), len(os.sched_getaffinity(0))))'
echo "memlimit=$(cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)"
echo "cpuquota=$(cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null)"
`

// hostMemKB is key's value in this machine's /proc/meminfo.
func hostMemKB(t *testing.T, key string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			n, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/meminfo", key)
	return 0
}

func TestSeesOwnLimits(t *testing.T) {
	requireRoot(t)
	host := strconv.Itoa(runtime.NumCPU()) // the test's own affinity
	hostMem := strconv.FormatInt(hostMemKB(t, "MemTotal"), 10)
	cases := []struct {
		name  string
		flags []string
		want  map[string]string
		v2    map[string]string // what differs on cgroup v2
	}{
		{"256M, 1 CPU", []string{"--memory", "256M", "--cpus", "1"}, map[string]string{
			"memtotal": "262144", "nproc": "1", "cpu_count": "1", "affinity": "1",
			"memlimit": "268435456", "cpuquota": "100000",
		}, map[string]string{"cpuquota": "100000 100000"}},
		{"half a CPU is one", []string{"--memory", "512M", "--cpus", "0.5"}, map[string]string{
			"memtotal": "524288", "memlimit": "536870912", "nproc": "1", "cpu_count": "1", "affinity": "1", "cpuquota": "50000",
		}, map[string]string{"cpuquota": "50000 100000"}},
		{"no CPU quota", []string{"--memory", "256M", "--cpus", "none"}, map[string]string{
			"memtotal": "262144", "nproc": host, "cpu_count": host, "affinity": host,
		}, nil},
		// Nothing enforces the limits: the analysis sees the host's.
		{"cgroup layer disabled", []string{"--memory", "256M", "--cpus", "1", "--unsafe-disable", "cgroup"}, map[string]string{
			"memtotal": hostMem, "nproc": host, "cpu_count": host, "affinity": host, "memlimit": "", "cpuquota": "",
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--id", "limits", "--tmp-root", tmpRoot(t)}, c.flags...)
			r := runJail(t, runOpts{}, append(args, "--", "/bin/sh", "-c", limitsScript)...)
			wantStatus(t, r, report.StatusOK, 0)
			got := map[string]string{}
			for _, line := range strings.Split(r.stdout, "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					got[k] = v
				}
			}
			want := c.want
			if cg := r.report.Enforced.Cgroup; cg != nil && cg.Version == 2 {
				for k, v := range c.v2 {
					want[k] = v
				}
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("inside: %s = %q, want %q\n%s", k, got[k], v, r)
				}
			}
			// A snapshot at the start: what the limit left, never more.
			total, _ := strconv.ParseInt(got["memtotal"], 10, 64)
			if av, err := strconv.ParseInt(got["memavailable"], 10, 64); err != nil || av <= 0 || av > total {
				t.Errorf("inside: MemAvailable = %q kB, want 0 < it <= MemTotal %d kB", got["memavailable"], total)
			}
			if n := strings.Count(r.report.Enforced.CPUs, ",") + strings.Count(r.report.Enforced.CPUs, "-"); got["affinity"] == "1" && n != 0 {
				t.Errorf("enforced.cpus = %q, want one CPU", r.report.Enforced.CPUs)
			}
		})
	}
}

//go:embed testdata/test_sizing.py
var sizingSuite string

// TestSuiteSizesItself runs a real pytest suite inside the jail whose
// 1 GiB test checks MemAvailable first: under a 256 MiB limit it skips
// itself and the run ends ok, where the host's meminfo would have let it
// allocate and be OOM-killed; with 2 GiB it runs and passes.
func TestSuiteSizesItself(t *testing.T) {
	requireRoot(t)
	// With 2 GiB the limit leaves enough, unless the machine does not
	// have it (a VM of 1 GiB): MemAvailable is the smaller of the two.
	big := "2 passed"
	if hostMemKB(t, "MemAvailable") < 1<<20+256<<10 {
		big = "1 passed, 1 skipped"
	}
	cases := []struct {
		memory, want string
	}{
		{"256M", "1 passed, 1 skipped"},
		{"2G", big},
	}
	for _, c := range cases {
		t.Run(c.memory, func(t *testing.T) {
			// -p no:cacheprovider: pytest's .pytest_cache/ is not an output either.
			script := `cat > test_sizing.py && python3 -m pytest -p no:cacheprovider -q -rs test_sizing.py`
			r := runJail(t, runOpts{stdin: sizingSuite}, "run", "--id", "sizing", "--tmp-root", tmpRoot(t),
				"--memory", c.memory, "--disk", "1M", "--cpus", "1", "--", "/bin/sh", "-c", script)
			wantStatus(t, r, report.StatusOK, 0)
			if !strings.Contains(r.stdout, c.want) {
				t.Errorf("pytest with --memory %s: want %q in its summary\n%s", c.memory, c.want, r)
			}
			if u := r.report.Enforced.Cgroup.Usage; u == nil || u.OOMKills != 0 {
				t.Errorf("cgroup usage = %+v, want no OOM kill", u)
			}
		})
	}
}

// TestRootlessLimitsAndScratch: rootless, without a delegated cgroup (the
// layer off by name), the scratch still keeps caches out of the outputs,
// and the analysis sees the machine's memory and CPUs, which are then the
// truth: nothing enforces the profile's limits.
func TestRootlessLimitsAndScratch(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	if err := os.Chmod(root, 0o1777); err != nil {
		t.Fatal(err)
	}
	rep := root + "/report.json"
	script := `mkdir -p "$XDG_CACHE_HOME" && echo cache > "$XDG_CACHE_HOME/x" && echo t > "$TMPDIR/t" && echo result > result.txt` + limitsScript
	cmd := exec.Command(jailBin, "run", "--id", "rootless-view", "--tmp-root", root, "--report", rep,
		"--memory", "256M", "--cpus", "1", "--unsafe-disable", "cgroup", "--", "/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.Output()
	r := finishJail(t, cmd, nil, rep, nil, nil)
	r.code, r.stdout = cmd.ProcessState.ExitCode(), string(out)
	wantStatus(t, r, report.StatusOK, 0)
	host := strconv.Itoa(runtime.NumCPU())
	for _, line := range []string{"memtotal=" + strconv.FormatInt(hostMemKB(t, "MemTotal"), 10), "nproc=" + host, "cpu_count=" + host, "memlimit="} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("inside: want %q\n%s", line, r)
		}
	}
	if len(r.report.Outputs) != 1 || r.report.Outputs[0].Path != "result.txt" {
		t.Errorf("outputs = %+v, want result.txt only", r.report.Outputs)
	}
	if m := r.report.Enforced.Mounts.Meminfo; !strings.Contains(m, "host") {
		t.Errorf("enforced.mounts.meminfo = %q, want the host's named", m)
	}
}
