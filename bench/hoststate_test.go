package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hostState is what a run could leave behind on the host, listed so that a
// before/after comparison shows leaks.
type hostState struct {
	RunDirs []string // entries of the tmp-root
	Mounts  []string // /proc/self/mountinfo lines
	Cgroups []string // scidex-* directories below our own cgroups
}

func snapshot(tmpRoot string) (hostState, error) {
	var s hostState
	es, err := os.ReadDir(tmpRoot)
	if err != nil {
		return s, fmt.Errorf("list tmp-root %s: %w", tmpRoot, err)
	}
	for _, e := range es {
		s.RunDirs = append(s.RunDirs, e.Name())
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return s, fmt.Errorf("read mountinfo: %w", err)
	}
	s.Mounts = strings.Split(strings.TrimSpace(string(mi)), "\n")
	s.Cgroups, err = scidexCgroups()
	return s, err
}

// leaks lists what after has that before did not. Run directories must all
// be gone, so any in after is a leak.
func leaks(before, after hostState) []string {
	var out []string
	for _, d := range after.RunDirs {
		out = append(out, "run directory left in the tmp-root: "+d)
	}
	for _, m := range added(before.Mounts, after.Mounts) {
		out = append(out, "new mount: "+m)
	}
	for _, c := range added(before.Cgroups, after.Cgroups) {
		out = append(out, "cgroup left: "+c)
	}
	return out
}

func added(before, after []string) []string {
	var out []string
	for _, a := range after {
		if !slices.Contains(before, a) {
			out = append(out, a)
		}
	}
	return out
}

// processesWith lists host pids whose command line contains marker.
func processesWith(marker string) []string {
	var pids []string
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, d.Name())
		}
	}
	return pids
}

// scidexCgroups walks the subtree of each of this process's cgroups, on
// every hierarchy (cgroup v1 controllers and v2), and lists directories
// named scidex-*. The jail only creates leaves below its own cgroup, which
// is ours: it is our child.
func scidexCgroups() ([]string, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	var out []string
	for _, dir := range cgroupDirs(string(own), parseCgroupMounts(string(mi))) {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				// A leaf removed while we walk is not a leak.
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), "scidex-") {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk cgroup %s: %w", dir, err)
		}
	}
	slices.Sort(out)
	return out, nil
}

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	Point   string   // where it is mounted
	Root    string   // which cgroup of the hierarchy is at Point
	V2      bool     // cgroup2
	Options []string // super options: v1 controllers and name=...
}

// parseCgroupMounts picks the cgroup and cgroup2 mounts out of mountinfo.
// Format (proc(5)): id parent major:minor root point options [optional...]
// - fstype source superoptions.
func parseCgroupMounts(mountinfo string) []cgroupMount {
	var ms []cgroupMount
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		fstype := f[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		ms = append(ms, cgroupMount{
			Point:   unescapeMount(f[4]),
			Root:    unescapeMount(f[3]),
			V2:      fstype == "cgroup2",
			Options: strings.Split(f[sep+3], ","),
		})
	}
	return ms
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// cgroupDirs maps /proc/self/cgroup lines (hierarchy:controllers:path) to
// directories of the mounted hierarchies. A hierarchy that is not mounted,
// or mounted at a root outside our cgroup, has no directory to walk.
func cgroupDirs(procCgroup string, mounts []cgroupMount) []string {
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(procCgroup), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls, path := parts[1], parts[2]
		for _, m := range mounts {
			if !mountHas(m, ctrls) {
				continue
			}
			rel, err := filepath.Rel(m.Root, path)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			d := filepath.Join(m.Point, rel)
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// mountHas says whether m is the hierarchy of a /proc/self/cgroup line with
// controllers ctrls ("" for cgroup v2).
func mountHas(m cgroupMount, ctrls string) bool {
	if ctrls == "" {
		return m.V2
	}
	if m.V2 {
		return false
	}
	for _, c := range strings.Split(ctrls, ",") {
		if !slices.Contains(m.Options, c) {
			return false
		}
	}
	return true
}
