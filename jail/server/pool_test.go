package server

import (
	"testing"
	"time"
)

// TestPoolBackoff: a slot that cannot be made is tried again after a wait
// that doubles up to maxBackoff, and its reason is warned once, again
// only when it changes.
func TestPoolBackoff(t *testing.T) {
	var warned []string
	p := &pool{cfg: PoolConfig{Warn: func(s string) { warned = append(warned, s) }}}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	for i, w := range want {
		p.failed("no cgroup")
		if p.backoff != w || time.Until(p.retryAt) > w || time.Until(p.retryAt) < w-time.Second {
			t.Errorf("failure %d: backoff %v, retry in %v; want %v", i+1, p.backoff, time.Until(p.retryAt), w)
		}
	}
	for range 20 {
		p.failed("no cgroup")
	}
	if p.backoff != maxBackoff {
		t.Errorf("after many failures: backoff %v, want %v", p.backoff, maxBackoff)
	}
	p.failed("no init")
	if len(warned) != 2 || warned[0] != "no cgroup" || warned[1] != "no init" {
		t.Errorf("warned %q, want each reason once", warned)
	}
}

// TestNoSlotAtARunsEdges: slots are not made while a run is at its start
// (from its place to its target's start) or at its end (from the
// target's end to its reply), nor while every place is taken; they are
// while each run's target runs and a place is free.
func TestNoSlotAtARunsEdges(t *testing.T) {
	s := New(Config{MaxRuns: 2})
	defer s.pool.close()
	check := func(when string, want bool) {
		t.Helper()
		if got := s.busy(); got != want {
			t.Errorf("%s: busy() = %v, want %v", when, got, want)
		}
	}
	check("idle", false)
	a := s.enter()
	check("a at its start", true)
	a.running(true)
	check("a's target runs", false)
	b := s.enter()
	check("b at its start, a's target running", true)
	b.running(true)
	check("both targets run", false)
	b.running(false)
	check("b at its end", true)
	b.running(false) // a second end changes nothing
	b.done()
	check("b replied", false)
	a.done() // its target still ran (the init died): nothing to uncount
	check("a gone", false)
	c := s.enter()
	c.done() // never started (cancelled while queued, a setup error)
	check("c gone", false)
	s.places <- struct{}{}
	s.places <- struct{}{}
	check("every place taken", true)
}
