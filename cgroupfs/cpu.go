package cgroupfs

import (
	"fmt"
	"path/filepath"
)

// The cpu controller: a CFS quota per period of cpuPeriodUsec.

func isCPUSet(l Limits) bool { return l.CPUs > 0 }

// cpuSettings: v2 cpu.max "quota period"; v1 the period, then the quota.
func cpuSettings(version int, l Limits) []Setting {
	if version == 2 {
		return []Setting{{Controller: "cpu", File: "cpu.max", Value: fmt.Sprintf("%d %d", l.cpuQuota(), cpuPeriodUsec)}}
	}
	return []Setting{
		{Controller: "cpu", File: "cpu.cfs_period_us", Value: fmt.Sprint(cpuPeriodUsec)},
		{Controller: "cpu", File: "cpu.cfs_quota_us", Value: fmt.Sprint(l.cpuQuota())},
	}
}

// statCPU reads cpu.stat: on v2 the CPU time and the throttling (us); on
// v1 the throttling only (throttled_time in ns; the time is cpuacct's).
func statCPU(version int, dir string, u *Usage) error {
	st, err := keyedOptional(filepath.Join(dir, "cpu.stat"))
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
