package jail

import (
	"fmt"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
)

// staleLeafAge is how old an unlocked leaf must be before a run removes it
// as a leftover: far longer than the moment between a leaf's mkdir and its
// owner's flock.
const staleLeafAge = 2 * time.Second

// createLeaf makes the run's cgroup leaf with its limits written, before
// the init exists. nil when the caller disabled the cgroup layer.
func (sv *supervisor) createLeaf() error {
	s := sv.spec
	if s.disabled("cgroup") {
		return nil
	}
	cfg := cgroupfs.Config{
		Parent: s.CgroupParent,
		Name:   "scidex-" + s.ID + "-" + randomSuffix(),
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
	sv.rep.Warnings = append(sv.rep.Warnings, sweepStaleLeaves(h, cfg, s.TmpRoot)...)
	leaf, err := h.Create(cfg)
	if err != nil {
		return fmt.Errorf("create cgroup leaf: %w", err)
	}
	sv.leaf = leaf
	sv.rep.Enforced.Cgroup = &CgroupReport{Version: leaf.Version(), Paths: leaf.Paths(), Written: leaf.Written()}
	return nil
}

// enterLeaf puts the init into the leaf on cgroup v1, where it cannot be
// born there. The init blocks on its config until after this.
func (sv *supervisor) enterLeaf(pid int) error {
	if sv.leaf == nil {
		return nil
	}
	if _, ok := sv.leaf.FD(); ok {
		return nil // born inside with CLONE_INTO_CGROUP
	}
	if err := sv.leaf.AddProcess(pid); err != nil {
		return fmt.Errorf("move the init into its cgroup leaf: %w", err)
	}
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
