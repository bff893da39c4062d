package cgroupfs

import (
	"fmt"
	"path/filepath"
	"slices"
)

// The cgroup v1 backend, for hybrid hosts whose controllers are still on v1.
//
// Kill does not use the v1 freezer: it would need one more leaf, and v1's
// FREEZING state can hang on tasks in uninterruptible sleep. The SIGKILL loop
// over cgroup.procs converges without it: a process with a pending SIGKILL
// cannot fork any more (fork checks for fatal signals), so each round leaves
// only children forked before it, and a PID limit bounds those.

// v1Dir is one v1 hierarchy a leaf uses.
type v1Dir struct {
	controllers []string // those we use from it: memory, cpu, cpuacct, pids
	parent      string   // directory the leaf goes in
}

// v1Controllers are the hierarchies a v1 leaf uses when mounted; memory
// always, cpu and pids too when Limits need them.
var v1Controllers = []string{"memory", "cpu", "cpuacct", "pids"}

// probeV1 finds the parent directory in each hierarchy. Co-mounted
// controllers (cpu,cpuacct on most hosts; separate mounts on some) share a
// directory.
func (h host) probeV1(parent string, l Limits) ([]*v1Dir, error) {
	need := l.controllers()
	byMount := map[string]*v1Dir{}
	var out []*v1Dir
	for _, c := range v1Controllers {
		required := slices.Contains(need, c)
		hier := h.v1[c]
		if hier == nil {
			if required {
				return out, &UnsupportedError{
					Feature: "cgroup v1 " + c + " controller",
					Found:   "no cgroup v1 hierarchy with " + c + " in /proc/self/mountinfo, and no cgroup v2 memory controller",
					Fix:     fmt.Sprintf("mount it (mount -t cgroup -o %s cgroup /sys/fs/cgroup/%s), or use a cgroup v2 host", c, c),
				}
			}
			continue
		}
		if d := byMount[hier.mount]; d != nil {
			d.controllers = append(d.controllers, c)
			continue
		}
		dir, err := hier.parentDir(parent)
		if err != nil {
			if required {
				return out, err
			}
			continue // accounting only (cpuacct, or cpu/pids without a limit)
		}
		d := &v1Dir{controllers: []string{c}, parent: dir}
		byMount[hier.mount] = d
		out = append(out, d)
	}
	return out, nil
}

func (l *Leaf) createV1(dirs []*v1Dir, c Config) error {
	for _, d := range dirs {
		leaf := filepath.Join(d.parent, c.Name)
		if err := l.mkLeaf(leaf); err != nil {
			return err
		}
		for _, ctl := range d.controllers {
			l.role[ctl] = leaf
		}
	}
	return l.apply(Settings(1, c.Limits), func(ctl string) string { return l.role[ctl] })
}

// userHZ is the unit of cpuacct.stat: USER_HZ, 100 on every Linux ABI.
const userHZ = 100

// usageV1 reads each controller's counters from its hierarchy's leaf,
// where the leaf has one, and the CPU time from cpuacct.
func (l *Leaf) usageV1() (Usage, error) {
	var u Usage
	for _, c := range controllerFiles {
		if d, ok := l.role[c.name]; ok {
			if err := c.stat(1, d, &u); err != nil {
				return u, fmt.Errorf("cgroupfs: usage: %w", err)
			}
		}
	}
	if d, ok := l.role["cpuacct"]; ok {
		if err := cpuacctUsage(d, &u); err != nil {
			return u, fmt.Errorf("cgroupfs: usage: %w", err)
		}
	}
	return u, nil
}

// cpuacctUsage reads CPU time. cpuacct.usage_user/_sys (4.7+) are in ns;
// older kernels only have cpuacct.stat in USER_HZ ticks.
func cpuacctUsage(dir string, u *Usage) error {
	total, err := intOptional(filepath.Join(dir, "cpuacct.usage"))
	if err != nil {
		return err
	}
	u.CPUUsageUsec = total / 1000
	data, ok, err := readOptional(filepath.Join(dir, "cpuacct.usage_user"))
	if err != nil {
		return err
	}
	if ok {
		user, err := parseInt("cpuacct.usage_user", data)
		if err != nil {
			return err
		}
		sys, err := intOptional(filepath.Join(dir, "cpuacct.usage_sys"))
		if err != nil {
			return err
		}
		u.CPUUserUsec, u.CPUSystemUsec = user/1000, sys/1000
		return nil
	}
	st, err := keyedOptional(filepath.Join(dir, "cpuacct.stat"))
	if err != nil {
		return err
	}
	u.CPUUserUsec = st["user"] * (1000000 / userHZ)
	u.CPUSystemUsec = st["system"] * (1000000 / userHZ)
	return nil
}
