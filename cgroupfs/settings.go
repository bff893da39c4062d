package cgroupfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// Setting is one file a leaf's limits write before anything runs in it:
// the wanted kernel state as data, made by Settings and written by one
// loop (Leaf.apply), so that what is written, what the report's written
// shows and what the tests expect are the same list.
type Setting struct {
	Controller string // whose leaf directory holds File (v1: its hierarchy's)
	File       string
	Value      string
	// IfPresent: written only when the kernel has the file (swap
	// accounting may be off); what its absence means is absentSetting's.
	IfPresent bool
}

// controller is one controller a leaf uses, declared by a file of this
// package of its own (memory.go, cpu.go, pids.go) with register: the keys
// of Limits it writes, whether the limits use it, the settings it writes,
// and how its counters are read back into a Usage from its leaf directory.
type controller struct {
	name  string
	order int      // where it is written: memory, then cpu, then pids
	keys  []string // the keys of Limits it reads
	isSet func(Limits) bool
	set   func(version int, l Limits) []Setting
	stat  func(version int, dir string, u *Usage) error
	check func(Limits) error // its own checks of its keys' values (nil: none)
}

// controllerFiles are the controllers, in their order.
var controllerFiles []*controller

// register adds c to controllerFiles, in order: the package's variables
// that call it are set before any function of it runs.
func register(c controller) *controller {
	i := 0
	for i < len(controllerFiles) && controllerFiles[i].order < c.order {
		i++
	}
	controllerFiles = slices.Insert(controllerFiles, i, &c)
	return &c
}

// controllerOf is the controller that declares key, nil if none does.
func controllerOf(key string) *controller {
	for _, c := range controllerFiles {
		if slices.Contains(c.keys, key) {
			return c
		}
	}
	return nil
}

// Keys are the keys of Limits the controller files declare, in order.
func Keys() []string {
	var out []string
	for _, c := range controllerFiles {
		out = append(out, c.keys...)
	}
	return out
}

// every is a Limits that uses every controller.
func every() Limits {
	l := Limits{}
	for _, k := range Keys() {
		l[k] = Value{N: 1, CPUs: 1}
	}
	return l
}

// Settings are the files limits l write in a leaf of cgroup version
// version (2 or 1), in order. Pure: no file is read.
func Settings(version int, l Limits) []Setting {
	var out []Setting
	for _, c := range controllerFiles {
		if c.isSet(l) {
			out = append(out, c.set(version, l)...)
		}
	}
	return out
}

// controllers are the ones l needs: memory always (peak and OOM
// accounting), cpu and pids when limited.
func (l Limits) controllers() []string {
	var out []string
	for _, c := range controllerFiles {
		if c.isSet(l) {
			out = append(out, c.name)
		}
	}
	return out
}

// apply writes settings, each in the directory dir gives its controller,
// and records them in Written.
func (l *Leaf) apply(settings []Setting, dir func(controller string) string) error {
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
