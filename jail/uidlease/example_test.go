package uidlease_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// A run's own host uid and gid. Leasing writes under LeaseDir, root's,
// so it is compiled, not run.
func Example() {
	var spec jail.Spec
	r := uidlease.Default
	if err := uidlease.Check(r); err != nil { // once per run's start
		fmt.Fprintln(os.Stderr, err) // wraps ErrRange: the id in use and by what
		return
	}
	l, err := uidlease.Acquire(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // ErrFull when every id is leased
		return
	}
	defer l.Release() // after the run's processes are dead and its files removed
	spec.HostUID, spec.HostGID = l.ID(), l.ID()
}
