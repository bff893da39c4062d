package main

import (
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/request"
)

// TestServeQueued: a request that waits for a place has its wait as the
// report's queued phase, never in startup, and the server's figures at
// its admission in served. The bounds are causal, not timed: b was
// accepted (its reply read) before a was cancelled, and b's place came
// only once a ended, so its queued phase holds at least the time between
// those two; its startup (parse and admission) fits between its send and
// its accepted reply.
func TestServeQueued(t *testing.T) {
	root := tmpRoot(t)
	c := startServe(t, "--slots", "0", "--max-runs", "1", "--queue", "4")
	m := marker(t)
	c.send(runReq("a", request.Request{ID: "serve-q-a", Cwd: root, TmpRoot: root}, "/bin/sleep", m))
	if r := c.next(); r.Event != "accepted" || r.Req != "a" {
		t.Fatalf("reply %+v, want a accepted", r)
	}
	waitFor(t, func() bool { return len(testutil.ProcessesWith(m)) > 0 }, "a's sleep to start")
	sentB := time.Now()
	c.send(runReq("b", request.Request{ID: "serve-q-b", Cwd: root, TmpRoot: root}, "/bin/true"))
	if r := c.next(); r.Event != "accepted" || r.Req != "b" {
		t.Fatalf("reply %+v, want b accepted", r)
	}
	acceptedB := time.Now()
	c.send(runReq("c", request.Request{ID: "serve-q-c", Cwd: root, TmpRoot: root}, "/bin/true"))
	if r := c.next(); r.Event != "accepted" || r.Req != "c" {
		t.Fatalf("reply %+v, want c accepted", r)
	}
	time.Sleep(200 * time.Millisecond) // a wait the queued phase must show
	cancelled := time.Now()
	c.send(map[string]any{"op": "cancel", "req": "a"})
	got := map[string]*report.Report{}
	for len(got) < 3 {
		if r := c.next(); r.Event == "done" {
			got[r.Req] = r.report(t)
		} else if r.failed() {
			t.Fatalf("reply %+v, want done", r)
		}
	}
	for _, w := range []struct {
		req  string
		want report.Served
	}{
		{"a", report.Served{MaxRuns: 1, Queue: 4, Running: 0, QueuedAhead: 0}},
		{"b", report.Served{MaxRuns: 1, Queue: 4, Running: 1, QueuedAhead: 0}},
		{"c", report.Served{MaxRuns: 1, Queue: 4, Running: 1, QueuedAhead: 1}},
	} {
		if s := got[w.req].Served; s == nil || *s != w.want {
			t.Errorf("%s: served = %+v, want %+v", w.req, s, w.want)
		}
	}
	ph := map[string]int64{}
	var names []string
	for _, p := range got["b"].Phases {
		if p.Where == "supervisor" {
			ph[p.Name] = p.Micros
			names = append(names, p.Name)
		}
	}
	if len(names) < 3 || names[0] != "startup" || names[1] != "queued" || names[2] != "validate" {
		t.Fatalf("b's supervisor phases = %v, want startup, queued, validate first", names)
	}
	if min := cancelled.Sub(acceptedB).Microseconds(); ph["queued"] < min {
		t.Errorf("b's queued phase = %d us, want at least the %d us from its accepted reply to a's cancel", ph["queued"], min)
	}
	if max := acceptedB.Sub(sentB).Microseconds(); ph["startup"] > max {
		t.Errorf("b's startup phase = %d us, want at most the %d us from its send to its accepted reply (the wait is not startup)", ph["startup"], max)
	}
}
