package seccomp

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/osthread"
)

// The init's seccomp step, in parts: finding the program (Lookup), the
// report's list (Denied), and the kernel's load of it on one thread
// (LoadThread). Each load runs on a fresh locked thread that exits with
// its goroutine, so the test binary's own threads stay unfiltered.
//
// Besides ns/op (wall time, which other work on a shared machine inflates)
// each reports cpu-ns/op: the CPU time of the thread doing the work, user
// and kernel, which is what the init spends.

var benchPolicies = []Policy{{Name: "default", Net: NetNone}, {Name: "default", Net: NetInet}}

func BenchmarkLookup(b *testing.B) {
	for _, p := range benchPolicies {
		b.Run(p.String(), func(b *testing.B) {
			onThisThread(b, func() {
				if _, err := Lookup(p); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkDenied(b *testing.B) {
	prog, err := Lookup(benchPolicies[0])
	if err != nil {
		b.Fatal(err)
	}
	onThisThread(b, func() { _ = prog.Denied() })
}

func BenchmarkLoadThread(b *testing.B) {
	for _, p := range benchPolicies {
		b.Run(p.String(), func(b *testing.B) {
			prog, err := Lookup(p)
			if err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			for b.Loop() {
				d, err := onDyingThread(prog.LoadThread)
				if err != nil {
					b.Fatal(err)
				}
				cpu += d
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// onThisThread runs f b.N times on the benchmark's goroutine, locked to
// its thread, and reports the thread's CPU time per call.
func onThisThread(b *testing.B, f func()) {
	b.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := osthread.CPU()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64((osthread.CPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// onDyingThread runs f on a new locked thread with no_new_privs set, and
// ends the thread afterwards, returning the thread's CPU time spent in f.
func onDyingThread(f func() error) (time.Duration, error) {
	return osthread.RunWait(func() error {
		if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			return e
		}
		return f()
	})
}

// BenchmarkSyscall is what the filter costs every system call of an
// analysis: a call made b.N times on a thread running the program (none:
// no filter). getpid has a low number, where the prologue stops at its
// first span; futex_wake (454) walks every span below it; 1000 is answered
// ENOSYS by the prologue's last. The difference to "nofilter" is the
// filter's cost per call.
func BenchmarkSyscall(b *testing.B) {
	calls := []struct {
		name string
		nr   uintptr
	}{{"getpid", unix.SYS_GETPID}, {"futex_wake", unix.SYS_FUTEX_WAKE}, {"unknown_1000", 1000}}
	for _, p := range append([]Policy{{}}, benchPolicies...) {
		name := strings.ReplaceAll(p.String(), "/", "-") // one level for -bench
		if p.Name == "" {
			name = "nofilter"
		}
		for _, c := range calls {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				var prog Program
				if p.Name != "" {
					var err error
					if prog, err = Lookup(p); err != nil {
						b.Fatal(err)
					}
				}
				cpu, err := onDyingThread(func() error {
					if p.Name != "" {
						if err := prog.LoadThread(); err != nil {
							return err
						}
					}
					for b.Loop() {
						unix.RawSyscall(c.nr, 0, 0, 0)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
