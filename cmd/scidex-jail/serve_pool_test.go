package main

import (
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeRefillBesideALongRun: no slot is made while a run is at its
// start or its end, but one is made beside a run whose analysis goes on:
// with --slots 1, a long run takes the ready slot, and a new one is made
// while it runs.
func TestServeRefillBesideALongRun(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	slots := c.slots()
	waitFor(t, func() bool { return len(slots.added(t)) == 1 }, "a slot to be ready")
	taken := slots.added(t)[0]
	fds, output := stdioPipes(t)
	c.send(runReq("long", request.Request{ID: "serve-long", Cwd: root, TmpRoot: root}, "/bin/sleep", "60"), fds...)
	if r := c.next(); r.Event != "accepted" {
		t.Fatalf("reply %+v, want accepted", r)
	}
	waitFor(t, func() bool {
		for _, s := range slots.added(t) {
			if s != taken {
				return true
			}
		}
		return false
	}, "a slot made beside the long run")
	c.send(map[string]any{"op": "cancel", "req": "long"})
	r := c.await("long")
	output()
	if rep := r.report(t); rep.Status != report.StatusCancelled || rep.Start != "slot" {
		t.Errorf("the long run: status %s, start %s; want cancelled, from the slot", rep.Status, rep.Start)
	}
}
