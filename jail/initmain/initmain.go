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

import "github.com/scidex/scidex-jail/jail/internal/initproc"

// Main is the init. It never returns.
func Main() { initproc.Main() }
