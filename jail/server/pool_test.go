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
