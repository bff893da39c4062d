package testutil

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ProcessesWith lists the pids of the host's processes, other than this
// one, whose command line (arguments joined by spaces) contains marker, in
// ascending order. A process that exits while it is read is left out.
func ProcessesWith(marker string) []int {
	var pids []int
	ds, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, d := range ds {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}
