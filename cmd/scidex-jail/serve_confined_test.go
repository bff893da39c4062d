package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// confinedScript prints how the analysis is confined, as the kernel shows
// it, and what it may write: its identity, capabilities, no_new_privs,
// seccomp and the signals it ignores and blocks (the status lines of its
// child grep: all inherited across fork and exec), Landlock (the root
// directory lies under no rule: listing it is refused by Landlock alone,
// the mount allows it), the view's read-only root, and the run directory
// and the scratch, writable.
const confinedScript = `grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters|SigBlk|SigIgn):' /proc/self/status
ls / >/dev/null 2>&1 && echo root-listed || echo root-not-listed
(echo x > /tmp/outside) 2>/dev/null && echo outside-written || echo outside-refused
(echo x > /.outside) 2>/dev/null && echo root-written || echo root-refused
echo x > out.txt && echo rundir-written
echo x > "$HOME/h" && echo scratch-written
`

// TestServeConfinedAsCold: a run that takes a slot, whose init confined
// itself ahead of the run (identity, Landlock with the run directory's
// rule on its placeholder, seccomp), is confined exactly as a one-shot
// run of the same shape: the same identity, capabilities, no_new_privs
// and filter, Landlock refusing what it refuses there, and the run
// directory, named at the request by a mount move, writable through the
// rule made ahead (issue 36).
func TestServeConfinedAsCold(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	rep, served := runFromSlot(c, root, "confined-")
	if rep.Start != "slot" || rep.Status != report.StatusOK {
		t.Fatalf("no run took a slot in 40 runs with --slots 1 (last: start %s, status %s); server stderr: %s", rep.Start, rep.Status, c.stderr)
	}
	for _, p := range rep.Phases {
		if p.Where == "init" && (p.Name == "identity" || p.Name == "landlock" || p.Name == "seccomp") {
			t.Errorf("a run from a slot has the init phase %s: the slot's init confined itself ahead, no step of the run", p.Name)
		}
	}
	if l := rep.Enforced.Landlock; l == nil || l.ABI == 0 || !strings.Contains(strings.Join(l.Rules, "\n"), "rw "+rep.RunDir) {
		t.Errorf("a run from a slot: enforced.landlock %+v, want an ABI and the rule rw %s", l, rep.RunDir)
	}

	cmd, repPath, out, errb := jailCmd(t, runOpts{}, "run", "--tmp-root", root, "--id", "confined-cold", "--", "/bin/sh", "-c", confinedScript)
	cmd.Dir = root
	cold := finishJail(t, cmd, cmd.Run(), repPath, out, errb)
	wantStatus(t, cold, report.StatusOK, 0)

	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000", "CapEff:\t0000000000000000", "root-not-listed", "outside-refused", "root-refused", "rundir-written", "scratch-written"} {
		if !strings.Contains(cold.stdout, want+"\n") {
			t.Errorf("a one-shot run's confinement:\n%s\nwant a line %q", cold.stdout, want)
		}
	}
	if served != cold.stdout {
		t.Errorf("a run from a slot is confined as\n%s\nwant as a one-shot run's:\n%s", served, cold.stdout)
	}
}

// TestServeOtherConfinementCold: a slot's init is confined ahead for its
// shape, so a run whose confinement differs while its view does not (here
// its seccomp filter disabled by name) starts cold, never in a slot
// confined for another run, and is confined as it asked (issue 36).
func TestServeOtherConfinementCold(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	n := 0
	run := func(r request.Request) (*report.Report, string) {
		t.Helper()
		n++
		fds, output := stdioPipes(t)
		req := "o" + strconv.Itoa(n)
		r.ID, r.Cwd, r.TmpRoot = "other-"+req, root, root
		c.send(runReq(req, r, "/bin/sh", "-c", "grep -E '^Seccomp:' /proc/self/status"), fds...)
		return c.await(req).report(t), output()
	}
	var rep *report.Report
	for range 40 {
		if rep, _ = run(request.Request{}); rep.Start == "slot" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.Start != "slot" {
		t.Fatalf("no run took a slot in 40 runs with --slots 1; server stderr: %s", c.stderr)
	}
	// A slot of the default shape is ready again.
	waitFor(t, func() bool { return len(c.slots().added(t)) >= 1 }, "a slot")
	time.Sleep(200 * time.Millisecond)
	rep, out := run(request.Request{UnsafeDisable: []string{"seccomp"}})
	if rep.Start != "cold" || rep.Status != report.StatusOK || out != "Seccomp:\t0\n" {
		t.Errorf("a run with seccomp disabled beside a ready slot of the default shape: start %s, status %s, output %q; want cold, ok and Seccomp 0", rep.Start, rep.Status, out)
	}
}

// TestServeFSAccess: TestFSAccess's probes, from inside a run that took
// a slot confined ahead: the run directory, named at the request by a
// mount move from the placeholder its Landlock rule was made on, is
// writable, and nothing else is but /dev/shm, /dev/null and the scratch,
// as for a one-shot run (issue 36).
func TestServeFSAccess(t *testing.T) {
	requireRoot(t)
	c := newFSCheckout(t)
	sleep := exec.Command("/bin/sleep", "1000")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	hostPID := strconv.Itoa(sleep.Process.Pid)
	s := startServe(t, "--slots", "1")
	// The first run makes the slots follow its shape (the checkout's
	// data dirs); a later one takes a slot.
	for i := range 40 {
		id := "fsaccess-served-" + strconv.Itoa(i)
		probes := fsAccessProbes(t, c, filepath.Join(c.tmpRoot, "scidex-analysis-"+id), hostPID)
		fds, output := stdioPipes(t)
		req := "f" + strconv.Itoa(i)
		s.send(runReq(req, request.Request{ID: id, Root: c.root, Cwd: c.root, TmpRoot: c.tmpRoot, Env: []string{"HOST_PID=" + hostPID}},
			"/usr/bin/python3", "-c", fsScript(probes)), fds...)
		rep := s.await(req).report(t)
		if rep.Start != "slot" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if rep.Status != report.StatusOK {
			t.Fatalf("a run from a slot: status %s, want ok; notes %s", rep.Status, rep.CompletionNotes)
		}
		fsCheck(t, probes, output())
		if b, _ := os.ReadFile(filepath.Join(c.root, "data", "input.csv")); string(b) != "a,b\n1,2\n" {
			t.Errorf("after the run: data/input.csv = %q, want it unchanged", b)
		}
		return
	}
	t.Fatalf("no run took a slot in 40 runs with --slots 1; server stderr: %s", s.stderr)
}

// TestServeNoNewPrivsServer: a server started with no_new_privs (as a
// systemd unit with NoNewPrivileges=yes starts it, deploy/'s service)
// still makes slots and runs from them: every thread of its slots' inits
// has no_new_privs from the start, and the check of the init's helper
// thread compares it with the main thread before its confinement, not
// with a bare process's 0 (the slot failed at identity in the VM's
// service before, and every run started cold).
func TestServeNoNewPrivsServer(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	c := startServeCmd(t, exec.Command("setpriv", "--no-new-privs", jailBin, "serve", "--slots", "1"))
	rep, served := runFromSlot(c, root, "nnp-")
	if rep.Start != "slot" || rep.Status != report.StatusOK {
		t.Fatalf("a server with no_new_privs: no run took a slot in 40 runs with --slots 1 (last: start %s, status %s); server stderr: %s", rep.Start, rep.Status, c.stderr)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000", "CapEff:\t0000000000000000", "outside-refused", "root-refused", "rundir-written"} {
		if !strings.Contains(served, want+"\n") {
			t.Errorf("a run from a slot of a server with no_new_privs:\n%s\nwant a line %q", served, want)
		}
	}
	if strings.Contains(c.stderr.String(), "prepare slot") {
		t.Errorf("server stderr: %s, want no slot failure", c.stderr)
	}
}

// runFromSlot sends confinedScript's runs (ids prefix and a count) to c
// until one takes a slot, at most 40, and returns the last one's report
// and output.
func runFromSlot(c *serveClient, root, prefix string) (*report.Report, string) {
	c.t.Helper()
	var rep *report.Report
	var out string
	for i := range 40 {
		fds, output := stdioPipes(c.t)
		req := prefix + strconv.Itoa(i)
		c.send(runReq(req, request.Request{ID: req, Cwd: root, TmpRoot: root}, "/bin/sh", "-c", confinedScript), fds...)
		rep, out = c.await(req).report(c.t), output()
		if rep.Start == "slot" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return rep, out
}
