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
	limits := Limits{MemoryBytes: 64 << 20, CPUs: 0.5, PIDs: 64}
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
