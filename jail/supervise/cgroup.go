package supervise

import (
	"fmt"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// createLeaf makes the run's cgroup leaf as the plan has it, with its
// limits written, before the init exists; nil when the plan has none (the
// caller disabled the cgroup layer). It returns the warnings of the sweep
// of dead jails' leaves it does on the way. On v1 the thread the init is
// forked from (spawner) holds one of its pids while the init runs, as the
// init's own threads do.
func createLeaf(p *jail.CgroupPlan, tmpRoot string) (*cgroupfs.Leaf, []string, error) {
	if p == nil {
		return nil, nil, nil
	}
	cfg := cgroupfs.Config{Parent: p.Parent, Name: runfiles.Unique(p.Name), Limits: p.Limits}
	// One look at the host's cgroups serves the sweep and the leaf.
	h, err := cgroupfs.ReadHost()
	if err != nil {
		return nil, nil, fmt.Errorf("create cgroup leaf: %w", err)
	}
	// Leaves of dead jails, when a sweep is due (sweep.go).
	warnings := runfiles.SweepStaleLeaves(h, cfg, tmpRoot)
	leaf, err := h.Create(cfg)
	if err != nil {
		return nil, warnings, fmt.Errorf("create cgroup leaf: %w", err)
	}
	return leaf, warnings, nil
}

// closeLeaf reads the usage, kills whatever is left and removes the leaf,
// the spawner's thread first (v1), and returns the warnings.
//
// readUsage false: the counters are not read (nil usage).
func closeLeaf(leaf *cgroupfs.Leaf, sp *initconn.Spawner, init *initconn.Conn, readUsage bool) (*cgroupfs.Usage, []string) {
	if leaf == nil {
		return nil, nil
	}
	var warn []string
	if sp != nil {
		// The spawning thread goes first: the leaf cannot be removed
		// while it is in it.
		if err := sp.End(init); err != nil {
			return nil, append(warn, fmt.Sprintf("remove cgroup leaf: %v; left in place", err))
		}
	}
	var usage *cgroupfs.Usage
	if readUsage {
		u, err := leaf.Usage()
		if err != nil {
			warn = append(warn, fmt.Sprintf("read cgroup usage: %v", err))
		} else {
			usage = &u
		}
	}
	if err := leaf.Remove(); err != nil {
		warn = append(warn, fmt.Sprintf("remove cgroup leaf: %v", err))
	}
	return usage, warn
}

// leafReport is the report's view of the run's leaf as it was made.
func leafReport(leaf *cgroupfs.Leaf) *report.CgroupReport {
	return &report.CgroupReport{Version: leaf.Version(), Paths: leaf.Paths(), Written: leaf.Written()}
}
