package cgroupfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// Setting is one write a leaf's limits make before anything runs in it:
// the wanted kernel state as data, made by Settings and written by one
// loop (Leaf.apply), so that what is written, what the report's written
// shows and what the tests expect are the same list. A per-device limit
// is one Setting per device, all to the same file (the kernel takes one
// device a write).
type Setting struct {
	Controller string // whose leaf directory holds File: its name on the version (v1: its hierarchy's)
	File       string
	Value      string
	// IfPresent: written only when the kernel has the file (swap
	// accounting may be off); what its absence means is absentSetting's.
	IfPresent bool
}

// Settings are the files limits l write in a leaf of cgroup version
// version (2 or 1), in order. Pure: no file is read.
func Settings(version int, l Limits) []Setting {
	var out []Setting
	for _, c := range controllers {
		if c.set == nil || !c.needed(l) {
			continue
		}
		for _, s := range c.set(version, l) {
			s.Controller = c.on(version)
			out = append(out, s)
		}
	}
	return out
}

// apply writes settings, each in the directory dir gives its controller,
// and records them in Written: a file the settings write more than once
// (a per-device limit, one device a write) with its values one a line.
func (l *Leaf) apply(settings []Setting, dir func(controller string) string) error {
	done := map[string]string{}
	for _, s := range settings {
		file := filepath.Join(dir(s.Controller), s.File)
		if s.IfPresent {
			if _, err := os.Stat(file); err != nil {
				if err := absentSetting(s, file); err != nil {
					return err
				}
				continue
			}
		}
		if err := l.set(file, s.Value); err != nil {
			return err
		}
		if before, ok := done[file]; ok {
			l.written[file] = before + "\n" + s.Value
		}
		done[file] = l.written[file]
	}
	return nil
}

// absentSetting says whether a missing IfPresent file is fine. Without
// swap accounting (CONFIG_MEMCG_SWAP off, swapaccount=0) v2 has no
// memory.swap.max: fine only while the host has no swap at all, since
// the run could then swap without bound. v1's memory.memsw.limit_in_bytes
// is absent for the same reason, and only RAM is limited there.
func absentSetting(s Setting, file string) error {
	if s.File != "memory.swap.max" {
		return nil
	}
	swaps, err := sysfile.Read("/proc/swaps")
	if err != nil {
		return fmt.Errorf("cgroupfs: check swap: %w", err)
	}
	swap, _ := strconv.ParseInt(s.Value, 10, 64)
	if lines := strings.Count(strings.TrimSpace(string(swaps)), "\n"); swap > 0 || lines > 0 {
		return &UnsupportedError{
			Feature: "cgroup v2 swap accounting",
			Found:   fmt.Sprintf("no %s while the host has %d swap device(s)", file, lines),
			Fix:     "boot with swapaccount=1 (CONFIG_MEMCG_SWAP), or turn swap off",
		}
	}
	return nil
}
