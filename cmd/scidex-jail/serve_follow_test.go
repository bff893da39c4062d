package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeRefusedRunKeepsShape: a run the kernel refuses before its
// analysis starts (read_write /etc: Landlock refuses the ruleset) starts
// cold beside a ready slot of another shape, and the pool does not follow
// it: its slots would fail in that shape every time, and every run after
// it would start cold. The slot of the default shape stays ready, and the
// runs after take slots as before.
func TestServeRefusedRunKeepsShape(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	n := 0
	run := func(rw []string) *report.Report {
		t.Helper()
		n++
		req := "f" + strconv.Itoa(n)
		c.send(runReq(req, request.Request{ID: "follow-" + req, Cwd: root, TmpRoot: root, ReadWrite: rw}, "/usr/bin/true"))
		return c.await(req).report(t)
	}
	untilSlot := func(what string) {
		t.Helper()
		for range 40 {
			if rep := run(nil); rep.Start == "slot" {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: no run of the default shape took a slot in 40 runs with --slots 1; server stderr: %s", what, c.stderr)
	}
	untilSlot("before the refused run")
	// A slot of the default shape ready again: the refused run misses it.
	waitFor(t, func() bool { return len(c.slots().added(t)) >= 1 }, "a slot")
	time.Sleep(200 * time.Millisecond)
	rep := run([]string{"/etc"})
	if rep.Start != "cold" || rep.Status != report.StatusSetupError || rep.SetupError == nil || rep.SetupError.Stage != "landlock" {
		t.Fatalf("a run with read_write /etc: start %s, status %s, setup error %+v; want cold, setup_error at landlock", rep.Start, rep.Status, rep.SetupError)
	}
	untilSlot("after the refused run")
}
