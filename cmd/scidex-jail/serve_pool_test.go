package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeRefillBesideALongRun: no slot is made while a run is at its
// start or its end, but one is made beside a run whose analysis goes on:
// with --slots 1, a long run takes the ready slot, and a new one is made
// while it runs.
//
// A slot's leaf exists from its making, before its init's hello puts it
// in the pool: a request that comes in between starts cold (seen on a
// loaded host, where the hello is slow), and with the one slot still
// ready none is missing. Such a try is cancelled and made again: by then
// the slot is the pool's.
func TestServeRefillBesideALongRun(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "1")
	slots := c.slots()
	waitFor(t, func() bool { return len(slots.added(t)) == 1 }, "a slot to be ready")
	taken := slots.added(t)[0]
	for try := 1; ; try++ {
		name, id := fmt.Sprintf("long%d", try), fmt.Sprintf("serve-long-%d", try)
		fds, output := stdioPipes(t)
		c.send(runReq(name, request.Request{ID: id, Cwd: root, TmpRoot: root}, "/bin/sleep", "60"), fds...)
		if r := c.next(); r.Event != "accepted" {
			t.Fatalf("reply %+v, want accepted", r)
		}
		var beside, cold bool
		waitFor(t, func() bool {
			beside = slices.ContainsFunc(slots.added(t), func(s string) bool { return s != taken })
			cold = len(leavesOf(t, id)) > 0
			return beside || cold
		}, "a slot made beside the long run (or the run's own leaf: started cold)")
		c.send(map[string]any{"op": "cancel", "req": name})
		r := c.await(name)
		output()
		rep := r.report(t)
		switch {
		case beside && (rep.Status != report.StatusCancelled || rep.Start != "slot"):
			t.Errorf("the long run: status %s, start %s; want cancelled, from the slot", rep.Status, rep.Start)
		case !beside && try < 3:
			t.Logf("try %d started %s before the slot was the pool's; again", try, rep.Start)
			continue
		case !beside:
			t.Fatalf("the long run started %s %d times with a slot made: want it to take the slot", rep.Start, try)
		}
		return
	}
}
