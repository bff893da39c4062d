package jail

import (
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
)

// The run's limits as the analysis sees them: the CPUs it may run on and
// /proc/meminfo, shown only where a cgroup leaf enforces them. With the
// cgroup layer disabled (--unsafe-disable cgroup) or a limit switched off,
// the analysis sees the host's, which is then the truth: a memory limit
// that nothing enforces would only tell it a story.

// CPUOnline is the file of the CPUs the analysis may run on, which the
// view shows (no other file of /sys is there): glibc's
// sysconf(_SC_NPROCESSORS_ONLN), and so Python's os.cpu_count, reads it.
const CPUOnline = "/sys/devices/system/cpu/online"

// limitsViewPaths are the paths of the view the analysis reads its limits
// from, for Landlock: /proc (meminfo), the CPU list and, when there is a
// leaf, the cgroup file system that shows it.
func limitsViewPaths(s *Spec) []string {
	p := []string{"/proc", CPUOnline}
	if !s.disabled(promise.ProtectCgroup) {
		p = append(p, protocol.CgroupMount)
	}
	return p
}

// quotaCPUs is a CPU quota rounded up to whole CPUs: 0.5 -> 1, 1.5 -> 2.
func quotaCPUs(cpus float64) int { return int(cpus + 0.999) }

// planLimitsView sets how many CPUs the init pins the target to.
func planLimitsView(s *Spec, c *protocol.Config) {
	if !s.disabled(promise.ProtectCgroup) && s.Limits.CPUs(limits.CPUQuota) > 0 {
		c.CPUs = quotaCPUs(s.Limits.CPUs(limits.CPUQuota))
	}
}

// meminfoShown is whether the run's /proc/meminfo shows its memory limit.
func (s *Spec) meminfoShown() bool {
	return !s.disabled(promise.ProtectCgroup) && s.Limits.Int(limits.Memory) > 0
}

// meminfoReport says in the report what /proc/meminfo showed.
func meminfoReport(s *Spec) string {
	if s.meminfoShown() {
		return "the run's memory limit: MemTotal the limit, MemFree and MemAvailable what it left as the run started (a snapshot, not updated)"
	}
	return "the host's (no memory limit enforced)"
}
