package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// host is what /proc/self/cgroup and /proc/self/mountinfo say about where
// this process sits.
type host struct {
	v2   *hierarchy            // the cgroup2 mount, nil if none
	v1   map[string]*hierarchy // v1 controller name -> its hierarchy
	self []procCgroup
}

// hierarchy is one mounted cgroup hierarchy and this process's place in it.
type hierarchy struct {
	mount string // mount point
	root  string // cgroup path shown at the mount point
	own   string // this process's cgroup path (from /proc/self/cgroup); "" if unknown
}

// ownDir is this process's cgroup directory in h.
func (h *hierarchy) ownDir() (string, error) {
	if h.own == "" {
		return "", fmt.Errorf("cgroupfs: find own cgroup under %s: /proc/self/cgroup has no line for it", h.mount)
	}
	rel, ok := under(h.root, h.own)
	if !ok {
		return "", fmt.Errorf("cgroupfs: find own cgroup under %s: own cgroup %s is outside the mount's root %s; pass the parent explicitly", h.mount, h.own, h.root)
	}
	return filepath.Join(h.mount, rel), nil
}

// parentDir is the directory leaves go in: parent resolved under h, or this
// process's own cgroup when parent is "" (the one it moved out of, when it
// is in its supervisor leaf: a long-lived process, scidex-jail serve, makes
// every leaf beside the first, not one level deeper each time). An
// absolute parent inside the mount is taken as a directory; anything else
// as a cgroup path relative to the mount.
func (h *hierarchy) parentDir(parent string) (string, error) {
	if parent == "" {
		own, err := h.ownDir()
		if err == nil && filepath.Base(own) == supervisorLeaf && own != h.mount {
			return filepath.Dir(own), nil
		}
		return own, err
	}
	if slices.Contains(strings.Split(parent, "/"), "..") {
		return "", fmt.Errorf("cgroupfs: parent %q: must not contain \"..\"", parent)
	}
	if p := filepath.Clean(parent); p == h.mount || strings.HasPrefix(p, h.mount+"/") {
		return p, nil
	}
	return filepath.Join(h.mount, filepath.Clean("/"+parent)), nil
}

// under returns p relative to root ("/x/y" under "/x" is "/y") and whether p
// is inside root at all.
func under(root, p string) (string, bool) {
	// In a cgroup namespace a cgroup outside the namespace shows as
	// "/../x": not reachable from here, and never to be joined to a mount.
	if path.Clean(p) != p || strings.HasPrefix(p, "/..") {
		return "", false
	}
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

// readHost reads this process's cgroups and the cgroup mounts.
func readHost() (host, error) {
	self, err := sysfile.Read("/proc/self/cgroup")
	if err != nil {
		return host{}, &UnsupportedError{Feature: "cgroups", Found: err.Error(), Fix: "a kernel with CONFIG_CGROUPS and /proc mounted"}
	}
	mi, err := sysfile.Read("/proc/self/mountinfo")
	if err != nil {
		return host{}, fmt.Errorf("cgroupfs: read mountinfo: %w", err)
	}
	return parseHost(string(self), string(mi))
}

// parseHost matches /proc/self/cgroup lines with mounts. A hierarchy
// mounted more than once (bind mounts) counts once: the first mount whose
// root holds our own cgroup wins.
func parseHost(selfData, mountinfo string) (host, error) {
	self, err := parseProcCgroup(selfData)
	if err != nil {
		return host{}, fmt.Errorf("cgroupfs: %w", err)
	}
	mounts, err := parseMountinfo(mountinfo)
	if err != nil {
		return host{}, fmt.Errorf("cgroupfs: %w", err)
	}
	h := host{v1: map[string]*hierarchy{}, self: self}
	for _, m := range mounts {
		switch m.FSType {
		case "cgroup2":
			own := ""
			for _, l := range self {
				if l.ID == 0 && len(l.Controllers) == 0 {
					own = l.Path
				}
			}
			cand := &hierarchy{mount: m.MountPoint, root: m.Root, own: own}
			if h.v2 == nil || (!reachable(h.v2) && reachable(cand)) {
				h.v2 = cand
			}
		case "cgroup":
			for _, c := range m.SuperOpts {
				if strings.Contains(c, "=") {
					continue // a named hierarchy (name=systemd): no controller
				}
				own, ok := "", false
				for _, l := range self {
					if slices.Contains(l.Controllers, c) {
						own, ok = l.Path, true
					}
				}
				if !ok {
					continue // a mount option, not a controller (rw, name=systemd, ...)
				}
				cand := &hierarchy{mount: m.MountPoint, root: m.Root, own: own}
				if old := h.v1[c]; old == nil || (!reachable(old) && reachable(cand)) {
					h.v1[c] = cand
				}
			}
		}
	}
	return h, nil
}

func reachable(h *hierarchy) bool {
	_, ok := under(h.root, h.own)
	return h.own != "" && ok
}

// Info is what the host offers, as [Probe] found it.
type Info struct {
	Version     int      // 2 or 1: the backend Create would use; 0 when neither is usable
	Parents     []string // directories leaves would go in: one on v2, one per hierarchy on v1
	Controllers []string // controllers leaves could use there
	Delegated   bool     // every parent is writable by this process
}

// Host is where this process sat in the cgroup hierarchies when
// [ReadHost] read /proc/self/cgroup and /proc/self/mountinfo. Read once, it
// serves a run's [Host.RemoveStale], [Host.Create] and [Host.Probe]
// without reading and parsing the mount table again. It does not follow
// later changes: on v2 a Create may move this process into the parent's
// supervisor leaf (see "Where leaves go" in the package doc), so read a new
// Host for another run.
type Host struct{ h host }

// ReadHost reads this process's cgroups and the cgroup mounts.
func ReadHost() (Host, error) {
	h, err := readHost()
	if err != nil {
		return Host{}, err
	}
	return Host{h}, nil
}

// Probe reports what the host offers for leaves below parent (see
// [Config.Parent]) without creating anything. When no backend is usable, or
// the parent is not writable, the error says why (errors.Is ErrUnsupported)
// and Info holds what was found up to that point. It reads the host
// afresh; [Host.Probe] uses one already read.
func Probe(parent string) (Info, error) {
	h, err := ReadHost()
	if err != nil {
		return Info{}, err
	}
	return h.Probe(parent)
}

// Probe is [Probe] on h.
func (h Host) Probe(parent string) (Info, error) {
	info, _, err := h.h.choose(parent, Limits{})
	if err != nil {
		return info, err
	}
	err = h.h.checkWritable(info)
	info.Delegated = err == nil
	return info, err
}

// choose picks the backend: cgroup v2 when its parent offers the memory
// controller, else cgroup v1 when a memory hierarchy is mounted. The
// controllers l needs must be there.
func (h host) choose(parent string, l Limits) (Info, []*v1Dir, error) {
	info, err2 := h.probeV2(parent)
	if err2 == nil {
		if err := missingV2(info, l.controllersOn(2)); err != nil {
			return info, nil, err
		}
		return info, nil, nil
	}
	if !errors.Is(err2, ErrUnsupported) {
		// A caller's mistake (a bad parent path), not a missing feature:
		// falling back to v1 would report it as one.
		return Info{}, nil, err2
	}
	if h.v1["memory"] == nil {
		return Info{}, nil, fmt.Errorf("cgroupfs: probe: %w", errors.Join(err2, &UnsupportedError{
			Feature: "cgroup v1 memory controller",
			Found:   "no cgroup v1 hierarchy with memory in /proc/self/mountinfo",
			Fix:     "mount cgroup2 with the memory controller (systemd.unified_cgroup_hierarchy=1)",
		}))
	}
	dirs, err := h.probeV1(parent, l)
	info = Info{Version: 1}
	for _, d := range dirs {
		info.Parents = append(info.Parents, d.parent)
		info.Controllers = append(info.Controllers, d.controllers...)
	}
	slices.Sort(info.Controllers)
	return info, dirs, err
}

// probeV2 finds the cgroup2 parent and the controllers it offers; the
// memory controller must be among them.
func (h host) probeV2(parent string) (Info, error) {
	if h.v2 == nil {
		return Info{}, &UnsupportedError{Feature: "cgroup v2", Found: "no cgroup2 mount in /proc/self/mountinfo",
			Fix: "boot with systemd.unified_cgroup_hierarchy=1 or mount -t cgroup2 none /sys/fs/cgroup"}
	}
	dir, err := h.v2.parentDir(parent)
	if err != nil {
		return Info{}, err
	}
	data, err := sysfile.Read(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return Info{}, fmt.Errorf("cgroupfs: read controllers of cgroup v2 parent: %w", err)
	}
	info := Info{Version: 2, Parents: []string{dir}, Controllers: parseList(string(data))}
	if err := missingV2(info, []string{"memory"}); err != nil {
		return Info{}, err
	}
	return info, nil
}

// Missing is the error a leaf with limits l would meet for the
// controllers it needs ([Needs]) that info, as [Probe] found it, does not
// offer: errors.Is ErrUnsupported, naming them and how to get them. nil
// when all are offered, or when info has no version (nothing was found).
func (info Info) Missing(l Limits) error {
	switch info.Version {
	case 2:
		return missingV2(info, l.controllersOn(2))
	case 1:
		for _, n := range Needs(1, l) {
			if !slices.Contains(info.Controllers, n.Controller) {
				return missingV1(byName(1, n.Controller), fmt.Sprintf("no usable cgroup v1 hierarchy with %s below %v (offered: %v)", n.Controller, info.Parents, info.Controllers))
			}
		}
	}
	return nil
}

// missingV2 is an ErrUnsupported error naming the controllers in want that
// the v2 parent does not offer.
func missingV2(info Info, want []string) error {
	var missing []string
	for _, c := range want {
		if !slices.Contains(info.Controllers, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	word := "controller"
	if len(missing) > 1 {
		word += "s"
	}
	parent := info.Parents[0]
	var plus, kernel []string
	for _, c := range missing {
		plus = append(plus, "+"+c)
		if ctl := byName(2, c); ctl != nil {
			kernel = append(kernel, ctl.kernel)
		}
	}
	fix := fmt.Sprintf("enable it in the grandparent: echo %q > %s/cgroup.subtree_control, or delegate a subtree that has it (systemd-run --scope -p Delegate=yes)",
		strings.Join(plus, " "), filepath.Dir(parent))
	if _, err := os.Stat(filepath.Join(filepath.Dir(parent), "cgroup.subtree_control")); err != nil {
		// The parent is the root of the mount: the kernel lacks the
		// controller or has bound it to a cgroup v1 hierarchy.
		fix = fmt.Sprintf("the kernel lacks it or has bound it to cgroup v1 (hybrid mode): boot with systemd.unified_cgroup_hierarchy=1 or cgroup_no_v1=all "+
			"(the kernel needs %s)", strings.Join(kernel, ", "))
	}
	return &UnsupportedError{
		Feature: fmt.Sprintf("cgroup v2 %s %s", strings.Join(missing, ", "), word),
		Found:   fmt.Sprintf("%s has controllers %v", parent, info.Controllers),
		Fix:     fix,
	}
}

// checkWritable reports, as an ErrUnsupported error, the first parent this
// process may not create leaves in.
func (h host) checkWritable(info Info) error {
	for _, p := range info.Parents {
		if err := unix.Access(p, unix.W_OK|unix.X_OK); err != nil {
			fix := accessFix(info.Version, err, func() string { return h.fixAccessV1Rootless(os.Geteuid()) })
			return &UnsupportedError{Feature: "write access to cgroup " + p, Found: "access: " + err.Error(), Fix: fix}
		}
	}
	return nil
}

// accessFix is the fix for a cgroup directory of version this process
// may not write (err): a read-only mount's, v2's delegation, v1's recipe
// for an account (v1Rootless; "" when it has none), or v1's for root.
// checkWritable (before anything is made) and mkLeaf (a parent that
// changed since) say the same.
func accessFix(version int, err error, v1Rootless func() string) string {
	switch {
	case errors.Is(err, unix.EROFS):
		return fixReadOnlyMount
	case version == 2:
		return fixDelegateV2
	case os.Geteuid() != 0:
		if fix := v1Rootless(); fix != "" {
			return fix
		}
	}
	return fixAccessV1
}
