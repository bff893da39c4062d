package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// gcCmd is `scidex-jail gc`: the sweep every run does for its own tmp-root
// and report directory, for a timer. It removes only what provably belongs
// to a dead jail (name pattern, owner or mark, no live lock holder; see
// jail/runfiles/sweep.go), and as root the uid leases' lock files no
// jail holds (jail/uidlease), and prints each path it removed.
type gcCmd struct {
	TmpRoot      string   `name:"tmp-root" default:"/tmp" placeholder:"DIR" help:"The tmp-root whose dead run directories to remove."`
	ReportDir    []string `name:"report-dir" sep:"none" placeholder:"DIR" help:"A directory reports are written to, whose dead temporary reports to remove (repeatable)."`
	CgroupParent string   `name:"cgroup-parent" placeholder:"PATH" help:"Delegated cgroup whose dead scidex-* leaves to remove (default: gc's own cgroup, as a run's default)."`
}

func (c *gcCmd) Run() error {
	for _, d := range append([]string{c.TmpRoot}, c.ReportDir...) {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return bad("%q must be a clean absolute path", d)
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return bad("%s is not a directory", d)
		}
	}
	removed, err := runfiles.Sweep(c.TmpRoot, c.ReportDir)
	leaves, lerr := runfiles.SweepLeaves(c.CgroupParent)
	var locks []string
	var uerr error
	if os.Geteuid() == 0 {
		// The uid leases' lock files of killed jails (jail/uidlease).
		locks, uerr = uidlease.Sweep()
	}
	for _, p := range append(append(removed, leaves...), locks...) {
		fmt.Println("removed", p)
	}
	failed := err != nil || uerr != nil
	if uerr != nil {
		fmt.Fprintf(os.Stderr, "scidex-jail gc: uid leases: %v\n", uerr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "scidex-jail gc: %v\n", err)
	}
	if lerr != nil {
		// Without --cgroup-parent a host without usable cgroups is not a
		// failure of gc: there are no leaves to remove.
		fmt.Fprintf(os.Stderr, "scidex-jail gc: cgroup leaves: %v\n", lerr)
		failed = failed || c.CgroupParent != ""
	}
	if failed {
		return exitError{1}
	}
	return nil
}
