package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/report"
)

func TestExitAndSignalPassthrough(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	cases := []struct {
		name   string
		script string
		status report.Status
		code   int
		signal string
	}{
		{"exit zero", "exit 0", report.StatusOK, 0, ""},
		{"exit three", "exit 3", report.StatusExitNonzero, 3, ""},
		{"exit 255", "exit 255", report.StatusExitNonzero, 255, ""},
		{"SIGSEGV", "kill -SEGV $$", report.StatusSignaled, 128 + 11, "SIGSEGV"},
		{"SIGKILL", "kill -KILL $$", report.StatusSignaled, 128 + 9, "SIGKILL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runJail(t, runOpts{}, "run", "--id", "pass", "--tmp-root", root, "--", "/bin/sh", "-c", c.script)
			wantStatus(t, r, c.status, c.code)
			if r.report.Signal != c.signal {
				t.Errorf("report signal = %q, want %q", r.report.Signal, c.signal)
			}
		})
	}
}

func TestCommandNotFoundOrNotExecutable(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	r := runJail(t, runOpts{}, "run", "--id", "nf", "--tmp-root", root, "--", "no-such-command-xyz")
	wantStatus(t, r, report.StatusSetupError, 127)
	if r.report.SetupError == nil || r.report.SetupError.Stage != "exec" {
		t.Errorf("setup error = %+v, want stage exec", r.report.SetupError)
	}
	r = runJail(t, runOpts{}, "run", "--id", "nx", "--tmp-root", root, "--", "/etc/hostname")
	wantStatus(t, r, report.StatusSetupError, 126)
}

func TestStdioPassthrough(t *testing.T) {
	requireRoot(t)
	r := runJail(t, runOpts{stdin: "line from stdin\n"}, "run", "--id", "stdio", "--tmp-root", tmpRoot(t), "--",
		"/bin/sh", "-c", "read x; echo \"out:$x\"; echo err-text >&2")
	wantStatus(t, r, report.StatusOK, 0)
	if r.stdout != "out:line from stdin\n" {
		t.Errorf("stdout = %q, want %q", r.stdout, "out:line from stdin\n")
	}
	if !strings.Contains(r.stderr, "err-text\n") {
		t.Errorf("stderr = %q, want it to hold err-text", r.stderr)
	}
}

func TestArgsPassedUntouched(t *testing.T) {
	requireRoot(t)
	args := []string{"--id", "--not-a-flag", "two words", "", "*", "$HOME"}
	r := runJail(t, runOpts{}, append([]string{"run", "--id", "args", "--tmp-root", tmpRoot(t), "--", "/usr/bin/printf", "[%s]"}, args...)...)
	wantStatus(t, r, report.StatusOK, 0)
	want := "[--id][--not-a-flag][two words][][*][$HOME]"
	if r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
}

// TestIsolation checks, from inside, what the target sees of itself.
func TestIsolation(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	leak, err := os.CreateTemp("", "leaked-fd-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(leak.Name())
	defer leak.Close()
	script := `
echo "uid=$(id -u) gid=$(id -g)"
echo "host=$(hostname)"
echo "pwd=$(pwd)"
grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|CapInh|NoNewPrivs):' /proc/self/status | tr -d '\t' | tr ':' '='
echo "procs=$(ls /proc | grep -cE '^[0-9]+$')"
echo "fds=$(ls /proc/self/fd | tr '\n' ' ')"
ls -l /proc/self/fd/ | grep -c leaked-fd- | sed 's/^/leaked=/'
env | sort | sed 's/^/env:/'
touch owned-by-me
`
	r := runJail(t, runOpts{env: []string{"HOST_SECRET=s3cret"}, extra: []*os.File{leak, leak, leak}},
		"run", "--id", "iso", "--tmp-root", root, "--keep", "--disk", "0", "--env", "MY_VAR=hello", "--", "/bin/sh", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	dir := filepath.Join(root, "scidex-analysis-iso")
	t.Cleanup(func() { os.RemoveAll(dir) })
	got := map[string]string{}
	var env []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if e, ok := strings.CutPrefix(line, "env:"); ok {
			env = append(env, e)
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	want := map[string]string{
		"uid": "1000 gid=1000", "host": "scidex-iso", "pwd": dir,
		"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000",
		"CapAmb": "0000000000000000", "CapInh": "0000000000000000", "NoNewPrivs": "1", "leaked": "0",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("inside: %s = %q, want %q\n%s", k, got[k], v, r.stdout)
		}
	}
	// Its own pid namespace: the init, the shell, ls (and grep).
	if n, _ := strconv.Atoi(got["procs"]); n < 2 || n > 5 {
		t.Errorf("processes visible in /proc = %s, want 2..5 (its own namespace only)", got["procs"])
	}
	// 0, 1, 2 and the directory ls itself opened.
	if f := strings.Fields(got["fds"]); len(f) > 4 {
		t.Errorf("open fds = %v, want only 0 1 2 (and ls's own)", f)
	}
	wantEnv := map[string]bool{"PATH=/usr/local/bin:/usr/bin:/bin": true, "MY_VAR=hello": true, "HOME=" + jail.AnalysisHome: true, "TMPDIR=" + jail.ScratchTmp: true}
	for _, e := range env {
		if strings.Contains(e, "HOST_SECRET") {
			t.Errorf("host environment leaked in: %s", e)
		}
		delete(wantEnv, e)
	}
	if len(wantEnv) != 0 {
		t.Errorf("environment %v lacks %v", env, wantEnv)
	}
	// On the host, what the target created belongs to the unprivileged uid.
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "owned-by-me"), &st); err != nil {
		t.Fatal(err)
	}
	if int(st.Uid) != r.report.Enforced.HostUID || st.Uid == 0 {
		t.Errorf("host owner of a file the target made = %d, want the run's host uid %d (never root)", st.Uid, r.report.Enforced.HostUID)
	}
}

func TestZombiesReaped(t *testing.T) {
	requireRoot(t)
	// The subshell exits at once, orphaning its children; they exit and
	// must be reaped by the init, not left as zombies.
	script := `for i in 1 2 3 4 5; do (sleep 0.05 &) ; done; sleep 0.5
z=0; for s in /proc/[0-9]*/stat; do case "$(cut -d' ' -f3 "$s" 2>/dev/null)" in Z) z=$((z+1));; esac; done; echo zombies=$z`
	r := runJail(t, runOpts{}, "run", "--id", "zombie", "--tmp-root", tmpRoot(t), "--", "/bin/sh", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	if !strings.Contains(r.stdout, "zombies=0") {
		t.Errorf("inside the jail: %s, want zombies=0", r.stdout)
	}
}

func TestBackgroundKilledWhenTargetExits(t *testing.T) {
	requireRoot(t)
	m := marker(t)
	r := runJail(t, runOpts{}, "run", "--id", "bg", "--tmp-root", tmpRoot(t), "--", "/bin/sh", "-c",
		"sleep "+m+" >/dev/null 2>&1 & (setsid sleep "+m+" >/dev/null 2>&1 &); exit 0")
	wantStatus(t, r, report.StatusOK, 0)
	waitGone(t, m, 0)
}

// TestPhasesSpanTheRun: the report's supervisor phases follow each other
// from the jail's start to its report: the startup phase begins after the
// caller's fork began (it is the main thread's own CPU and run-queue time,
// which can only leave out time the start spent blocked, never add any),
// and the last phase ends before the caller has reaped the jail.
func TestPhasesSpanTheRun(t *testing.T) {
	requireRoot(t)
	cmd, rep, out, errb := jailCmd(t, runOpts{}, "run", "--id", runID(t, "phases"), "--tmp-root", tmpRoot(t), "--", "/bin/true")
	before := time.Now()
	err := cmd.Start()
	execed := time.Now()
	if err == nil {
		err = cmd.Wait()
	}
	reaped := time.Now()
	r := finishJail(t, cmd, err, rep, out, errb)
	wantStatus(t, r, report.StatusOK, 0)
	ph := r.report.Phases
	if len(ph) == 0 || ph[0].Name != "startup" || ph[len(ph)-1].Name != "report" {
		t.Fatalf("phases = %+v, want startup first and report last", ph)
	}
	begin := r.report.Started.Add(-time.Duration(ph[0].Micros) * time.Microsecond)
	if begin.Before(before) {
		t.Errorf("startup begins %v before the caller's fork began, want after it", before.Sub(begin))
	}
	t.Logf("startup begins %v after the caller's fork began (its exec returned after %v)", begin.Sub(before), execed.Sub(before))
	var sum time.Duration
	for _, p := range ph {
		if p.Where == "supervisor" {
			sum += time.Duration(p.Micros) * time.Microsecond
		}
	}
	if end := begin.Add(sum); end.After(reaped) {
		t.Errorf("the supervisor's phases end %v after the caller reaped the jail, want before", end.Sub(reaped))
	}
}
