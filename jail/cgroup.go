package jail

import (
	"github.com/scidex/scidex-jail/jail/runfiles"

	"fmt"

	"github.com/scidex/scidex-jail/cgroupfs"
)

// createLeaf makes the run's cgroup leaf with its limits written, before
// the init exists. nil when the caller disabled the cgroup layer. On v1 the
// thread the init is forked from (spawner) holds one of its pids while the
// init runs, as the init's own threads do.
func (sv *supervisor) createLeaf() error {
	s := sv.spec
	if s.disabled(ProtectCgroup) {
		return nil
	}
	cfg := cgroupfs.Config{
		Parent: s.CgroupParent,
		Name:   runfiles.LeafName(s.ID),
		Limits: cgroupfs.Limits{
			MemoryBytes: s.Resources.MemoryBytes,
			SwapBytes:   s.Resources.SwapBytes,
			CPUs:        s.Resources.CPUs,
			PIDs:        s.Resources.PIDs,
		},
	}
	// One look at the host's cgroups serves the sweep and the leaf.
	h, err := cgroupfs.ReadHost()
	if err != nil {
		return fmt.Errorf("create cgroup leaf: %w", err)
	}
	// Leaves of dead jails, when a sweep is due (sweep.go).
	sv.rep.Warnings = append(sv.rep.Warnings, runfiles.SweepStaleLeaves(h, cfg, s.TmpRoot)...)
	leaf, err := h.Create(cfg)
	if err != nil {
		return fmt.Errorf("create cgroup leaf: %w", err)
	}
	sv.leaf = leaf
	sv.rep.Enforced.Cgroup = &CgroupReport{Version: leaf.Version(), Paths: leaf.Paths(), Written: leaf.Written()}
	return nil
}

// closeLeaf reads the usage, kills whatever is left and removes the leaf.
// It returns warnings rather than touching the report's list, since it runs
// beside the run directory's removal.
func (sv *supervisor) closeLeaf() []string {
	if sv.leaf == nil {
		return nil
	}
	var warn []string
	if sv.spawner != nil {
		// The spawning thread goes first: the leaf cannot be removed
		// while it is in it.
		if err := sv.spawner.end(sv.init); err != nil {
			warn = append(warn, fmt.Sprintf("remove cgroup leaf: %v; left in place", err))
			sv.leaf = nil
			return warn
		}
	}
	if u, err := sv.leaf.Usage(); err == nil {
		sv.usage = &u
		sv.rep.Enforced.Cgroup.Usage = &u
	} else {
		warn = append(warn, fmt.Sprintf("read cgroup usage: %v", err))
	}
	if err := sv.leaf.Remove(); err != nil {
		warn = append(warn, fmt.Sprintf("remove cgroup leaf: %v", err))
	}
	sv.leaf = nil
	return warn
}
