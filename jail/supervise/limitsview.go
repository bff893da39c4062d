package supervise

import (
	"fmt"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/view"
)

// withLimits is p's init config with the run's leaf to show and its
// /proc/meminfo, made now, as the init starts: the leaf's usage is then
// the init's own.
func withLimits(p *jail.Plan, leaf *cgroupfs.Leaf) (protocol.Config, error) {
	c := p.Init
	if leaf == nil {
		return c, nil
	}
	c.Mounts.Cgroup = &protocol.CgroupView{Version: leaf.Version(), Controllers: leaf.Controllers()}
	// The leaf is the plan's (meminfoShown: a cgroup with a memory limit).
	lim := p.Cgroup.Limits
	if lim[cgroupfs.MemoryKey].N <= 0 {
		return c, nil
	}
	used, err := leaf.MemoryCurrent()
	if err != nil {
		return c, fmt.Errorf("the run's /proc/meminfo: %w", err)
	}
	host, err := view.HostMeminfo()
	if err != nil {
		return c, fmt.Errorf("the run's /proc/meminfo: %w", err)
	}
	c.Mounts.Meminfo = view.MeminfoView(string(host), lim[cgroupfs.MemoryKey].N, lim[cgroupfs.SwapKey].N, used)
	return c, nil
}
