package seccomp_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/seccomp"
)

// The filter looked up for the report first, loaded last of the init's
// steps. Load cannot be undone, so it is compiled, not run.
func Example() {
	prog, err := seccomp.Lookup(seccomp.Policy{Name: "default", Net: seccomp.NetNone})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // errors.Is(err, seccomp.ErrUnsupported) on other architectures
		return
	}
	fmt.Println(prog.Denied(), prog.SHA256) // the report's seccomp
	// ... mounts, identity, no_new_privs, Landlock, close fds ...
	if err := prog.Load(); err != nil { // last step before starting the target
		fmt.Fprintln(os.Stderr, err)
	}
}
