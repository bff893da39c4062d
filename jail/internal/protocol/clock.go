package protocol

import (
	"bytes"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// ProcessStart is when the calling process started, as the kernel accounts
// for its main thread: now, less the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID, exact) and the time it spent waiting for a CPU
// (/proc/self/schedstat's run-queue delay, updated at each switch; the
// schedstat run time is not used: for a task that has not been switched
// out yet it still reads 0). Before main a Go process is busy on that
// thread the whole time (exec, the runtime's start, package
// initialisation), so called first thing in main on that thread, this is
// the process's start, give or take the time it was blocked (measured
// here: it recovers 90-95% of the time from the parent's fork to main).
// Both the supervisor and the init use it for the phase before their first
// clock reading. The zero Time when the kernel does not say.
func ProcessStart() time.Time {
	now := time.Now()
	var cpu unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &cpu); err != nil {
		return time.Time{}
	}
	var wait int64
	if b, err := sysfile.Read("/proc/thread-self/schedstat"); err == nil {
		if f := bytes.Fields(b); len(f) >= 2 {
			if w, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil && w > 0 {
				wait = w
			}
		}
	}
	return now.Add(-time.Duration(cpu.Nano() + wait))
}

// Micros is a struct timeval (the rusage's CPU times) in microseconds: the
// unit of InitMsg's UserUsec and SysUsec, which the init fills from its
// children's rusage and the supervisor, when the init died before it
// could report, from the init's own.
func Micros(tv unix.Timeval) int64 { return tv.Sec*1e6 + int64(tv.Usec) }
