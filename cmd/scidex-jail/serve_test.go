package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// slotLeaves are the slot leaves of the servers whose pids it holds (a
// server names its slots' leaves scidex-slot-<pid>-*): their names, and
// with dirs, their directories (a v1 leaf has one per hierarchy).
type slotLeaves []int

func (c *serveClient) slots() slotLeaves { return slotLeaves{c.cmd.Process.Pid} }

func (s slotLeaves) dirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, pid := range s {
		dirs = append(dirs, leavesOf(t, "slot-"+strconv.Itoa(pid))...)
	}
	return dirs
}

func (s slotLeaves) added(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, d := range s.dirs(t) {
		if !slices.Contains(names, filepath.Base(d)) {
			names = append(names, filepath.Base(d))
		}
	}
	return names
}

// TestServeRun: a run through the server gets its stdio, its exit status
// and its report, and once the pool is ready, starts from a slot.
func TestServeRun(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	var sawSlot bool
	for i := 0; i < 40 && !sawSlot; i++ {
		fds, output := stdioPipes(t)
		name := "r" + strconv.Itoa(i)
		c.send(runReq(name, root, []string{"--id", "serve-run-" + name, "--tmp-root", root},
			"/bin/sh", "-c", "echo out; echo err >&2; echo kept > f.txt; exit 3"), fds...)
		r := c.await(name)
		got := output()
		if r.Event != "done" || r.ExitCode == nil || *r.ExitCode != 3 {
			t.Fatalf("reply = %+v, want done with exit_code 3", r)
		}
		rep := r.report(t)
		if rep.Status != report.StatusExitNonzero || rep.ExitCode != 3 || len(rep.Outputs) != 1 || rep.Outputs[0].Path != "f.txt" {
			t.Fatalf("report: status %s, exit %d, outputs %+v; want exit_nonzero, 3, [f.txt]", rep.Status, rep.ExitCode, rep.Outputs)
		}
		if got != "out\nerr\n" {
			t.Errorf("the analysis' stdout+stderr = %q, want %q", got, "out\nerr\n")
		}
		switch rep.Start {
		case "slot":
			sawSlot = true
		case "cold":
			time.Sleep(100 * time.Millisecond) // the pool is being filled
		default:
			t.Fatalf("report.start = %q, want slot or cold", rep.Start)
		}
	}
	if !sawSlot {
		t.Fatalf("no run took a slot in 40 runs with --slots 1; server stderr: %s", c.stderr)
	}
	// The last run's cleanup follows its reply (cleanup "after_reply").
	waitFor(t, func() bool { return len(entries(t, root)) == 0 }, "the tmp root to be empty after the runs")
}

// TestServeBadRequests: what a client can get wrong gets an error reply
// naming it, and the server goes on.
func TestServeBadRequests(t *testing.T) {
	root := tmpRoot(t)
	// The message run prints for the same flag, without its prefix.
	want := runJail(t, runOpts{}, "run", "--id", "x", "--tmp-root", root, "--cpus", "0", "--", "/bin/true").stderr
	want = strings.TrimSpace(strings.TrimPrefix(want, "scidex-jail: "))
	c := startServe(t, "--slots", "0")
	cases := []struct {
		name, line, req, wantErr string
	}{
		{"not JSON", "{nope\n", "", "malformed request"},
		{"unknown field", `{"op":"run","req":"a","cwd":"/","command":["x"],"evil":1}` + "\n", "", "unknown field"},
		{"bad name", `{"op":"run","req":"a b","cwd":"/","command":["x"]}` + "\n", "", "bad request name"},
		{"unknown op", `{"op":"exec","req":"b"}` + "\n", "b", "unknown op"},
		{"no command", `{"op":"run","req":"c","cwd":"/"}` + "\n", "c", "no command"},
		{"relative cwd", `{"op":"run","req":"d","cwd":"x","command":["x"]}` + "\n", "d", "absolute"},
		{"stdio without fds", `{"op":"run","req":"e","cwd":"/","command":["x"],"stdio":3}` + "\n", "e", "came with 0 descriptors"},
		{"summary", `{"op":"run","req":"f","cwd":"/","args":["--id","f","--summary","none"],"command":["x"]}` + "\n", "f", "--summary has no meaning"},
		{"cpus 0, as run says", `{"op":"run","req":"g","cwd":"` + root + `","args":["--id","g","--tmp-root","` + root + `","--cpus","0"],"command":["/bin/true"]}` + "\n", "g", want},
		{"too long", `{"op":"run","req":"h","cwd":"/","command":["` + strings.Repeat("x", 2<<20) + `"]}` + "\n", "", "over 1048576 bytes"},
	}
	for _, tc := range cases {
		c.sendLine([]byte(tc.line))
		r := c.next()
		if r.Event != "error" || r.Req != tc.req || !strings.Contains(r.Error, tc.wantErr) || r.ExitCode == nil || *r.ExitCode != 125 {
			t.Errorf("%s: reply = %+v, want an error for %q with exit_code 125 containing %q", tc.name, r, tc.req, tc.wantErr)
		}
	}
	// And it still runs what is right.
	c.send(runReq("ok", root, []string{"--id", "serve-bad-ok", "--tmp-root", root}, "/bin/true"))
	if r := c.await("ok"); r.Event != "done" || *r.ExitCode != 0 {
		t.Fatalf("after the bad requests: %+v, want done 0", r)
	}
}

// TestServeCancel: a cancel ends the run as SIGTERM ends run: cancelled,
// 143, the tree dead.
func TestServeCancel(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "0")
	m := marker(t)
	c.send(runReq("s", root, []string{"--id", "serve-cancel", "--tmp-root", root}, "/bin/sleep", m))
	if r := c.next(); r.Event != "accepted" || r.Req != "s" {
		t.Fatalf("first reply %+v, want accepted", r)
	}
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the sleep to start")
	c.send(map[string]any{"op": "cancel", "req": "s"})
	r := c.await("s")
	if rep := r.report(t); rep.Status != report.StatusCancelled || *r.ExitCode != 143 {
		t.Fatalf("cancelled run: status %s exit %d, want cancelled 143", rep.Status, *r.ExitCode)
	}
	waitGone(t, m, 5*time.Second)
}

// TestServeAdmission: past --max-runs and --queue a request is refused
// with the reason, never dropped.
func TestServeAdmission(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "0", "--max-runs", "1", "--queue", "1")
	m := marker(t)
	c.send(runReq("a", root, []string{"--id", "serve-adm-a", "--tmp-root", root}, "/bin/sleep", m))
	c.send(runReq("b", root, []string{"--id", "serve-adm-b", "--tmp-root", root}, "/bin/true"))
	c.send(runReq("c", root, []string{"--id", "serve-adm-c", "--tmp-root", root}, "/bin/true"))
	r := c.await("c")
	if r.Event != "error" || !strings.Contains(r.Error, "refused") || !strings.Contains(r.Error, "--max-runs") {
		t.Fatalf("third request: %+v, want refused naming --max-runs", r)
	}
	c.send(map[string]any{"op": "cancel", "req": "a"})
	got := map[string]serveReply{}
	for len(got) < 2 {
		r := c.next()
		if r.Event == "done" || r.Event == "error" {
			got[r.Req] = r
		}
	}
	if got["a"].report(t).Status != report.StatusCancelled || got["b"].report(t).Status != report.StatusOK {
		t.Fatalf("a: %s, b: %s; want a cancelled, b ok (it waited its turn)", got["a"].report(t).Status, got["b"].report(t).Status)
	}
}

// TestServeShutdown: SIGTERM to the server cancels its runs (their reports
// are sent) and removes every slot; nothing is left.
func TestServeShutdown(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "2")
	before := c.slots()
	waitFor(t, func() bool { return len(before.added(t)) >= 2 }, "two slots to be ready")
	m := marker(t)
	c.send(runReq("s", root, []string{"--id", "serve-term", "--tmp-root", root}, "/bin/sleep", m))
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the sleep to start")
	c.cmd.Process.Signal(syscall.SIGTERM)
	r := c.await("s")
	if rep := r.report(t); rep.Status != report.StatusCancelled {
		t.Fatalf("run at the server's SIGTERM: %s, want cancelled", rep.Status)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("server after SIGTERM: %v, want exit 0; stderr: %s", err, c.stderr)
	}
	waitGone(t, m, 5*time.Second)
	if l := before.added(t); len(l) != 0 {
		t.Errorf("slot leaves left after the server ended: %v", l)
	}
	if e := entries(t, root); len(e) != 0 {
		t.Errorf("tmp root holds %v, want nothing", e)
	}
}

// TestServeIsolation: from inside a run, the slots prepared beside it and
// another run going at the same time are out of sight: no other process,
// unix socket, run directory or cgroup leaf.
func TestServeIsolation(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "2", "--max-runs", "3")
	before := c.slots()
	waitFor(t, func() bool { return len(before.added(t)) >= 2 }, "two slots to be ready")
	// The other run: a process and a listening unix socket of its own, in
	// a run directory on the host's disk (--disk 0), where this test sees it.
	m := marker(t)
	c.send(runReq("o", root, []string{"--id", "serve-iso-other", "--tmp-root", root, "--net", "loopback", "--disk", "0"},
		"/usr/bin/python3", "-c", "import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('sock'); s.listen(); time.sleep(float('"+m+"'))"))
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the other run to start")
	other := filepath.Join(root, "scidex-analysis-serve-iso-other")
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(other, "sock")); return err == nil }, "the other run's socket")
	fds, output := stdioPipes(t)
	c.send(runReq("i", root, []string{"--id", "serve-iso", "--tmp-root", root},
		"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; ls -R /sys/fs/cgroup | grep -c scidex-; "+
			"tail -n +2 /proc/net/unix | wc -l; test -e "+other+" && echo seen || echo unseen"), fds...)
	r := c.await("i")
	out := strings.Fields(output())
	if r.report(t).Start != "slot" {
		t.Fatalf("the run started %q with two slots ready, want slot", r.report(t).Start)
	}
	// PID 1 (the init), sh, ls and grep; no leaf of any slot or run, no
	// unix socket, the other run's directory not there.
	if len(out) != 4 || out[1] != "0" || out[2] != "0" || out[3] != "unseen" {
		t.Fatalf("inside: %q; want a few pids, no scidex- cgroup, no unix socket, and the other run's directory unseen", out)
	}
	if n, _ := strconv.Atoi(out[0]); n > 4 {
		t.Errorf("inside, /proc lists %d processes, want at most 4 (init, sh, ls, grep)", n)
	}
	c.send(map[string]any{"op": "cancel", "req": "o"})
	c.await("o")
	waitGone(t, m, 5*time.Second)
}

// TestServeSocket: --socket makes a 0600 socket for this uid, and an
// analysis' request over it runs; the socket goes with the server.
func TestServeSocket(t *testing.T) {
	requireRoot(t)
	root := tmpRoot(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	srv := startServeSocket(t, sock)
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %s: %v, %v; want a socket of mode 0600", sock, fi.Mode(), err)
	}
	// nobody cannot reach it.
	nobody := exec.Command("/usr/bin/python3", "-c", "import socket; socket.socket(socket.AF_UNIX).connect('"+sock+"')")
	nobody.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := nobody.Run(); err == nil {
		t.Errorf("uid 65534 connected to the server's socket, want permission denied")
	}
	c := dialServe(t, sock)
	c.send(runReq("k", root, []string{"--id", "serve-sock", "--tmp-root", root}, "/bin/true"))
	if r := c.await("k"); r.Event != "done" || *r.ExitCode != 0 {
		t.Fatalf("over the socket: %+v, want done 0", r)
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("server: %v", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket after the server ended: %v, want it gone", err)
	}
}

// TestServeKilled: a server killed with SIGKILL, with slots ready and a
// run going, leaves nothing that gc cannot prove dead and remove.
func TestServeKilled(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "2")
	before := c.slots()
	waitFor(t, func() bool { return len(before.added(t)) >= 2 }, "two slots to be ready")
	m := marker(t)
	c.send(runReq("s", root, []string{"--id", "serve-killed", "--tmp-root", root}, "/bin/sleep", m))
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the sleep to start")
	c.cmd.Process.Kill()
	c.cmd.Wait()
	// Every init dies with the server (its parent-death signal), and with
	// each its namespace's processes.
	waitGone(t, m, 5*time.Second)
	waitFor(t, func() bool {
		for _, l := range before.dirs(t) {
			if b, err := os.ReadFile(filepath.Join(l, "cgroup.procs")); err == nil && len(b) > 0 {
				return false
			}
		}
		return true
	}, "the slots' leaves to be empty")
	// gc takes leaves older than runfiles.StaleLeafAge only.
	time.Sleep(2500 * time.Millisecond)
	gc := runJail(t, runOpts{}, "gc", "--tmp-root", root)
	if gc.code != 0 {
		t.Fatalf("gc: exit %d: %s", gc.code, gc.stderr)
	}
	if l := before.added(t); len(l) != 0 {
		t.Errorf("after gc, slot leaves left: %v", l)
	}
	if e := entries(t, root); len(e) != 0 {
		t.Errorf("after gc, the tmp root holds %v", e)
	}
	if !strings.Contains(gc.stdout, "removed") {
		t.Errorf("gc removed nothing (stdout %q); want the dead server's leaves and run directory", gc.stdout)
	}
}

// TestServeSlotsFollowTheInit: slots made from an init that has since been
// replaced on disk (a new package) are destroyed and made anew.
func TestServeSlotsFollowTheInit(t *testing.T) {
	before := startServe(t, "--slots", "1").slots()
	waitFor(t, func() bool { return len(before.added(t)) >= 1 }, "a slot to be ready")
	first := before.added(t)[0]
	init := filepath.Join(filepath.Dir(jailBin), "scidex-jail-init")
	fi, err := os.Stat(init)
	if err != nil {
		t.Fatal(err)
	}
	// The same mode again: a new change time, as a replaced file has.
	if err := os.Chmod(init, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		now := before.added(t)
		return !slices.Contains(now, first) && len(now) >= 1
	}, "the old slot to go and a new one to be made")
}

// TestServeClientGone: a client that closes its connection (or dies) with
// a run going gets it cancelled; its report still reaches --report. One
// that only shuts its writing side is answered.
func TestServeClientGone(t *testing.T) {
	root := tmpRoot(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	startServeSocket(t, sock)
	rep := filepath.Join(t.TempDir(), "r.json")
	m := marker(t)
	c := dialServe(t, sock)
	c.send(runReq("g", root, []string{"--id", "serve-gone", "--tmp-root", root, "--report", rep}, "/bin/sleep", m))
	if r := c.next(); r.Event != "accepted" {
		t.Fatalf("reply %+v, want accepted", r)
	}
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the sleep to start")
	unix.Close(c.fd)
	waitGone(t, m, 5*time.Second)
	waitFor(t, func() bool {
		b, err := os.ReadFile(rep)
		return err == nil && strings.Contains(string(b), `"cancelled"`)
	}, "a cancelled report in "+rep)

	half := dialServe(t, sock)
	half.send(runReq("h", root, []string{"--id", "serve-half", "--tmp-root", root}, "/bin/sh", "-c", "sleep 0.2"))
	unix.Shutdown(half.fd, unix.SHUT_WR)
	if r := half.await("h"); r.Event != "done" || r.report(t).Status != report.StatusOK {
		t.Fatalf("after shutting its writing side: %+v, want done ok", r)
	}
}

// TestServeCgroupV2Parent: serve --cgroup-parent puts its slots below a
// delegated parent, and a request naming the same parent takes one, its
// leaf directly below it.
func TestServeCgroupV2Parent(t *testing.T) {
	parent := delegatedV2Parent(t, "scidex-test-serve-parent")
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1", "--cgroup-parent", parent)
	waitFor(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(parent, "scidex-slot-"+strconv.Itoa(c.cmd.Process.Pid)+"-*"))
		return len(m) == 1
	}, "a slot below "+parent)
	// The leaf is there before its init is ready: a run may start cold
	// meanwhile, and the next one takes the slot.
	var rep *report.Report
	for i := 0; i < 20 && (rep == nil || rep.Start != "slot"); i++ {
		name := "p" + strconv.Itoa(i)
		c.send(runReq(name, root, []string{"--id", "serve-parent-" + name, "--tmp-root", root, "--cgroup-parent", parent}, "/bin/true"))
		if rep = c.await(name).report(t); rep.Status != report.StatusOK {
			t.Fatalf("run: %s (%s), want ok", rep.Status, rep.CompletionNotes)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if rep.Start != "slot" {
		t.Fatalf("no run took the slot below %s in 20", parent)
	}
	if cg := rep.Enforced.Cgroup; cg == nil || len(cg.Paths) != 1 || filepath.Dir(cg.Paths[0]) != parent {
		t.Errorf("the run's leaf: %+v, want one directly below %s", rep.Enforced.Cgroup, parent)
	}
}
