package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeSlotHoldsTheOnlyID: a run that takes a slot holds the slot's
// ids and leases none of its own, so a range of one id serves runs from
// slots, the slot holding the id: each run was refused with the range
// full when it leased its own before it took the slot (issue 36).
//
// A run that comes while the next slot is being made (it holds the id)
// starts cold and finds the range full, and is sent again; so is one
// that starts cold because the pool follows its shape.
func TestServeSlotHoldsTheOnlyID(t *testing.T) {
	root := tmpRoot(t)
	id := 0x71000000 + os.Getpid()%4096 // outside the default range, one test's
	one := fmt.Sprintf("%d-%d", id, id)
	c := startServe(t, "--slots", "1", "--uid-range", one)
	for try := 1; ; try++ {
		req := fmt.Sprintf("one%d", try)
		fds, output := stdioPipes(t)
		c.send(runReq(req, request.Request{ID: "one-id-" + req, Cwd: root, TmpRoot: root, UIDRange: one}, "/usr/bin/id", "-u"), fds...)
		r := c.await(req)
		out := output()
		if r.failed() {
			t.Logf("try %d: %s %s", try, r.Event, r.Error)
		} else if rep := r.report(t); rep.Start != "slot" {
			t.Logf("try %d: started %s, %s", try, rep.Start, rep.Status)
		} else {
			if rep.Status != "ok" || rep.Enforced.HostUID != id {
				t.Errorf("run from a slot: status %s, host uid %d (analysis: %s), want ok as %d", rep.Status, rep.Enforced.HostUID, out, id)
			}
			return
		}
		if try == 40 {
			t.Fatalf("no run of a one-id range ran from a slot in %d tries, want the slot's id to serve it", try)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
