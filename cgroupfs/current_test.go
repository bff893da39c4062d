package cgroupfs

import (
	"slices"
	"testing"
	"time"
)

func TestMemoryCurrentAndControllers(t *testing.T) {
	eachVersion(t, func(t *testing.T, v int) {
		l := newLeaf(t, Config{Limits: Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 20}}})
		if n, err := l.MemoryCurrent(); err != nil || n != 0 {
			t.Errorf("MemoryCurrent() of an empty leaf = %d, %v, want 0, nil", n, err)
		}
		// A process that touches 8 MiB is charged for it.
		startIn(t, l, `x=$(head -c 8388608 /dev/zero | tr '\0' a); sleep 60`, false)
		var n int64
		// Until the shell has its 8 MiB (a bound, not a timed assertion).
		for i := 0; i < 1000 && n < 8<<20; i++ {
			var err error
			if n, err = l.MemoryCurrent(); err != nil {
				t.Fatalf("MemoryCurrent() = %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n < 8<<20 || n > 64<<20 {
			t.Errorf("MemoryCurrent() with a shell holding 8 MiB = %d, want 8 MiB to the limit of 64 MiB", n)
		}
		want := []string{"cpu", "cpuacct", "memory", "pids"}
		if v == 2 {
			want = nil
		}
		if got := l.Controllers(); !slices.Equal(got, want) {
			t.Errorf("Controllers() = %q, want %q", got, want)
		}
	})
}
