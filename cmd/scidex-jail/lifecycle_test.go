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
	"sync"
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
// init; "kill 0" in a shell of its process group reaches it too) goes on
// to the target, as the supervisor's do, instead of ending the init and
// with it the run. The init registers for them once the target runs: the
// test waits until the init handles them, then lets the target signal.
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

func TestRunDirectoryLifecycle(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "life", "--tmp-root", root, "--", "/bin/sh", "-c", "echo data > out.txt; mkdir sub; echo x > sub/y")
	wantStatus(t, r, report.StatusOK, 0)
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after the run holds %v, want nothing", got)
	}
	if len(r.report.Outputs) != 3 {
		t.Errorf("outputs = %+v, want out.txt, sub, sub/y", r.report.Outputs)
	}
	for _, o := range r.report.Outputs {
		if o.Path == "out.txt" && (o.Size != 5 || o.SHA256 != "6667b2d1aab6a00caa5aee5af8ad9f1465e567abf1c209d15727d57b3e8f6e5f") {
			t.Errorf("out.txt = %+v, want size 5 and the sha256 of \"data\\n\"", o)
		}
	}

	r = runJail(t, runOpts{}, "run", "--id", "kept", "--tmp-root", root, "--keep", "--", "/bin/sh", "-c", "echo k > kept.txt")
	wantStatus(t, r, report.StatusOK, 0)
	dir := filepath.Join(root, "scidex-analysis-kept")
	if b, err := os.ReadFile(filepath.Join(dir, "kept.txt")); err != nil || string(b) != "k\n" {
		t.Errorf("with --keep, kept.txt = %q, %v; want \"k\\n\"", b, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("run directory mode = %v, %v; want 0700", fi.Mode(), err)
	}
	// A kept directory is a leftover for the next run with that ID: it is
	// not locked, so it is cleaned up and the run goes ahead.
	r = runJail(t, runOpts{}, "run", "--id", "kept", "--tmp-root", root, "--", "/bin/sh", "-c", "ls")
	wantStatus(t, r, report.StatusOK, 0)
	if r.stdout != "" {
		t.Errorf("a fresh run directory holds %q, want nothing", r.stdout)
	}
	if len(r.report.Warnings) == 0 {
		t.Errorf("report warnings are empty, want a note about the removed leftover")
	}
}

func TestPlantedSymlinkRefused(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "precious"), []byte("keep me"), 0o644)
	link := filepath.Join(root, "scidex-analysis-planted")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	r := runJail(t, runOpts{}, "run", "--id", "planted", "--tmp-root", root, "--", "/bin/sh", "-c", "rm -rf ./*; echo pwned > x")
	if r.code != 125 || !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("run over a planted symlink: %v; want exit 125 saying it is not a directory", r)
	}
	if got := entries(t, victim); len(got) != 1 || got[0] != "precious" {
		t.Errorf("link target now holds %v, want only precious", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("planted link was changed: %v, %v", fi, err)
	}
	if got := entries(t, root); len(got) != 1 {
		t.Errorf("tmp-root holds %v, want only the planted link", got)
	}
	// A directory of another user is refused too.
	os.Remove(link)
	os.Mkdir(link, 0o700)
	os.Chown(link, 4242, 4242)
	r = runJail(t, runOpts{}, "run", "--id", "planted", "--tmp-root", root, "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "belongs to uid 4242") {
		t.Errorf("run over another user's directory: %v; want exit 125 naming the owner", r)
	}
}

func TestTargetSymlinksNotFollowed(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	victim := t.TempDir()
	os.Chmod(victim, 0o755)
	secret := filepath.Join(victim, "secret")
	os.WriteFile(secret, []byte("host secret"), 0o644)
	collectDir := filepath.Join(t.TempDir(), "collected")
	script := fmt.Sprintf("ln -s %s dirlink; ln -s %s filelink; ln -s /etc/passwd passwd; echo ok > real.txt", victim, secret)
	r := runJail(t, runOpts{}, "run", "--id", "links", "--tmp-root", root, "--collect", collectDir, "--", "/bin/sh", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	if b, err := os.ReadFile(secret); err != nil || string(b) != "host secret" {
		t.Errorf("after cleanup the link target = %q, %v; want untouched", b, err)
	}
	if got := entries(t, collectDir); len(got) != 1 || got[0] != "real.txt" {
		t.Errorf("collected %v, want only real.txt", got)
	}
	types := map[string]string{}
	for _, o := range r.report.Outputs {
		types[o.Path] = o.Type
	}
	for _, p := range []string{"dirlink", "filelink", "passwd"} {
		if types[p] != "symlink" {
			t.Errorf("output %s listed as %q, want symlink", p, types[p])
		}
	}
}

func TestConcurrentDuplicateRefused(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cmd, wait := startJail(t, "run", "--id", "dup", "--tmp-root", root, "--", "/bin/sh", "-c", "echo ready; while :; do sleep 0.05; done")
	_ = cmd
	r := runJail(t, runOpts{}, "run", "--id", "dup", "--tmp-root", root, "--", "/bin/true")
	if r.code != 125 || !strings.Contains(r.stderr, "still in progress") {
		t.Errorf("second run with the same ID: %v; want exit 125 saying it is in progress", r)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	first := wait()
	wantStatus(t, first, report.StatusCancelled, 128+15)
}

func TestParallelRuns(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	var wg sync.WaitGroup
	results := make([]result, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runJail(t, runOpts{}, "run", "--id", fmt.Sprintf("par-%d", i), "--tmp-root", root, "--", "/bin/sh", "-c", "echo $SCIDEX_ANALYSIS_ID > id; cat id")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if want := fmt.Sprintf("par-%d\n", i); r.code != 0 || r.stdout != want {
			t.Errorf("run %d: %v; want exit 0 printing %q", i, r, want)
		}
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("tmp-root after 20 runs holds %v, want nothing", got)
	}
}

func TestBadInput(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"empty id", []string{"--id", "", "--", "true"}, "--id is empty"},
		{"dotdot id", []string{"--id", "a..b", "--", "true"}, "'..'"},
		{"slash id", []string{"--id", "a/b", "--", "true"}, "may hold only"},
		{"space id", []string{"--id", "a b", "--", "true"}, "may hold only"},
		{"long id", []string{"--id", strings.Repeat("x", 129), "--", "true"}, "at most 128"},
		{"no id", []string{"--", "true"}, "--id"},
		{"no command", []string{"--id", "ok"}, "no command"},
		{"relative tmp-root", []string{"--id", "ok", "--tmp-root", "tmp", "--", "true"}, "absolute"},
		{"missing tmp-root", []string{"--id", "ok", "--tmp-root", "/nonexistent/dir", "--", "true"}, "does not exist"},
		{"bad env", []string{"--id", "ok", "--env", "NOEQUALS", "--", "true"}, "NAME=VALUE"},
		{"bad timeout", []string{"--id", "ok", "--timeout", "soon", "--", "true"}, "--timeout"},
		{"negative timeout", []string{"--id", "ok", "--timeout=-1s", "--", "true"}, "negative"},
		{"root uid", []string{"--id", "ok", "--uid", "0", "--", "true"}, "non-zero"},
		{"unknown flag", []string{"--id", "ok", "--frobnicate", "--", "true"}, "frobnicate"},
		{"report dir missing", []string{"--id", "ok", "--report", "/nonexistent/r.json", "--", "true"}, "--report"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--tmp-root", root}, c.args...)
			cmd := exec.Command(jailBin, args...)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 125 || !strings.Contains(string(out), c.want) {
				t.Errorf("scidex-jail %q = exit %d, %q; want exit 125 mentioning %q", args, cmd.ProcessState.ExitCode(), out, c.want)
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("bad input left %v in tmp-root", got)
			}
		})
	}
}
