package cgroupfs

import (
	"fmt"
	"math"
	"path/filepath"
)

// The cpu controller: a CFS quota per period of cpuPeriodUsec.

// CPUsKey is the key of Limits of the CPU quota, in CPUs (Value.CPUs):
// cpu.max "quota 100000" / cpu.cfs_quota_us with period 100000; 0 = no
// limit.
const CPUsKey = "cpus"

// checkCPUs refuses a quota that is no number or that the kernel refuses
// (below 1 ms: cpu.max, cpu.cfs_quota_us: EINVAL).
func checkCPUs(l Limits) error {
	cpus := l[CPUsKey].CPUs
	if math.IsNaN(cpus) || math.IsInf(cpus, 0) || cpus < 0 || cpus > 1<<20 {
		return fmt.Errorf("cgroupfs: limits: CPUs %v: want 0 (no limit) or a positive number", cpus)
	}
	if cpus > 0 && l.cpuQuota() < 1000 {
		return fmt.Errorf("cgroupfs: limits: CPUs %v: below the kernel's minimum of %g", cpus, MinCPUs)
	}
	return nil
}

func (l Limits) cpuQuota() int64 { return int64(math.Round(l[CPUsKey].CPUs * cpuPeriodUsec)) }

// cpuSettings: v2 cpu.max "quota period"; v1 the period, then the quota.
func cpuSettings(version int, l Limits) []Setting {
	if version == 2 {
		return []Setting{{File: "cpu.max", Value: fmt.Sprintf("%d %d", l.cpuQuota(), cpuPeriodUsec)}}
	}
	return []Setting{
		{File: "cpu.cfs_period_us", Value: fmt.Sprint(cpuPeriodUsec)},
		{File: "cpu.cfs_quota_us", Value: fmt.Sprint(l.cpuQuota())},
	}
}

// statCPU reads cpu.stat: on v2 the CPU time and the throttling (us); on
// v1 the throttling only (throttled_time in ns; the time is cpuacct's).
func statCPU(read reader, version int, dir string, u *Usage) error {
	st, err := keyedOptional(read, filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return err
	}
	u.NrPeriods, u.NrThrottled = st["nr_periods"], st["nr_throttled"]
	if version == 1 {
		u.ThrottledUsec = st["throttled_time"] / 1000
		return nil
	}
	u.CPUUsageUsec, u.CPUUserUsec, u.CPUSystemUsec = st["usage_usec"], st["user_usec"], st["system_usec"]
	u.ThrottledUsec = st["throttled_usec"]
	return nil
}
