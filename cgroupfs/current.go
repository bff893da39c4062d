package cgroupfs

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// MemoryCurrent is the memory the leaf's processes use now: v2
// memory.current, v1 memory.usage_in_bytes. A snapshot: it is stale as
// soon as it is read.
func (l *Leaf) MemoryCurrent() (int64, error) {
	file := "memory.current"
	if l.version == 1 {
		file = "memory.usage_in_bytes"
	}
	dir, ok := l.role["memory"]
	if l.version == 2 && len(l.dirs) > 0 {
		dir, ok = l.dirs[0], true // one directory holds every controller
	}
	if !ok {
		return 0, fmt.Errorf("cgroupfs: bug: leaf %v has no memory controller", l.dirs)
	}
	path := filepath.Join(dir, file)
	data, err := sysfile.Read(path)
	if err != nil {
		return 0, fmt.Errorf("cgroupfs: read %s: %w", path, err)
	}
	return parseInt(path, string(data))
}

// Controllers are the v1 controllers the leaf has a directory for (memory,
// cpu, cpuacct, pids), sorted; on v2 nil: one directory holds them all.
func (l *Leaf) Controllers() []string {
	if l.version == 2 {
		return nil
	}
	var out []string
	for c := range l.role {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
