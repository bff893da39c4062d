// Command scidex-jail-init is the jail's init: PID 1 of a run's new
// namespaces, exec'd by `scidex-jail run` from the file beside it (or in
// ../libexec/scidex-jail/), never by hand. It reads its config from the
// supervisor over fd 3 and never returns.
//
// It is a program of its own so that it pays for no package initialisation
// of the command line; build both with the same version stamp (make build).
package main

import "github.com/scidex/scidex-jail/jail/initmain"

func main() { initmain.Main() }
