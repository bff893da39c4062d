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
	"github.com/scidex/scidex-jail/jail/request"
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
		c.send(runReq(name, request.Request{ID: "serve-run-" + name, Cwd: root, TmpRoot: root},
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

// TestServeBadRequests: what a client can get wrong gets a bad_request
// reply naming the field to fix as the request line names it (protocol
// 1's argv form included), and the server goes on.
func TestServeBadRequests(t *testing.T) {
	root := tmpRoot(t)
	// The message run prints for the same value, naming the request's
	// field where run names its flag.
	want := runJail(t, runOpts{}, "run", "--id", "x", "--tmp-root", root, "--cpus", "0", "--", "/bin/true").stderr
	want = strings.Replace(strings.TrimSpace(strings.TrimPrefix(want, "scidex-jail: ")), "--cpus", "request field limits.cpus", 1)
	run := func(req string, fields string) string {
		return `{"op":"run","req":"` + req + `","run":{"id":"` + req + `","cwd":"` + root + `","tmp_root":"` + root + `","command":["/bin/true"]` + fields + `}}` + "\n"
	}
	c := startServe(t, "--slots", "0")
	cases := []struct {
		name, line, req, field, wantErr string
	}{
		{"not JSON", "{nope\n", "", "", "malformed request"},
		{"unknown field", `{"op":"run","req":"a","run":{},"evil":1}` + "\n", "a", "evil", `unknown field "evil"`},
		{"unknown field of the run", run("a2", `,"memroy":"1G"`), "a2", "run.memroy", `unknown field "run.memroy"`},
		{"protocol 1's argv", `{"op":"run","req":"a3","cwd":"/","args":["--id","a3"],"command":["x"]}` + "\n", "a3", "cwd", `this server speaks protocol 2, whose run request carries the run as an object, "run": {`},
		{"bad name", `{"op":"run","req":"a b","run":{}}` + "\n", "", "req", "bad request name"},
		{"unknown op", `{"op":"exec","req":"b"}` + "\n", "b", "op", "unknown op"},
		{"no run", `{"op":"run","req":"b2"}` + "\n", "b2", "run", `no "run"`},
		{"no command", `{"op":"run","req":"c","run":{"cwd":"/"}}` + "\n", "c", "run.command", "no command"},
		{"relative cwd", `{"op":"run","req":"d","run":{"id":"d","cwd":"x","command":["x"]}}` + "\n", "d", "run.cwd", `cwd "x": give the absolute directory`},
		{"stdio without fds", `{"op":"run","req":"e","run":{"cwd":"/","command":["x"]},"stdio":3}` + "\n", "e", "stdio", "came with 0 descriptors"},
		{"a size that is none", run("f", `,"limits":{"memory":"lots"}`), "f", "run.limits.memory", `request field limits.memory: size "lots"`},
		{"cpus 0, as run says", run("g", `,"limits":{"cpus":"0"}`), "g", "run.limits.cpus", want},
		{"a missing read-only path", run("g2", `,"read_only":["/nonexistent/x"]`), "g2", "run.read_only", `request field read_only "/nonexistent/x" does not exist`},
		{"no such profile", run("g3", `,"profile":"nope"`), "g3", "run.profile", `request field profile "nope": no such profile`},
		{"a port out of range", run("g4", `,"allow_tcp":[70000]`), "g4", "run.allow_tcp", "number 70000"},
		{"in Python's words", strings.Replace(run("g5", `,"read_only":["/nonexistent/x"]`), `"run":`, `"names":"keyword","run":`, 1), "g5", "run.read_only", `keyword ro "/nonexistent/x" does not exist`},
		{"in run's words", strings.Replace(run("g6", `,"limits":{"cpus":"0"}`), `"run":`, `"names":"flag","run":`, 1), "g6", "run.limits.cpus", "--cpus: 0 CPUs is refused"},
		{"in no one's words", strings.Replace(run("g7", ``), `"run":`, `"names":"yaml","run":`, 1), "g7", "names", `names "yaml"`},
		{"too long", `{"op":"run","req":"h","run":{"command":["` + strings.Repeat("x", 2<<20) + `"]}}` + "\n", "", "", "over 1048576 bytes"},
	}
	for _, tc := range cases {
		c.sendLine([]byte(tc.line))
		r := c.next()
		if r.Event != "bad_request" || r.Req != tc.req || r.Field != tc.field || !strings.Contains(r.Error, tc.wantErr) || r.ExitCode == nil || *r.ExitCode != 125 {
			t.Errorf("%s: reply = %+v, want a bad_request for %q, field %q, exit_code 125, containing %q", tc.name, r, tc.req, tc.field, tc.wantErr)
		}
	}
	// And it still runs what is right.
	c.send(runReq("ok", request.Request{ID: "serve-bad-ok", Cwd: root, TmpRoot: root}, "/bin/true"))
	if r := c.await("ok"); r.Event != "done" || *r.ExitCode != 0 {
		t.Fatalf("after the bad requests: %+v, want done 0", r)
	}
	// Nothing of the bad requests; the good one's cleanup follows its
	// reply (cleanup "after_reply").
	waitFor(t, func() bool { return len(entries(t, root)) == 0 }, "the tmp-root to be empty after the bad requests")
}

// TestServeCancel: a cancel ends the run as SIGTERM ends run: cancelled,
// 143, the tree dead.
func TestServeCancel(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "0")
	m := marker(t)
	c.send(runReq("s", request.Request{ID: "serve-cancel", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
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
	c.send(runReq("a", request.Request{ID: "serve-adm-a", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
	c.send(runReq("b", request.Request{ID: "serve-adm-b", Cwd: root, TmpRoot: root}, "/bin/true"))
	c.send(runReq("c", request.Request{ID: "serve-adm-c", Cwd: root, TmpRoot: root}, "/bin/true"))
	r := c.await("c")
	if r.Event != "refused" || r.Reason != "queue_full" || !strings.Contains(r.Error, "1 runs at once and 1 waiting") || *r.ExitCode != 125 {
		t.Fatalf("third request: %+v, want refused, queue_full, saying how many", r)
	}
	c.send(map[string]any{"op": "cancel", "req": "a"})
	got := map[string]serveReply{}
	for len(got) < 2 {
		r := c.next()
		if r.Event == "done" || r.failed() {
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
	c.send(runReq("s", request.Request{ID: "serve-term", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
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
	c.send(runReq("o", request.Request{ID: "serve-iso-other", Cwd: root, TmpRoot: root, Net: "loopback", Limits: map[string]string{"disk": "0"}},
		"/usr/bin/python3", "-c", "import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('sock'); s.listen(); time.sleep(float('"+m+"'))"))
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "the other run to start")
	other := filepath.Join(root, "scidex-analysis-serve-iso-other")
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(other, "sock")); return err == nil }, "the other run's socket")
	fds, output := stdioPipes(t)
	c.send(runReq("i", request.Request{ID: "serve-iso", Cwd: root, TmpRoot: root},
		"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; ls -R /sys/fs/cgroup | grep -c scidex-; "+
			"tail -n +2 /proc/net/unix | grep -v /var/run/nscd/socket | wc -l; test -e "+other+" && echo seen || echo unseen"), fds...)
	r := c.await("i")
	out := strings.Fields(output())
	if r.report(t).Start != "slot" {
		t.Fatalf("the run started %q with two slots ready, want slot", r.report(t).Start)
	}
	// PID 1 (the init), sh, ls and grep; no leaf of any slot or run, no
	// unix socket but the run's own name service (the supervisor's end of
	// its lookups), the other run's directory not there.
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
	c.send(runReq("k", request.Request{ID: "serve-sock", Cwd: root, TmpRoot: root}, "/bin/true"))
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
	c.send(runReq("s", request.Request{ID: "serve-killed", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
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
	c.send(runReq("g", request.Request{ID: "serve-gone", Cwd: root, TmpRoot: root, Report: rep}, "/bin/sleep", m))
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
	half.send(runReq("h", request.Request{ID: "serve-half", Cwd: root, TmpRoot: root}, "/bin/sh", "-c", "sleep 0.2"))
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
		c.send(runReq(name, request.Request{ID: "serve-parent-" + name, Cwd: root, TmpRoot: root, CgroupParent: parent}, "/bin/true"))
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
