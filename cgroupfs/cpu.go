package cgroupfs

import "fmt"

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
