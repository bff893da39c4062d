package cgroupfs

import (
	"os"
	"slices"
	"testing"
	"time"
)

// TestRemoveStale: a leaf whose owner died (its lock dropped) is removed by
// RemoveStale; a live one, a fresh one and a populated one are not.
func TestRemoveStale(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ int) { testRemoveStale(t) })
}

func testRemoveStale(t *testing.T) {
	limits := Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 64}}
	prefix := "scidex-stale-" + testName()[len("scidex-test-"):] + "-"

	dead, err := Create(Config{Name: prefix + "dead", Limits: limits})
	if err != nil {
		t.Fatalf("Create = %v", err)
	}
	t.Cleanup(func() { dead.Remove() })
	live := newLeaf(t, Config{Name: prefix + "live", Limits: limits})
	dead.unlock() // as if its owner had been killed

	// Too young: left alone.
	if got, err := RemoveStale(Config{Limits: limits}, prefix, time.Hour); err != nil || len(got) != 0 {
		t.Fatalf("RemoveStale(minAge 1h) = %v, %v; want nothing removed", got, err)
	}
	got, err := RemoveStale(Config{Limits: limits}, prefix, 0)
	if err != nil {
		t.Fatalf("RemoveStale = %v", err)
	}
	slices.Sort(got)
	want := dead.Paths()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("RemoveStale removed %v, want the dead leaf's %v", got, want)
	}
	assertGone(t, dead.Paths())
	for _, d := range live.Paths() {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("live leaf directory %s: %v, want it kept", d, err)
		}
	}
	if _, err := RemoveStale(Config{}, "bad/prefix", 0); err == nil {
		t.Errorf("RemoveStale with a prefix holding '/' = nil error, want one")
	}
}

// TestHostServesARun: one Host, read once, serves a run's stale sweep, its
// Create and a Probe, as the jail uses it.
func TestHostServesARun(t *testing.T) {
	eachVersion(t, func(t *testing.T, v int) {
		limits := Limits{MemoryKey: {N: 64 << 20}, CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 64}}
		prefix := "scidex-host-" + testName()[len("scidex-test-"):] + "-"
		h, err := ReadHost()
		if err != nil {
			t.Fatalf("ReadHost() = %v, want nil", err)
		}
		dead, err := h.Create(Config{Name: prefix + "dead", Limits: limits})
		if err != nil {
			t.Fatalf("Host.Create = %v, want nil", err)
		}
		t.Cleanup(func() { dead.Remove() })
		dead.unlock() // as if its owner had been killed

		got, err := h.RemoveStale(Config{Limits: limits}, prefix, 0)
		slices.Sort(got)
		want := dead.Paths()
		slices.Sort(want)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Host.RemoveStale = %v, %v, want the dead leaf's %v, nil", got, err, want)
		}
		next, err := h.Create(Config{Name: prefix + "next", Limits: limits})
		if err != nil {
			t.Fatalf("Host.Create after Host.RemoveStale = %v, want nil", err)
		}
		t.Cleanup(func() {
			if err := next.Remove(); err != nil {
				t.Errorf("Remove() = %v, want nil", err)
			}
			assertGone(t, next.Paths())
		})
		if next.Version() != v {
			t.Errorf("Host.Create leaf version = %d, want %d", next.Version(), v)
		}
		if info, err := h.Probe(""); err != nil || info.Version != v || !info.Delegated {
			t.Errorf("Host.Probe(\"\") = %+v, %v, want version %d, delegated", info, err, v)
		}
		if _, err := h.RemoveStale(Config{}, "bad/prefix", 0); err == nil {
			t.Errorf("Host.RemoveStale with a prefix holding '/' = nil error, want one")
		}
	})
}
