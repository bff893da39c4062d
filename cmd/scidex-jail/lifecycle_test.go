package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

func TestTimeoutKillsWholeTree(t *testing.T) {
	requireRoot(t)
	m := marker(t)
	// The target ignores SIGTERM, so only the kill after the grace ends it;
	// a child, a grandchild and a detached background process go with it.
	script := fmt.Sprintf(`trap '' TERM; sleep %[1]s & sh -c 'sleep %[1]s' & (setsid sleep %[1]s &); sleep %[1]s`, m)
	r := runJail(t, runOpts{}, "run", "--id", "timeout", "--tmp-root", tmpRoot(t), "--timeout", "1s", "--grace", "500ms", "--", "/bin/sh", "-c", script)
	wantStatus(t, r, report.StatusTimeout, 128+9)
	waitGone(t, m, 0)
	if !strings.Contains(r.report.CompletionNotes, "timeout") {
		t.Errorf("completion notes %q do not say timeout", r.report.CompletionNotes)
	}
}

func TestTimeoutTermEndsPoliteTarget(t *testing.T) {
	requireRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "polite", "--tmp-root", tmpRoot(t), "--timeout", "300ms", "--grace", "30s", "--", "/bin/sh", "-c",
		`trap 'echo got-term; exit 7' TERM; while :; do sleep 0.05; done`)
	wantStatus(t, r, report.StatusTimeout, 7)
	if !strings.Contains(r.stdout, "got-term") {
		t.Errorf("stdout = %q, want the target's TERM handler to have run", r.stdout)
	}
}

// startJail starts the binary and waits until the target printed "ready".
func startJail(t *testing.T, args ...string) (*exec.Cmd, func() result) {
	t.Helper()
	cmd, rep, _, errb := jailCmd(t, runOpts{}, args...)
	cmd.Stdout = nil
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("target did not say ready: %q, %v; stderr %s", line, err, errb)
	}
	var rest strings.Builder
	return cmd, func() result {
		io.Copy(&rest, br)
		err := cmd.Wait()
		r := finishJail(t, cmd, err, rep, &bytes.Buffer{}, errb)
		r.stdout = rest.String()
		return r
	}
}

func TestSignalsForwarded(t *testing.T) {
	requireRoot(t)
	cases := []struct {
		sig    syscall.Signal
		status report.Status
	}{
		{syscall.SIGTERM, report.StatusCancelled},
		{syscall.SIGINT, report.StatusCancelled},
		{syscall.SIGHUP, report.StatusCancelled},
		{syscall.SIGUSR1, report.StatusExitNonzero},
		{syscall.SIGUSR2, report.StatusExitNonzero},
		{syscall.SIGQUIT, report.StatusExitNonzero},
	}
	for _, c := range cases {
		t.Run(c.sig.String(), func(t *testing.T) {
			name := strings.ToUpper(strings.TrimPrefix(jailSigName(c.sig), "SIG"))
			cmd, wait := startJail(t, "run", "--id", "sig", "--tmp-root", tmpRoot(t), "--", "/bin/sh", "-c",
				fmt.Sprintf(`trap 'echo got-%s; exit 9' %s; echo ready; while :; do sleep 0.05; done`, name, name))
			cmd.Process.Signal(c.sig)
			r := wait()
			wantStatus(t, r, c.status, 9)
			if !strings.Contains(r.stdout, "got-"+name) {
				t.Errorf("stdout = %q, want the target to have got %s", r.stdout, name)
			}
		})
	}
}

// TestSignalToInitForwarded: a signal the analysis sends to PID 1 (the
// init) goes on to the target, as the supervisor's do, instead of ending
// the init and with it the run. The test waits until the init handles
// them, then lets the target signal (TestSigtermToInitAtOnce does not
// wait).
func TestSignalToInitForwarded(t *testing.T) {
	requireRoot(t)
	for _, sig := range []string{"TERM", "USR1", "QUIT"} {
		t.Run(sig, func(t *testing.T) {
			cmd, rep, out, errb := jailCmd(t, runOpts{}, "run", "--id", "sig1", "--tmp-root", tmpRoot(t), "--", "/bin/sh", "-c",
				fmt.Sprintf(`trap 'echo got-%[1]s; exit 9' %[1]s; read go; kill -%[1]s 1; while :; do sleep 0.05; done`, sig))
			cmd.Stdin = nil
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitSignalsHandled(t, initOf(t, cmd.Process.Pid))
			in.Write([]byte("go\n"))
			r := finishJail(t, cmd, cmd.Wait(), rep, out, errb)
			in.Close()
			wantStatus(t, r, report.StatusExitNonzero, 9)
			if !strings.Contains(r.stdout, "got-"+sig) {
				t.Errorf("stdout = %q, want the target to have got SIG%s back from PID 1", r.stdout, sig)
			}
		})
	}
}

// initOf is the pid of the init of the jail pid: its one child (forked by
// whichever of its threads), once there is one.
func initOf(t *testing.T, jailPid int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid, ok := childOf(t, jailPid); ok {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("jail %d has no init after 10 s", jailPid)
		}
		time.Sleep(time.Millisecond)
	}
}

func childOf(t *testing.T, jailPid int) (int, bool) {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", jailPid))
	if err != nil {
		t.Fatal(err)
	}
	var f []string
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		f = append(f, strings.Fields(string(b))...)
	}
	if len(f) > 1 {
		t.Fatalf("jail %d has children %q, want its init alone", jailPid, f)
	}
	if len(f) == 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid, true
}

func jailSigName(s syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP",
		syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGQUIT: "SIGQUIT"}[s]
}

func TestCancelThenKillAfterGrace(t *testing.T) {
	requireRoot(t)
	m := marker(t)
	root := tmpRoot(t)
	cmd, wait := startJail(t, "run", "--id", "stubborn", "--tmp-root", root, "--grace", "300ms", "--", "/bin/sh", "-c",
		fmt.Sprintf(`trap '' TERM; sleep %s & echo ready; wait`, m))
	cmd.Process.Signal(syscall.SIGTERM)
	r := wait()
	wantStatus(t, r, report.StatusCancelled, 128+9)
	waitGone(t, m, 0)
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after a cancelled run holds %v, want nothing", got)
	}
}

func TestJailSIGKILLLeavesNothing(t *testing.T) {
	requireRoot(t)
	m := marker(t)
	root := tmpRoot(t)
	cmd, wait := startJail(t, "run", "--id", "sigkill", "--tmp-root", root, "--", "/bin/sh", "-c",
		fmt.Sprintf(`sleep %[1]s & (setsid sleep %[1]s &); echo ready; sleep %[1]s`, m))
	if n := len(testutil.ProcessesWith(m)); n < 3 {
		t.Fatalf("before the kill, %d processes carry the marker, want at least the 3 sleeps", n)
	}
	cmd.Process.Kill()
	wait()
	waitGone(t, m, 5*time.Second)

	// The dead jail could not remove its directory; it is unlocked now, so
	// the next run with the ID takes it for a leftover, removes it and runs.
	if got := entries(t, root); len(got) != 1 {
		t.Fatalf("after SIGKILL the tmp-root holds %v, want the dead run's directory", got)
	}
	// Its cgroup leaf is left too, unlocked; the next run removes it once
	// it is older than the jail's 2 s margin for a leaf being made.
	if len(leavesOf(t, "sigkill")) == 0 {
		t.Fatalf("after SIGKILL no cgroup leaf of the run is left; the test cannot see the sweep work")
	}
	time.Sleep(2500 * time.Millisecond)
	r := runJail(t, runOpts{}, "run", "--id", "sigkill", "--tmp-root", root, "--", "/bin/true")
	if left := leavesOf(t, "sigkill"); len(left) != 0 {
		t.Errorf("cgroup leaves of the killed run left after the next run: %v", left)
	}
	wantStatus(t, r, report.StatusOK, 0)
	if len(r.report.Warnings) == 0 || !strings.Contains(strings.Join(r.report.Warnings, " "), "leftover") {
		t.Errorf("warnings = %q, want one about the removed leftover", r.report.Warnings)
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after the second run holds %v, want nothing", got)
	}
}

// TestJobWideSignal: a batch system (Slurm's scancel, its time limit) or a
// terminal signals every process of a job, the analysis perhaps before the
// jail. An analysis killed by SIGTERM whose jail gets its own SIGTERM a
// moment later is cancelled, not "killed by SIGTERM (not by the jail)";
// one killed by SIGTERM alone is still signaled.
func TestJobWideSignal(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name   string
		toJail bool
		status report.Status
	}{{"analysis then jail", true, report.StatusCancelled}, {"analysis alone", false, report.StatusSignaled}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, wait := startJail(t, "run", "--id", "jobwide", "--tmp-root", tmpRoot(t), "--", "/bin/sh", "-c", "echo ready; exec sleep 1000")
			init := initOf(t, cmd.Process.Pid)
			analysis, ok := childOf(t, init)
			if !ok {
				t.Fatalf("init %d has no child", init)
			}
			syscall.Kill(analysis, syscall.SIGTERM)
			if tc.toJail {
				// Later than the jail takes to list an empty run directory.
				time.Sleep(30 * time.Millisecond)
				cmd.Process.Signal(syscall.SIGTERM)
			}
			r := wait()
			wantStatus(t, r, tc.status, 128+int(syscall.SIGTERM))
		})
	}
}
