package initproc

import (
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// mountCgroupView mounts the run's cgroup leaf read-only at
// protocol.CgroupMount. The init is in its own cgroup namespace, born in
// the leaf (v2: CLONE_INTO_CGROUP, after which the kernel makes the leaf
// the namespace's root; v1: cloned by a thread already in it), so a
// cgroup file system mounted here has the leaf as its root: the analysis
// sees its own limits and usage (memory.max, cpu.max, memory.current;
// v1: memory.limit_in_bytes, cpu.cfs_quota_us, ...) and nothing above.
// The kernel allows these mounts to the owner of the cgroup namespace
// (cgroup and cgroup2 are FS_USERNS_MOUNT); on v1 only of hierarchies
// that exist already, which is all this asks for.
func mountCgroupView(v *protocol.CgroupView) error {
	if v == nil {
		return nil
	}
	const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	dir := newRoot + protocol.CgroupMount
	if v.Version == 2 {
		return mkdirMount("cgroup2", dir, "cgroup2", flags, "")
	}
	// There even if no hierarchy below matches: Landlock's rule for it
	// needs the path.
	if err := mkdirAll(dir); err != nil {
		return wrap.Error("create "+dir, err)
	}
	// The hierarchies, by their co-mounted controller sets, from the
	// init's own /proc/self/cgroup ("4:cpu,cpuacct:/").
	data, err := sysfile.Read("/proc/self/cgroup")
	if err != nil {
		return wrap.Error("read /proc/self/cgroup", err)
	}
	for _, set := range v1Hierarchies(string(data), v.Controllers) {
		if err := mkdirMount("cgroup", dir+"/"+set, "cgroup", flags, set); err != nil {
			return err
		}
		// As on the host: /sys/fs/cgroup/cpu -> cpu,cpuacct.
		if ctrls := strings.Split(set, ","); len(ctrls) > 1 {
			for _, c := range ctrls {
				if err := symlink(set, dir+"/"+c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// v1Hierarchies are the controller sets of /proc/self/cgroup's v1
// hierarchies that hold one of want, in the file's order.
func v1Hierarchies(procCgroup string, want []string) []string {
	var out []string
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[1] == "" || strings.Contains(f[1], "=") || slices.Contains(out, f[1]) {
			continue // v2's "0::/", named hierarchies (name=systemd)
		}
		if slices.ContainsFunc(strings.Split(f[1], ","), func(c string) bool { return slices.Contains(want, c) }) {
			out = append(out, f[1])
		}
	}
	return out
}
