package cgroupfs

import (
	"reflect"
	"strings"
	"testing"
)

// TestSettings: what the limits write, on each version, as data: one
// controller per file, in the order the kernel needs.
func TestSettings(t *testing.T) {
	lim := Limits{MemoryKey: {N: 64 << 20}, SwapKey: {N: 1 << 20}, CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 20}}
	cases := []struct {
		name    string
		version int
		l       Limits
		want    []Setting
	}{
		{"v2 all", 2, lim, []Setting{
			{"memory", "memory.max", "67108864", false}, {"memory", "memory.swap.max", "1048576", true},
			{"cpu", "cpu.max", "50000 100000", false}, {"pids", "pids.max", "20", false}}},
		{"v1 all", 1, lim, []Setting{
			{"memory", "memory.limit_in_bytes", "67108864", false}, {"memory", "memory.memsw.limit_in_bytes", "68157440", true},
			{"cpu", "cpu.cfs_period_us", "100000", false}, {"cpu", "cpu.cfs_quota_us", "50000", false}, {"pids", "pids.max", "20", false}}},
		{"v2 none: no swap still written", 2, Limits{}, []Setting{{"memory", "memory.swap.max", "0", true}}},
		{"v1 none", 1, Limits{}, nil},
	}
	for _, c := range cases {
		if got := Settings(c.version, c.l); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Settings(%d, %+v) = %+v, want %+v", c.name, c.version, c.l, got, c.want)
		}
	}
	if got, want := lim.controllers(), []string{"memory", "cpu", "pids"}; !reflect.DeepEqual(got, want) {
		t.Errorf("controllers() = %v, want %v", got, want)
	}
	if got, want := (Limits{PIDsKey: {N: 1}}).controllers(), []string{"memory", "pids"}; !reflect.DeepEqual(got, want) {
		t.Errorf("controllers() = %v, want %v", got, want)
	}
}

// TestKeys: the controller files declare the keys of Limits, in the order
// the controllers are written; a key none declares is refused.
func TestKeys(t *testing.T) {
	if got, want := Keys(), []string{MemoryKey, SwapKey, CPUsKey, PIDsKey}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	err := Config{Name: "ok", Limits: Limits{"hugetlb": {N: 1}}}.validate()
	if err == nil || !strings.Contains(err.Error(), `key "hugetlb": no controller file declares it`) {
		t.Errorf("validate(unknown key) = %v, want it refused, naming the key", err)
	}
}
