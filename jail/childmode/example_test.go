package childmode_test

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/scidex/scidex-jail/jail/childmode"
)

// The parent starts its own program as a child mode (jail/hostcheck's
// probe does); the program's main tells the mode first thing, as
// cmd/scidex-jail's does. Running it would start this test binary again,
// so it is compiled, not run.
func Example() {
	// The child's main, first thing:
	if childmode.Of(os.Args) == childmode.Probe {
		os.Exit(probe())
	}
	// The parent:
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: childmode.Probe.Argv()}
	out, err := cmd.Output()
	fmt.Println(string(out), err)
}

func probe() int { return 0 }
