package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// TestLimitsRefusedUpFront: values that would switch a limit off by
// accident, or that the kernel would refuse with a raw message, are refused
// before anything runs, saying what to give instead.
func TestLimitsRefusedUpFront(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cwd := t.TempDir()
	cfg := filepath.Join(cwd, "zero.json")
	os.WriteFile(cfg, []byte(`{"profiles": {"default": {"pids": 0}}}`), 0o644)
	big := filepath.Join(cwd, "big.json")
	os.WriteFile(big, []byte(`{"profiles": {"big": {"memory": "2G", "disk": "4G"}}}`), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"pids 0", []string{"--pids", "0"}, "write none for no limit"},
		{"cpus 0", []string{"--cpus", "0"}, "write none for no quota"},
		{"cpus NaN", []string{"--cpus", "NaN"}, "give a decimal number such as 0.5 or 2"},
		{"cpus Inf", []string{"--cpus", "Inf"}, "give a decimal number such as 0.5 or 2"},
		{"cpus negative", []string{"--cpus=-1"}, "none for no quota"},
		{"pids above the kernel's", []string{"--pids", "99999999999"}, "above the kernel's limit of 4194304"},
		{"disk above memory", []string{"--memory", "2G", "--disk", "1T"}, "give at most 2G"},
		{"shm above memory", []string{"--memory", "2G", "--shm", "1T"}, "give at most 2G"},
		{"disk above the machine", []string{"--memory", "0", "--disk", "1T"}, "this machine's memory"},
		{"shm above the machine", []string{"--memory", "none", "--shm", "1T"}, "this machine's memory"},
		{"shm 0", []string{"--shm", "0"}, "--shm 0"},
		{"swap none", []string{"--swap", "none"}, "--swap"},
		{"ro under /proc", []string{"--ro", "/proc/self"}, "give a path outside /proc, /sys and /dev"},
		{"ro under /sys", []string{"--ro", "/sys/kernel"}, "outside /proc, /sys and /dev"},
		{"ro /dev", []string{"--ro", "/dev"}, "outside /proc, /sys and /dev"},
		{"ro missing after ..", []string{"--ro", "nosuch/../x"}, "does not exist"},
		{"profile pids 0", []string{"--config", cfg}, "profiles.default.pids: 0 processes is refused"},
		{"profile disk above its memory", []string{"--config", big, "--profile", "big"}, "profiles.big.disk 4G is larger than the run's memory limit (profiles.big.memory 2G)"},
		{"profile disk above --memory", []string{"--config", big, "--profile", "big", "--memory", "1G", "--disk", "3G"}, "--disk 3G is larger than the run's memory limit (--memory 1G)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := runID(t, "lim")
			args := append(append([]string{"run", "--id", id, "--tmp-root", root}, c.args...), "--", "/bin/true")
			cmd := exec.Command(jailBin, args...)
			cmd.Dir = cwd
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 125 || !strings.Contains(string(out), c.want) {
				t.Errorf("scidex-jail %q = exit %d, %q; want exit 125 saying %q", args, cmd.ProcessState.ExitCode(), out, c.want)
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("refused run left %v in the tmp-root", got)
			}
			wantNoLeaf(t, id, result{})
		})
	}
}

// TestLimitsNoneReported: "none" switches a limit off, the report names it
// in limits.none, and no file of the kernel holds a limit for it.
func TestLimitsNoneReported(t *testing.T) {
	requireRoot(t)
	id := runID(t, "none")
	r := runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--pids", "none", "--cpus", "none", "--timeout", "none", "--", "/bin/true")
	wantStatus(t, r, report.StatusOK, 0)
	l := r.report.Limits
	for _, n := range []string{"pids", "cpus", "timeout"} {
		if !slices.Contains(l.None(), n) {
			t.Errorf("limits.none = %q, want it to name %s", l.None(), n)
		}
	}
	if slices.Contains(l.None(), "memory") || l.Values.Int(limits.PIDs) != 0 || l.Values.CPUs(limits.CPUQuota) != 0 {
		t.Errorf("limits = %+v, want memory on, pids and cpus 0 (none)", l)
	}
	c := cgroupOf(t, r)
	for _, f := range []string{"pids.max", "cpu.max", "cpu.cfs_quota_us"} {
		if v, ok := written(c, f); ok {
			t.Errorf("%s written as %q, want no limit written", f, v)
		}
	}
	// The default profile keeps its PID limit.
	r = runJail(t, runOpts{}, "run", "--id", id, "--tmp-root", tmpRoot(t), "--", "/bin/true")
	if v, ok := written(cgroupOf(t, r), "pids.max"); !ok || v != "512" || len(r.report.Limits.None()) != 0 {
		t.Errorf("default profile: pids.max = %q, %v, limits.none %q; want 512 and nothing off", v, ok, r.report.Limits.None())
	}
}

// TestReadOnlyPathsNormalised: --ro paths are resolved (relative to the
// current directory, links followed, ".." walked as the kernel does) and
// the report shows the resolved form.
func TestReadOnlyPathsNormalised(t *testing.T) {
	requireRoot(t)
	cwd := tmpRoot(t) // every directory above it searchable by the analysis
	real := filepath.Join(cwd, "real")
	os.MkdirAll(filepath.Join(real, "b"), 0o755)
	os.WriteFile(filepath.Join(real, "b", "f.txt"), []byte("seen"), 0o644)
	os.MkdirAll(filepath.Join(cwd, "x"), 0o755)
	os.Symlink(filepath.Join(real, "a"), filepath.Join(cwd, "x", "a")) // dangling until a exists
	os.MkdirAll(filepath.Join(real, "a"), 0o755)
	want := filepath.Join(real, "b")
	cmd, rep, out, errb := jailCmd(t, runOpts{}, "run", "--id", "norm", "--tmp-root", tmpRoot(t), "--ro", "x/a/../b", "--",
		"/bin/cat", filepath.Join(want, "f.txt"))
	cmd.Dir = cwd
	r := finishJail(t, cmd, cmd.Run(), rep, out, errb)
	wantStatus(t, r, report.StatusOK, 0)
	if r.stdout != "seen" {
		t.Errorf("reading the resolved path inside: %q, want \"seen\"", r.stdout)
	}
	if !slices.Contains(r.report.Enforced.Mounts.ReadOnly, want) {
		t.Errorf("enforced.mounts.read_only = %q, want the resolved %s (x/a is a link to real/a, so x/a/.. is real)", r.report.Enforced.Mounts.ReadOnly, want)
	}
}

// TestConfigFileBounded: the profiles file must be a regular file of at
// most 1 MiB; a FIFO or a device is refused at once by run, check and
// profiles, never read without end or waited on.
func TestConfigFileBounded(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, []byte(`{"profiles": {}}`+strings.Repeat(" ", 1<<20)), 0o644)
	cases := []struct {
		config, want string
	}{
		{"/dev/zero", "is a character device, not a regular file"},
		{fifo, "is a FIFO, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "more than the 1048576 a profiles file may have"},
	}
	for _, c := range cases {
		for _, sub := range [][]string{
			{"run", "--id", "cfg", "--tmp-root", tmpRoot(t), "--config", c.config, "--", "/bin/true"},
			{"check", "--config", c.config},
			{"profiles", "--config", c.config},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := exec.CommandContext(ctx, jailBin, sub...)
			out, _ := cmd.CombinedOutput()
			timedOut := ctx.Err() != nil
			cancel()
			if timedOut {
				t.Errorf("scidex-jail %q still running after 30 s; want a refusal at once", sub)
				continue
			}
			if cmd.ProcessState.ExitCode() != 125 || !strings.Contains(string(out), c.want) {
				t.Errorf("scidex-jail %q = exit %d, %q; want exit 125 saying %q", sub, cmd.ProcessState.ExitCode(), out, c.want)
			}
		}
	}
}
