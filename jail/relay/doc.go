// Package relay bounds the analysis' stdout and stderr: each of the
// caller's that is not a terminal reaches the analysis as the write end of
// a pipe, whose bytes the jail copies into the caller's own descriptor
// under a byte budget per stream (the head as it comes, the tail kept in a
// ring, a line saying what was dropped between them), and whose last 4 KiB
// (TailBytes) the report keeps. relay.go says why (the bound, and the
// caller's open file description kept out of the analysis' reach) and
// what is never relayed (a terminal, stdin); relay_budget.go how the
// budget cuts a stream.
//
// The run (jail/supervise) makes one before the init is given its stdio,
// hands the init its pipes, and drains it once the run's processes are
// gone, before the report: a pipe still held from outside the run is cut
// after a second of silence, a caller that takes no byte for ten seconds
// is given up on, and what did not reach the caller is a delivery
// failure.
//
// Kernel: pipes; kcmp(2) (CONFIG_KCMP) to tell one open file description
// given as both stdout and stderr (`>>log 2>&1`), which then share one
// pipe and its order; without it, two pipes.
//
// Use (the package's Example, compiled with its tests):
//
//	r, err := relay.New([3]*os.File{os.Stdin, os.Stdout, os.Stderr}, 1<<20) // nil: two terminals, nothing relayed
//	if r != nil {
//		stdio := r.Stdio() // the analysis' 0, 1 and 2: the init's to hand on
//		_ = stdio
//	}
//	r.Handed()         // the init has its ends: the relay ends with the run's processes
//	lost := r.Drain()  // every byte copied: what did not reach the caller
//	facts := r.Facts() // report.Streams, and stderr's last bytes for the notes
package relay
