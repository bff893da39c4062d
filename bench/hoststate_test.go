package bench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scidex/scidex-jail/internal/testutil"
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

// scidexCgroups walks the subtree of each of this process's cgroups, on
// every hierarchy (cgroup v1 controllers and v2), and lists directories
// named scidex-*. The jail only creates leaves below its own cgroup, which
// is ours: it is our child.
func scidexCgroups() ([]string, error) {
	cgs, err := testutil.OwnCgroups()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, c := range cgs {
		for _, d := range c.Dirs {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	var out []string
	for _, dir := range dirs {
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
