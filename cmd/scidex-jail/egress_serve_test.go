package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestEgressServed: the egress mode through `scidex-jail serve` in the
// test internet (a typed request's net, allow_hosts and allow_ranges), runs taking a slot prepared ahead (an init born before
// its run's mode was known makes the run's sockets when its config
// comes): each run's allowed fetch works, its refusal is recorded in its
// own report, and once a run has ended the server holds no more sockets
// but unix ones than before its first (the engine's sockets in the run's
// namespace and its connections out end with the run).
func TestEgressServed(t *testing.T) {
	requireRoot(t)
	lab := testutil.NewLab(t)
	root := tmpRoot(t)
	ca := labCA(t, lab)
	c := startServeInLab(t, lab, "--slots", "1")
	probes := []egressProbe{
		{"allowed", fmt.Sprintf("proxied('https://%s/')", testutil.LabWeb), "ok hello from " + testutil.LabWeb},
		{"refused", fmt.Sprintf("direct('https://%s/')", testutil.LabEvil), "Temporary failure in name resolution"},
	}
	argv := egressArgv(t, probes)
	// The server's own (netlink and the like), before any run, its slot
	// ready (a slot being made holds some for a while).
	waitFor(t, func() bool { return len(c.slots().added(t)) >= 1 }, "the server's slot to be ready")
	base := otherSockets(t, c.cmd.Process.Pid)
	slot := false
	for i := 0; i < 20 && (i < 3 || !slot); i++ {
		name := "e" + strconv.Itoa(i)
		fds, output := stdioPipes(t)
		c.send(runReq(name, request.Request{ID: "serve-egress-" + name, Cwd: root, TmpRoot: root, Net: "egress",
			AllowHosts: []string{testutil.LabWeb}, AllowRanges: []string{testutil.LabPublic.String()},
			ReadOnly: []string{ca}, Env: []string{"LAB_CA=" + ca}}, argv...), fds...)
		rep := c.await(name).report(t)
		out := output()
		if rep.Status != report.StatusOK {
			t.Fatalf("run %s: %s (%s)\n%s", name, rep.Status, rep.CompletionNotes, out)
		}
		got := probeResults(t, result{stdout: out})
		for _, p := range probes {
			if !strings.Contains(got[p.name], p.want) {
				t.Errorf("run %s (start %s): probe %s = %q, want it to hold %q", name, rep.Start, p.name, got[p.name], p.want)
			}
		}
		if e := rep.Egress; e == nil || e.Totals.Allowed != 1 || e.Totals.LookupsRefused == 0 {
			t.Errorf("run %s: egress = %+v, want its own one allowed connection and the refused lookup", name, rep.Egress)
		}
		slot = slot || rep.Start == "slot"
		if n := otherSockets(t, c.cmd.Process.Pid); n > base {
			t.Errorf("after run %s (start %s) the server holds %d sockets that are not unix ones, want at most its own %d", name, rep.Start, n, base)
		}
	}
	if !slot {
		t.Errorf("no egress run took a slot in 20")
	}
}

// otherSockets counts the sockets process pid holds that are not unix
// sockets of its network namespace: the engine's, in a run's namespace,
// and its connections out.
func otherSockets(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	unixInodes := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 7 {
			unixInodes[f[6]] = true
		}
	}
	ds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range ds {
		link, err := os.Readlink(dir + "/fd/" + d.Name())
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok && !unixInodes[strings.TrimSuffix(ino, "]")] {
			n++
		}
	}
	return n
}

// startServeInLab is startServeCmd for a server in the test internet's
// network namespace (its supervisor's "host").
func startServeInLab(t *testing.T, lab *testutil.Lab, args ...string) *serveClient {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "serve-end")
	c := &serveClient{t: t, fd: fds[0], stderr: &bytes.Buffer{}}
	c.cmd = exec.Command(jailBin, append([]string{"serve"}, args...)...)
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = theirs, theirs, c.stderr
	if err := lab.Net.Start(c.cmd); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	c.r = bufio.NewReader(os.NewFile(uintptr(fds[0]), "serve"))
	t.Cleanup(func() {
		unix.Shutdown(c.fd, unix.SHUT_WR)
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			t.Errorf("serve did not end 30 s after its input did; stderr: %s", c.stderr)
		}
	})
	if h := c.next(); h.Event != "hello" || h.Version == "" {
		t.Fatalf("first line = %+v, want a hello with the version", h)
	}
	return c
}
