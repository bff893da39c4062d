// Package osthread runs code on an OS thread of its own that ends with it:
// for what changes a thread for good (a Landlock domain, a seccomp filter,
// a cgroup v1 membership) and must not be handed back to the Go runtime's
// pool of threads.
package osthread

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs f in a new goroutine locked to its OS thread; when f returns,
// the goroutine returns still locked and the Go runtime ends the thread.
// It does not wait for f. The runtime parks the process's main thread
// rather than ending it, so a goroutine that finds itself there hands f
// to another thread, started while it holds the main one.
func Run(f func()) {
	go func() {
		runtime.LockOSThread() // unlocked only on the main thread, below
		if unix.Gettid() != unix.Getpid() {
			f()
			return
		}
		held := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked
			close(held)
			f()
		}()
		<-held
		runtime.UnlockOSThread()
	}()
}

// RunWait is Run that waits for f and returns its error and the CPU time
// its thread spent in it.
func RunWait(f func() error) (time.Duration, error) {
	type result struct {
		cpu time.Duration
		err error
	}
	done := make(chan result, 1)
	Run(func() {
		start := CPU()
		err := f()
		done <- result{CPU() - start, err}
	})
	r := <-done
	return r.cpu, r.err
}

// CPU is the calling OS thread's CPU time.
func CPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("bug: clock_gettime(CLOCK_THREAD_CPUTIME_ID): " + err.Error())
	}
	return time.Duration(ts.Nano())
}
