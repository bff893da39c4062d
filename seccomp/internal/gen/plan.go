//go:build cgo

package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/seccomp/internal/rules"
	"github.com/scidex/scidex-jail/seccomp/internal/sysnum"
)

// plan gathers, for one program, what the prologue must know: which
// numbers the table classifies, and which syscalls it must deny itself
// because libseccomp cannot name them.
type plan struct {
	arch     string
	nums     map[string]uint32     // x/sys/unix's numbers of arch, by name
	known    map[uint32]bool       // numbers the table names (allowed, or with a rule)
	deny     map[uint32]unix.Errno // denied whole by the prologue
	byNumber []string              // their names, in rule order
}

// xsys caches x/sys/unix's numbers per architecture for one generation.
var xsys = map[string]map[string]uint32{}

func xsysNumbers(arch string) (map[string]uint32, error) {
	if nums, ok := xsys[arch]; ok {
		return nums, nil
	}
	nums, err := sysnum.Read(arch)
	if err != nil {
		return nil, err
	}
	xsys[arch] = nums
	return nums, nil
}

// newPlan fails when x/sys/unix names a syscall of arch that the table has
// not classified: the decision is a maintainer's, not the generator's.
func newPlan(arch string, nums map[string]uint32) (*plan, error) {
	un, err := rules.Unclassified(slices.Sorted(maps.Keys(nums)))
	if err != nil {
		return nil, err
	}
	if len(un) > 0 {
		return nil, fmt.Errorf("%s names syscalls of %s that seccomp/internal/rules does not classify: %s; add each to Allowed, NotImplemented or a group, saying why",
			sysnum.Module, arch, strings.Join(un, " "))
	}
	p := &plan{arch: arch, nums: nums, known: map[uint32]bool{}, deny: map[uint32]unix.Errno{}}
	for _, name := range rules.Allowed {
		if nr, ok := nums[name]; ok {
			p.known[nr] = true
		}
	}
	return p, nil
}

// resolve returns the number (in the native numbering, which libseccomp
// translates by name) to give libseccomp for r's syscall, or false when
// libseccomp is not to have it: the architecture lacks the syscall, or
// libseccomp does not name it and the prologue denies it by number with
// errno.
func (p *plan) resolve(r rules.Rule, target libseccomp.ScmpArch, errno unix.Errno) (libseccomp.ScmpSyscall, bool, error) {
	xnr, inX := p.nums[r.Syscall]
	onTarget, err := libseccomp.GetSyscallFromNameByArch(r.Syscall, target)
	if err != nil {
		// libseccomp has never heard of the name: a syscall newer than
		// this libseccomp, or a typo.
		maj, min, mic := libseccomp.GetLibraryVersion()
		switch {
		case !inX && !xsysNamesAnywhere(r.Syscall):
			return 0, false, fmt.Errorf("neither libseccomp %d.%d.%d nor %s names it (a typo?)", maj, min, mic, sysnum.Module)
		case !inX:
			return 0, false, nil // another architecture's syscall
		case len(r.Conds) > 0:
			return 0, false, fmt.Errorf("libseccomp %d.%d.%d does not name it, and only libseccomp compiles argument checks: generate with a newer libseccomp", maj, min, mic)
		}
		if _, dup := p.deny[xnr]; !dup {
			p.deny[xnr] = errno
			p.byNumber = append(p.byNumber, r.Syscall)
		}
		p.known[xnr] = true
		return 0, false, nil
	}
	if onTarget < 0 { // a pseudo-syscall: not on this architecture
		return 0, false, nil
	}
	if inX && uint32(onTarget) != xnr {
		return 0, false, fmt.Errorf("libseccomp numbers it %d on %s, %s %d", onTarget, p.arch, sysnum.Module, xnr)
	}
	p.known[uint32(onTarget)] = true
	// Rule numbers are read in the native architecture's numbering and
	// translated by name; GetSyscallFromName gives that number (or a
	// pseudo number, which translates just as well).
	nr, err := libseccomp.GetSyscallFromName(r.Syscall)
	if err != nil {
		return 0, false, fmt.Errorf("resolve natively: %w", err)
	}
	return nr, true, nil
}

// denies reports whether the prologue denies syscall by number.
func (p *plan) denies(syscall string) bool { return slices.Contains(p.byNumber, syscall) }

// xsysNamesAnywhere reports whether x/sys/unix names syscall on any of the
// architectures programs are built for.
func xsysNamesAnywhere(syscall string) bool {
	for _, arch := range rules.Arches {
		nums, err := xsysNumbers(arch)
		if err != nil {
			return false // the caller's own read of its arch succeeded; this one says so when it is its turn
		}
		if _, ok := nums[syscall]; ok {
			return true
		}
	}
	return false
}
