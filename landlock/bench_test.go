//go:build linux

package landlock

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/osthread"
)

// The init's Landlock step, in parts, on a policy shaped like a run's (the
// system dirs and /etc entries of the default profile that exist here, /proc,
// a run directory, /dev/shm, the devices). Each restriction runs on a fresh
// locked thread that exits with its goroutine, so the test binary's own
// threads stay unrestricted. Besides ns/op (wall time, which other work on a
// shared machine inflates) each reports cpu-ns/op: the CPU time of the
// thread doing the work, user and kernel, which is what the init spends.

func benchPolicy(b *testing.B) Policy {
	b.Helper()
	p := Policy{
		ReadOnly:  []string{"/proc"},
		ReadWrite: []string{b.TempDir(), "/dev/shm"},
		Scope:     true,
	}
	for _, path := range []string{"/usr", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/timezone", "/etc/hosts",
		"/etc/host.conf", "/etc/gai.conf", "/etc/protocols", "/etc/services", "/etc/ssl", "/etc/ca-certificates",
		"/etc/alternatives", "/etc/fonts", "/etc/mime.types", "/etc/os-release", "/etc/debian_version"} {
		if _, err := os.Stat(path); err == nil {
			p.ReadExec = append(p.ReadExec, path)
		}
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts"} {
		if _, err := os.Stat(d); err == nil {
			p.Devices = append(p.Devices, d)
		}
	}
	return p
}

func BenchmarkValidate(b *testing.B) {
	p := benchPolicy(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := osthread.CPU()
	for b.Loop() {
		if err := p.Validate(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((osthread.CPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(p.ReadExec)+len(p.ReadOnly)+len(p.ReadWrite)+len(p.Devices)), "paths")
}

func BenchmarkRestrictThread(b *testing.B) {
	requireABI(b, 6)
	p := benchPolicy(b)
	var cpu time.Duration
	for b.Loop() {
		d, err := onDyingThread(func() error {
			_, err := p.RestrictThread()
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		cpu += d
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// onDyingThread runs f on a new locked thread and ends the thread
// afterwards, returning the thread's CPU time spent in f.
func onDyingThread(f func() error) (time.Duration, error) {
	return osthread.RunWait(f)
}
