package cgroupfs

import (
	"fmt"
	"path/filepath"
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
	controllers []string // those we use from it, by hierarchy name: memory, cpu, cpuacct, pids
	parent      string   // directory the leaf goes in
}

// probeV1 finds the parent directory in the hierarchy of each controller
// with a v1 name, in the list's order: those l needs must be there, the
// others are taken when they are. Co-mounted controllers (cpu,cpuacct on
// most hosts; separate mounts on some) share a directory.
func (h host) probeV1(parent string, l Limits) ([]*v1Dir, error) {
	byMount := map[string]*v1Dir{}
	var out []*v1Dir
	for _, ctl := range controllers {
		c := ctl.v1
		if c == "" {
			continue
		}
		required := ctl.needed(l)
		hier := h.v1[c]
		if hier == nil {
			if required {
				return out, missingV1(ctl, "no cgroup v1 hierarchy with "+c+" in /proc/self/mountinfo, and no cgroup v2 memory controller")
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

// missingV1 is the error for a controller c whose v1 hierarchy a leaf
// needs and does not find: found says what was looked at.
func missingV1(c *controller, found string) error {
	return &UnsupportedError{
		Feature: "cgroup v1 " + c.v1 + " controller",
		Found:   found,
		Fix: fmt.Sprintf("mount its hierarchy (mkdir /sys/fs/cgroup/%s && mount -t cgroup -o %s cgroup /sys/fs/cgroup/%s; "+
			"the kernel needs %s), or use a cgroup v2 host (boot with systemd.unified_cgroup_hierarchy=1)", c.v1, c.v1, c.v1, c.kernel),
	}
}

// usageV1 reads each controller's counters from its hierarchy's leaf,
// where the leaf has one.
func (l *Leaf) usageV1() (Usage, error) {
	var u Usage
	for _, c := range controllers {
		if d, ok := l.role[c.v1]; ok && c.v1 != "" {
			if err := c.stat(l.counters.read, 1, d, &u); err != nil {
				return u, fmt.Errorf("cgroupfs: usage: %w", err)
			}
		}
	}
	return u, nil
}

// statCPUAcct reads v1's CPU time. cpuacct.usage_user/_sys (4.7+) are in
// ns; older kernels only have cpuacct.stat in USER_HZ ticks.
func statCPUAcct(read reader, _ int, dir string, u *Usage) error {
	total, err := intOptional(read, filepath.Join(dir, "cpuacct.usage"))
	if err != nil {
		return err
	}
	u.CPUUsageUsec = total / 1000
	data, ok, err := read(filepath.Join(dir, "cpuacct.usage_user"))
	if err != nil {
		return err
	}
	if ok {
		user, err := parseInt("cpuacct.usage_user", data)
		if err != nil {
			return err
		}
		sys, err := intOptional(read, filepath.Join(dir, "cpuacct.usage_sys"))
		if err != nil {
			return err
		}
		u.CPUUserUsec, u.CPUSystemUsec = user/1000, sys/1000
		return nil
	}
	st, err := keyedOptional(read, filepath.Join(dir, "cpuacct.stat"))
	if err != nil {
		return err
	}
	u.CPUUserUsec = st["user"] * (1000000 / userHZ)
	u.CPUSystemUsec = st["system"] * (1000000 / userHZ)
	return nil
}
