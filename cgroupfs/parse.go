package cgroupfs

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Parsers of what the kernel hands us. They are strict (a line that does not
// fit is an error, never silently skipped) and fuzzed (parse_test.go).

// procCgroup is one line of /proc/<pid>/cgroup: "id:controllers:path".
type procCgroup struct {
	ID          int
	Controllers []string // empty on the cgroup v2 line ("0::/path")
	Path        string   // relative to the hierarchy root as this process sees it
}

// parseProcCgroup parses /proc/<pid>/cgroup.
func parseProcCgroup(data string) ([]procCgroup, error) {
	var out []procCgroup
	for i, line := range strings.Split(data, "\n") {
		if line == "" {
			continue
		}
		// The path is everything after the second colon: it may hold colons.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("parse /proc/self/cgroup line %d %q: want id:controllers:path", i+1, line)
		}
		id, err := strconv.Atoi(parts[0])
		if err != nil || id < 0 {
			return nil, fmt.Errorf("parse /proc/self/cgroup line %d %q: bad hierarchy id", i+1, line)
		}
		if !strings.HasPrefix(parts[2], "/") {
			return nil, fmt.Errorf("parse /proc/self/cgroup line %d %q: path is not absolute", i+1, line)
		}
		var ctrls []string
		if parts[1] != "" {
			ctrls = strings.Split(parts[1], ",")
		}
		out = append(out, procCgroup{ID: id, Controllers: ctrls, Path: parts[2]})
	}
	return out, nil
}

// mountEntry is the part of a /proc/self/mountinfo line this package needs.
type mountEntry struct {
	Root       string   // path of the mount's root within its filesystem (for cgroups: a cgroup path)
	MountPoint string   // where it is mounted
	FSType     string   // "cgroup" or "cgroup2" for us
	SuperOpts  []string // super options; for cgroup v1 they name the controllers
}

// parseMountinfo parses /proc/self/mountinfo (proc(5)):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//	(1)(2)(3)   (4)   (5)      (6)      (7)    (8) (9)   (10)         (11)
func parseMountinfo(data string) ([]mountEntry, error) {
	var out []mountEntry
	for i, line := range strings.Split(data, "\n") {
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		sep := -1
		for j := 6; j < len(fields); j++ {
			if fields[j] == "-" {
				sep = j
				break
			}
		}
		if len(fields) < 6 || sep < 0 || len(fields) < sep+3 {
			return nil, fmt.Errorf("parse /proc/self/mountinfo line %d %q: too few fields", i+1, line)
		}
		e := mountEntry{
			Root:       unescapeOctal(fields[3]),
			MountPoint: unescapeOctal(fields[4]),
			FSType:     fields[sep+1],
		}
		if !path.IsAbs(e.Root) || !path.IsAbs(e.MountPoint) {
			return nil, fmt.Errorf("parse /proc/self/mountinfo line %d %q: path is not absolute", i+1, line)
		}
		e.Root, e.MountPoint = path.Clean(e.Root), path.Clean(e.MountPoint)
		if len(fields) > sep+3 {
			e.SuperOpts = strings.Split(fields[sep+3], ",")
		}
		out = append(out, e)
	}
	return out, nil
}

// unescapeOctal undoes the kernel's \ooo escaping of space, tab, newline and
// backslash in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// parseKeyed parses flat keyed files, "key value" per line: memory.events,
// cpu.stat, pids.events, memory.oom_control, cpuacct.stat.
func parseKeyed(name, data string) (map[string]int64, error) {
	out := map[string]int64{}
	for i, line := range strings.Split(data, "\n") {
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("parse %s line %d %q: want \"key value\"", name, i+1, line)
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse %s line %d %q: %w", name, i+1, line, err)
		}
		out[fields[0]] = v
	}
	return out, nil
}

// parseInt parses a file that holds one integer (memory.peak, memory.failcnt,
// cpuacct.usage).
func parseInt(name, data string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", name, err)
	}
	return v, nil
}

// parsePIDs parses cgroup.procs: one pid per line.
func parsePIDs(name, data string) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(data) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("parse %s: bad pid %q", name, f)
		}
		out = append(out, pid)
	}
	return out, nil
}

// parseList parses space-separated lists: cgroup.controllers,
// cgroup.subtree_control.
func parseList(data string) []string { return strings.Fields(data) }
