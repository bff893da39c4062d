package initproc

import (
	"testing"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// TestHeldViewComplete: a slot's init completes its run's part of the
// config (protocol.RunPart) from the view it built only when the part
// names that view's digest; a part of another view, or a whole config
// with no digest, is refused.
func TestHeldViewComplete(t *testing.T) {
	run := &protocol.Config{Command: []string{"/bin/true"}, RunDir: "/tmp/scidex-analysis-a", Hostname: "scidex-a", UID: 1000, GID: 1000,
		Mounts: protocol.Mounts{RunDir: "/tmp/scidex-analysis-a", RunDirBytes: 1 << 20}}
	v := protocol.ViewOf(run)
	v.ViewSum = "view-1"
	h := &heldView{view: &v, meminfo: -1, sum: v.ViewSum}
	part := func(sum string) protocol.Config {
		p := protocol.RunPart(run)
		p.ViewSum = sum
		return p
	}
	for _, c := range []struct {
		name string
		part protocol.Config
		ok   bool
	}{
		{"its run's part", part("view-1"), true},
		{"the part of another view", part("view-2"), false},
		{"a part with no digest", part(""), false},
		{"a whole config", *run, false},
	} {
		got, err := h.complete(&c.part)
		if (err == nil) != c.ok {
			t.Errorf("%s: complete = %v, want ok %t", c.name, err, c.ok)
		}
		if c.ok && (got == nil || got.Hostname != run.Hostname || got.Mounts.RunDir != run.Mounts.RunDir || got.UID != run.UID) {
			t.Errorf("%s: complete = %+v, want the run's config", c.name, got)
		}
	}
}
