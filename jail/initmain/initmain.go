// Package initmain is the entry of the jail's init program,
// cmd/scidex-jail-init: a main package of its own, so that the init, exec'd
// once per run as PID 1 of the run's namespaces, starts with only the
// packages it needs (the protocol, landlock, seccomp) and none of the
// command line's (kong, the report, the profiles). The supervisor (package
// jail) finds it beside its own binary, checks it and execs it.
//
// It exists because the init's package, jail/internal/initproc, is internal
// to jail, and a main package lives under cmd/.
package initmain

import (
	"os"

	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/internal/initproc"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// Main is the init. It never returns. The program is only ever the init
// child mode (childmode.Init, the argv[0] the supervisor starts it with):
// run any other way, it says so and exits 125 before doing anything.
func Main() {
	if childmode.Of(os.Args) != childmode.Init {
		_, _ = os.Stderr.WriteString(string(childmode.Init) + ": this is the jail's internal init, started by `scidex-jail run`; not a command\n")
		os.Exit(protocol.ExitSetup)
	}
	initproc.Main()
}
