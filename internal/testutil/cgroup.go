package testutil

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// RequireCgroup2Env is set to 1 by the VM harness (cmd/vmtest), whose
// kernel has a pure cgroup v2 hierarchy: there the cgroup v2 tests must run,
// and a skip is a failure.
const RequireCgroup2Env = "SCIDEX_REQUIRE_CGROUP2"

// Cgroup2Required says whether this is the VM harness, where a cgroup v2
// test that cannot run fails instead of skipping.
func Cgroup2Required() bool { return os.Getenv(RequireCgroup2Env) == "1" }

// Cgroup is one line of /proc/PID/cgroup placed on the mounts that show it.
type Cgroup struct {
	Version     int      // 1 or 2
	Controllers []string // v1: the hierarchy's controllers ([cpu cpuacct]) or name ([name=systemd]); nil on v2
	Path        string   // the cgroup's path in its hierarchy
	Dirs        []string // its directory under each mount of the hierarchy whose root holds it, in mountinfo order
}

// Named says whether c is a v1 hierarchy without controllers
// (name=systemd): the jail never makes leaves there.
func (c Cgroup) Named() bool {
	return c.Version == 1 && len(c.Controllers) > 0 && strings.HasPrefix(c.Controllers[0], "name=")
}

// PlaceCgroups matches the lines of /proc/PID/cgroup (proc(5):
// hierarchy-ID:controllers:path, "0::path" for cgroup v2) with the cgroup
// mounts: a v2 line with the cgroup2 mounts, a v1 line with the cgroup
// mounts whose super options hold all its controllers. A mount shows the
// cgroup when the cgroup lies at or below the mount's root; a cgroup
// outside this cgroup namespace ("/../x") lies below none. Lines come back
// in order, with no Dirs when no mount shows them.
func PlaceCgroups(procCgroup string, mounts []Mount) ([]Cgroup, error) {
	var out []Cgroup
	for _, line := range strings.Split(strings.TrimSpace(procCgroup), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[2] == "" {
			return nil, fmt.Errorf("cgroup line %q: want hierarchy-ID:controllers:path", line)
		}
		c := Cgroup{Version: 2, Path: f[2]}
		fstype := "cgroup2"
		if f[1] != "" {
			c.Version, c.Controllers, fstype = 1, strings.Split(f[1], ","), "cgroup"
		}
		for _, m := range mounts {
			if m.FSType != fstype || !holdsAll(m.SuperOptions, c.Controllers) {
				continue
			}
			rel, ok := below(m.Root, c.Path)
			if !ok {
				continue
			}
			d := path.Join(m.Point, rel)
			if !slices.Contains(c.Dirs, d) {
				c.Dirs = append(c.Dirs, d)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func holdsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// below is p relative to root, and whether p is root or inside it.
func below(root, p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || p == "/.." || strings.HasPrefix(p, "/../") {
		return "", false
	}
	root, p = path.Clean(root), path.Clean(p)
	switch {
	case root == "/":
		return p, true
	case p == root:
		return "/", true
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):], true
	}
	return "", false
}

// OwnCgroups places this process's cgroups (/proc/self/cgroup) on this
// process's mounts.
func OwnCgroups() ([]Cgroup, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	mounts, err := ReadMounts()
	if err != nil {
		return nil, err
	}
	cgs, err := PlaceCgroups(string(self), mounts)
	if err != nil {
		return nil, fmt.Errorf("parse /proc/self/cgroup: %w", err)
	}
	return cgs, nil
}

// Cgroup2Mount is the mount point of the whole cgroup v2 hierarchy (a
// cgroup2 mount whose root is "/"), the last one when it is mounted more
// than once, or "" when there is none.
func Cgroup2Mount(mounts []Mount) string {
	point := ""
	for _, m := range mounts {
		if m.FSType == "cgroup2" && m.Root == "/" {
			point = m.Point
		}
	}
	return point
}
