package relay_test

import (
	"fmt"
	"os"

	"github.com/scidex/scidex-jail/jail/relay"
)

// The caller's stdout and stderr relayed under a budget of 1 MiB each, as
// a run does around its init. It is compiled, not run: it would relay the
// test's own output.
func Example() {
	r, err := relay.New([3]*os.File{os.Stdin, os.Stdout, os.Stderr}, 1<<20) // nil: two terminals, nothing relayed
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	if r != nil {
		stdio := r.Stdio() // the analysis' 0, 1 and 2: the init's to hand on
		_ = stdio
	}
	r.Handed()         // the init has its ends: the relay ends with the run's processes
	lost := r.Drain()  // every byte copied: what did not reach the caller
	facts := r.Facts() // report.Streams, and stderr's last bytes for the notes
	fmt.Println(lost, facts.Streams.Stdout.Bytes, facts.Truncations())
}
