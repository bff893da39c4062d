package cgroupfs

import (
	"path/filepath"
	"testing"
)

// TestSetLimits: a leaf's limits written again, down and up (v1's RAM+swap
// limit must go up before the RAM limit does), are what the kernel holds
// and what Written says.
func TestSetLimits(t *testing.T) {
	eachVersion(t, func(t *testing.T, v int) {
		l := newLeaf(t, Config{Limits: Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 20}}})
		for _, lim := range []Limits{
			{MemoryKey: {N: 32 << 20}, CPUsKey: {CPUs: 1}, PIDsKey: {N: 10}},
			{MemoryKey: {N: 256 << 20}, SwapKey: {N: 16 << 20}, CPUsKey: {CPUs: 2}, PIDsKey: {N: 64}},
			{MemoryKey: {N: 128 << 20}, CPUsKey: {CPUs: 0.25}, PIDsKey: {N: 30}},
		} {
			if err := l.SetLimits(lim); err != nil {
				t.Fatalf("SetLimits(%v) = %v, want nil", lim, err)
			}
			for _, s := range Settings(v, lim) {
				var file string
				for f := range l.Written() {
					if filepath.Base(f) == s.File {
						file = f
					}
				}
				if file == "" {
					continue // a setting the kernel lacks (IfPresent)
				}
				if got := l.Written()[file]; got != s.Value {
					t.Errorf("after SetLimits(%v): Written()[%s] = %q, want %q", lim, file, got, s.Value)
				}
				if got := readTrimmed(t, file); got != s.Value {
					t.Errorf("after SetLimits(%v): %s holds %q, want %q", lim, file, got, s.Value)
				}
			}
		}
		if err := l.SetLimits(Limits{PIDsKey: {N: -1}}); err == nil {
			t.Errorf("SetLimits(pids -1) = nil, want an error")
		}
	})
}
