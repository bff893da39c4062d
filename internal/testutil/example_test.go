package testutil_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// The jail binary for a package's tests, built once: the body of its
// TestMain (which would call os.Exit(m.Run()) between the two). It runs
// the go command, so it is compiled, not run.
func ExampleJailBinary() {
	bin, cleanup, err := testutil.JailBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer cleanup()
	fmt.Println(bin) // the tests run it; its init is beside it (InitBeside)
}

// Where this process sits in each cgroup hierarchy: the host's, so
// compiled, not run.
func ExampleOwnCgroups() {
	cgs, err := testutil.OwnCgroups()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, c := range cgs {
		fmt.Println(c.Version, c.Controllers, c.Dirs)
	}
}
