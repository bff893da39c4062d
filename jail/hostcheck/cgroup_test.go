package hostcheck

import (
	"errors"
	"fmt"
	"testing"

	"github.com/scidex/scidex-jail/cgroupfs"
)

// TestExplain: a facility's missing-feature error splits into what was
// found and its fix, wrapped or not; any other error is its own text.
func TestExplain(t *testing.T) {
	ue := &cgroupfs.UnsupportedError{Feature: "cgroup v2 memory controller", Found: "/sys/fs/cgroup has [pids]", Fix: "enable memory"}
	cases := []struct {
		name       string
		err        error
		found, fix string
	}{
		{"unsupported", ue, "cgroup v2 memory controller not available: /sys/fs/cgroup has [pids]", "enable memory"},
		{"wrapped", fmt.Errorf("probe: %w", ue), "cgroup v2 memory controller not available: /sys/fs/cgroup has [pids]", "enable memory"},
		{"no fix", &cgroupfs.UnsupportedError{Feature: "cgroup v1", Found: "no memory hierarchy"}, "cgroup v1 not available: no memory hierarchy",
			"see the cgroupfs package documentation"},
		{"other", errors.New("read /proc/self/cgroup: EACCES"), "read /proc/self/cgroup: EACCES", "see the error above; it names what failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			found, fix := Explain(c.err)
			if found != c.found || fix != c.fix {
				t.Errorf("Explain(%v) = %q, %q, want %q, %q", c.err, found, fix, c.found, c.fix)
			}
		})
	}
}
