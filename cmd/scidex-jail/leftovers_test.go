package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// gc runs `scidex-jail gc` and returns what it printed.
func gc(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(jailBin, append([]string{"gc"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scidex-jail gc %q: %v; %s", args, err, out)
	}
	return string(out)
}

// killedRun starts a run that writes a 5 MB file into a host-bound run
// directory (--disk 0) and SIGKILLs its jail once the target said ready.
// It returns the run directory, left behind.
func killedRun(t *testing.T, root, id string, extra ...string) string {
	t.Helper()
	m := marker(t)
	args := append([]string{"run", "--id", id, "--tmp-root", root, "--disk", "0"}, extra...)
	args = append(args, "--", "/bin/sh", "-c", "head -c 5000000 /dev/zero > big; mkdir sub; ln -s /etc/passwd sub/link; echo ready; sleep "+m)
	cmd, wait := startJail(t, args...)
	cmd.Process.Kill()
	wait()
	waitGone(t, m, 5*time.Second)
	dir := filepath.Join(root, "scidex-analysis-"+id)
	if fi, err := os.Stat(filepath.Join(dir, "big")); err != nil || fi.Size() != 5000000 {
		t.Fatalf("after SIGKILL the run directory %s holds no 5 MB file (%v): the test cannot see the sweep work", dir, err)
	}
	return dir
}

// TestSweepDeadRunOfAnotherID: a run directory a SIGKILLed jail left, with
// its files (--disk 0), is removed by a later run of any ID (the first that
// starts runfiles.SweepInterval after the tmp-root was last swept), and by gc
// at any time; links in it are removed as links. A kept directory is left
// alone.
func TestSweepDeadRunOfAnotherID(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "kept", "--tmp-root", root, "--keep", "--", "/bin/sh", "-c", "echo k > k.txt")
	wantStatus(t, r, report.StatusOK, 0)
	dead := killedRun(t, root, "dead1")

	// The runs above swept (or skipped, just after one that did); the next
	// one that starts an interval later sweeps.
	time.Sleep(runfiles.SweepInterval)
	r = runJail(t, runOpts{}, "run", "--id", "other", "--tmp-root", root, "--", "/bin/true")
	wantStatus(t, r, report.StatusOK, 0)
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("dead run's directory %s still there after a run with another ID (lstat: %v)", dead, err)
	}
	if w := strings.Join(r.report.Warnings, "\n"); !strings.Contains(w, dead) || !strings.Contains(w, "leftover") {
		t.Errorf("warnings = %q, want one naming the removed leftover %s", r.report.Warnings, dead)
	}
	if b, err := os.ReadFile("/etc/passwd"); err != nil || len(b) == 0 {
		t.Errorf("/etc/passwd after the sweep: %v; the link in the dead directory must not be followed", err)
	}
	if got := entries(t, root); len(got) != 1 || got[0] != "scidex-analysis-kept" {
		t.Errorf("tmp-root after the sweep holds %v, want only the kept directory", got)
	}

	dead = killedRun(t, root, "dead2")
	out := gc(t, "--tmp-root", root)
	if !strings.Contains(out, "removed "+dead) {
		t.Errorf("gc printed %q, want it to name %s", out, dead)
	}
	if got := entries(t, root); len(got) != 1 || got[0] != "scidex-analysis-kept" {
		t.Errorf("tmp-root after gc holds %v, want only the kept directory", got)
	}
}

// TestSweepHalfMadeLeftovers: a .new run directory and a temporary report
// of a dead jail are removed (by the next run, by gc); the same names held
// by a live lock, or not of this jail's making, are not.
func TestSweepHalfMadeLeftovers(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	reports := t.TempDir()
	mkdir := func(name string, uid int) string {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o600)
		os.Chown(p, uid, uid)
		return p
	}
	file := func(name string, uid int) string {
		p := filepath.Join(reports, name)
		if err := os.WriteFile(p, []byte(`{"partial`), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, uid, uid)
		return p
	}
	hold := func(p string) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
	}
	deadNew := mkdir(".scidex-analysis-x.0123456789ab.new", 0)
	liveNew := mkdir(".scidex-analysis-y.0123456789ab.new", 0)
	hold(liveNew)
	foreignNew := mkdir(".scidex-analysis-z.0123456789ab.new", 4242)
	unmarked := mkdir("scidex-analysis-unmarked", 0) // e.g. kept by an older jail
	deadTmp := file(".r.json.scidex-0123456789ab.tmp", 0)
	liveTmp := file(".s.json.scidex-ba9876543210.tmp", 0)
	hold(liveTmp)
	foreignTmp := file(".t.json.scidex-aaaaaaaaaaaa.tmp", 4242)
	other := file(".u.json.12345.tmp", 0) // not our pattern

	report := filepath.Join(reports, "r.json")
	cmd := exec.Command(jailBin, "run", "--id", "sweeper", "--tmp-root", root, "--report", report, "--", "/bin/true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v; %s", err, out)
	}
	for _, p := range []string{deadNew, deadTmp} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("dead leftover %s still there after a run (lstat: %v)", p, err)
		}
	}
	for _, p := range []string{liveNew, foreignNew, unmarked, liveTmp, foreignTmp, other, report} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s, not a dead jail's, was removed: %v", p, err)
		}
	}

	// gc finds them too.
	deadNew = mkdir(".scidex-analysis-x.0123456789ac.new", 0)
	deadTmp = file(".r.json.scidex-0123456789ac.tmp", 0)
	out := gc(t, "--tmp-root", root, "--report-dir", reports)
	for _, p := range []string{deadNew, deadTmp} {
		if !strings.Contains(out, "removed "+p) {
			t.Errorf("gc printed %q, want it to name %s", out, p)
		}
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("dead leftover %s still there after gc (lstat: %v)", p, err)
		}
	}
}

// TestGCBadInput: gc refuses a relative or missing tmp-root.
func TestGCBadInput(t *testing.T) {
	requireRoot(t)
	for _, args := range [][]string{{"--tmp-root", "tmp"}, {"--tmp-root", "/nonexistent/x"}, {"--report-dir", "rel"}} {
		cmd := exec.Command(jailBin, append([]string{"gc"}, args...)...)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != 125 {
			t.Errorf("scidex-jail gc %q = exit %d, %q; want 125", args, cmd.ProcessState.ExitCode(), out)
		}
	}
}

// TestReportNeverPartial: the report appears whole or not at all, and no
// temporary file is left beside it on any path the jail survives.
func TestReportNeverPartial(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	report := filepath.Join(dir, "r.json")
	for i := 0; i < 3; i++ {
		cmd := exec.Command(jailBin, "run", "--id", fmt.Sprintf("rep%d", i), "--tmp-root", tmpRoot(t), "--report", report, "--", "/bin/true")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run: %v; %s", err, out)
		}
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != "r.json" {
		t.Errorf("report directory holds %v, want only r.json", got)
	}
}
