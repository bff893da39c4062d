package view_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/view"
)

// The one look at the host before a run is planned, and the group rule
// on what it found. What it finds is the host's, so it is compiled, not
// run.
func Example() {
	h := view.LookHost(view.Wanted{Root: "/srv/platform", DataDirs: []string{"data", "docs"}})
	uid, gid := os.Getuid(), os.Getgid() // rootless: the analysis is the caller
	if err := view.CheckExposure(uid, gid, h.Groups, h.Exposed); err != nil {
		fmt.Fprintln(os.Stderr, err) // a *GroupExposureError: the path, the group, the fix
		return
	}
	fmt.Println(h.DataDirs, h.Layers.LandlockABI)
}
