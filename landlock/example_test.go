package landlock_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/landlock"
)

// The init's policy, applied once after the mount view and the drop to an
// unprivileged uid. Restrict cannot be undone, so it is compiled, not run.
func ExamplePolicy_Restrict() {
	res, err := landlock.Policy{
		ReadExec:   []string{"/usr", "/bin", "/lib", "/lib64", "/etc"},
		ReadOnly:   []string{"/work/data", "/work/docs"},
		ReadWrite:  []string{"/tmp/scidex-analysis-42", "/dev/shm"},
		Devices:    []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts"},
		HandleTCP:  true,
		ConnectTCP: []uint16{443},
		Scope:      true,
	}.Restrict()
	if err != nil {
		// errors.Is(err, landlock.ErrUnsupported): the kernel is too old or
		// Landlock is off; the message says which ABI was found, which is
		// needed, what would be lost and how to get it. Do not run the target.
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(res.ABI, res.Rules, res.Degraded) // into the run's report
}
