package view

import (
	"os"
	"testing"
)

// BenchmarkMeminfoView is a served run's /proc/meminfo made from this
// host's (its config phase, jail/supervise's withLimits), appended and
// as fmt wrote it (meminfoViewFmt).
func BenchmarkMeminfoView(b *testing.B) {
	host, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name string
		view func(string, int64, int64, int64) string
	}{{"append", MeminfoView}, {"fmt", meminfoViewFmt}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.view(string(host), 2<<30, 0, 1<<20)
			}
		})
	}
}

// BenchmarkHostMeminfo is the host's /proc/meminfo read through the kept
// descriptor and by path (os.ReadFile), as a served run's config read it.
func BenchmarkHostMeminfo(b *testing.B) {
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			if _, err := HostMeminfo(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile("/proc/meminfo"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
