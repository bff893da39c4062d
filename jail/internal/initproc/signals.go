package initproc

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// The analysis runs as the init's uid in the init's user namespace, so it
// may signal PID 1. What keeps it from killing the init is the kernel's rule
// for a pid namespace's init (kernel/signal.c, sig_task_ignored and
// SIGNAL_UNKILLABLE): a signal for which the init's handler is SIG_DFL is
// dropped at the door, unless it is SIGKILL or SIGSTOP from an ancestor
// namespace (the supervisor's kill, never the analysis'). The Go runtime
// defeats that rule: it installs a handler of its own for every signal at
// start, and that handler turns SIGABRT, SIGQUIT, SIGILL, SIGTRAP,
// SIGSTKFLT and SIGSYS into a crash with a traceback, SIGHUP, SIGINT and
// SIGTERM into an exit, and a SIGBUS, SIGFPE or SIGSEGV sent with tgkill or
// rt_sigqueueinfo (whose si_code the runtime does not take for a user's)
// into a "fault". So the init gives every signal back to the kernel's
// default (shutOutSignals) but those it forwards (protocol.Forwarded, which
// os/signal catches for passInbound) and those the runtime cannot do
// without (runtimeSignals), whose handler ignores what a user sends.

// runtimeSignals are the signals whose Go handler the init keeps, besides
// the forwarded ones: SIGURG is the runtime's goroutine preemption, signal
// 33 (SIGSETXID) its per-thread syscall broadcast (syscall.AllThreadsSyscall;
// the handler returns at once when none is under way). Sent by the
// analysis, either is a no-op. SIGKILL and SIGSTOP have no handler at all.
var runtimeSignals = []syscall.Signal{unix.SIGURG, 33}

// shutOutSignals sets SIG_DFL, with a raw rt_sigaction, for every signal
// but the forwarded and the runtime's: the kernel then drops any of them
// sent to PID 1 from inside its namespace. Never SIG_IGN once it returns,
// which the target would inherit across its exec (SIG_DFL is what exec
// gives it anyway).
//
// First it tells the runtime these signals are none of its business
// (signal.Ignore: its handlingSig cleared, SIG_IGN for an instant, while
// no process of the analysis exists), then sets SIG_DFL. The runtime's
// fork child (syscall.ForkExec, AfterForkInChild's clearSignalHandlers)
// resets to SIG_DFL every signal whose handlingSig is set, one
// rt_sigaction each through the seccomp filter, between the vfork and
// the target's execve, while the init waits: about 60 calls with every
// handler the runtime installed at start, 16 now (the kept signals', and the
// runtime's synchronous ones, which signal.Ignore cannot clear). The
// target starts with the same dispositions either way: SIG_DFL for the
// signals shut out here (inherited, as the child's reset gave before),
// SIG_DFL for the kept ones (the child's reset), none ignored.
//
// A later signal.Notify of a shut-out signal would install the Go
// handler again: the init notifies only protocol.Forwarded, which this
// leaves alone. The price: a real fault of the init (a nil dereference)
// kills it with the signal, as a C program's would, instead of a Go panic
// with a traceback.
func shutOutSignals() error {
	keep := map[syscall.Signal]bool{unix.SIGKILL: true, unix.SIGSTOP: true}
	for _, s := range runtimeSignals {
		keep[s] = true
	}
	for _, s := range protocol.Forwarded {
		keep[s.(syscall.Signal)] = true
	}
	var shut []os.Signal
	for s := syscall.Signal(1); s <= 64; s++ {
		if !keep[s] {
			shut = append(shut, s)
		}
	}
	signal.Ignore(shut...)
	// A zeroed struct sigaction is SIG_DFL, no flags, an empty mask, on
	// every architecture's layout; 32 bytes cover the kernel's (the size
	// argument is that of the signal mask, 8 bytes).
	var dfl [4]uint64
	for _, sig := range shut {
		s := sig.(syscall.Signal)
		if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0); e != 0 {
			return wrap.Error("bug: set the default action of "+unix.SignalName(s), e)
		}
	}
	return nil
}

// catchForwarded registers the forwarded signals with os/signal and returns
// their channel for passInbound. It runs on a goroutine of its own while
// the init sets up (startInbound): os/signal's start costs about half a
// millisecond of thread hand-offs, which the way to the target's start
// does not wait for, yet it must be done before the fork: a target that
// sends PID 1 SIGTERM at once would otherwise end the init (the Go handler's
// default for it, without a Notify, is to exit).
func catchForwarded() chan os.Signal {
	c := make(chan os.Signal, 16)
	signal.Notify(c, protocol.Forwarded...)
	return c
}

// startInbound starts catchForwarded on its own goroutine; the returned
// channel yields the signal channel once registration is done.
func startInbound() <-chan chan os.Signal {
	ready := make(chan chan os.Signal, 1)
	go func() { ready <- catchForwarded() }()
	return ready
}
