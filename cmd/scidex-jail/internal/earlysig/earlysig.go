// Package earlysig takes the signals the jail handles from the first Go code
// of the process on, before flag parsing or anything else that takes time:
// a SIGTERM that arrives while `scidex-jail run` is still starting must
// cancel the run and yield a report, not kill the jail by the default
// action with nothing said.
//
// Go runs a package's init before main, and the init of a package with few
// dependencies early among them: importing this package from main (and
// nothing else) is the earliest a Go program can register. What comes
// before (the kernel's exec, the Go runtime's start, the inits of the
// packages this one needs) no Go program can cover, and a caller cannot
// cover it by blocking the signals across the exec either: the Go runtime
// unblocks SIGTERM, SIGINT and SIGHUP on every thread at its start
// (minitSignalMask), so a pending one is delivered then and kills the
// process by the default action. On a loaded 2-core machine that window
// is the first 2-3 ms, with stragglers up to about 10 ms (TestSignalWindow;
// the README has the figures). `run --ready-fd N`
// closes it for callers that can wait: the jail writes one byte to N once
// a signal is taken as a cancel, and the caller signals only after it (the
// Python API does).
//
// Commands that do not handle signals (profiles, check, gc,
// version) call Release, which gives the signals back their default action
// and re-raises what came meanwhile.
package earlysig

import (
	"os"
	"os/signal"
	"syscall"
)

// Signals are those the supervisor handles: SIGTERM, SIGINT and SIGHUP
// cancel a run; SIGQUIT, SIGUSR1 and SIGUSR2 are passed to the analysis.
var Signals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// C receives Signals from the process' start on.
var C chan os.Signal

// pipe takes SIGPIPE, and drops it: a Go program that does not ask for
// SIGPIPE dies of it when a write to fd 1 or 2 meets a closed pipe, which
// for a run would be the summary line written after all its work, and
// every exit status would become 141. Asked for, the write fails with
// EPIPE instead. A handler, unlike SIG_IGN, is not inherited by the init
// or the analysis across execve.
var pipe chan os.Signal

func init() {
	C = make(chan os.Signal, 16)
	signal.Notify(C, Signals...)
	pipe = make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
}

// Release ends the early registration: the signals get their default
// action back, and those that arrived before are raised again, so a
// command that does not handle them behaves as if it never had.
func Release() {
	if C == nil {
		return
	}
	signal.Reset(Signals...)
	signal.Reset(syscall.SIGPIPE)
	for {
		select {
		case s := <-C:
			syscall.Kill(os.Getpid(), s.(syscall.Signal))
		default:
			return
		}
	}
}
