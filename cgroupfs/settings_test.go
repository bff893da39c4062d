package cgroupfs

import (
	"reflect"
	"slices"
	"strconv"
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
	keys := Keys()
	if want := []string{MemoryKey, SwapKey, CPUsKey, PIDsKey}; len(keys) < len(want) || !reflect.DeepEqual(keys[:len(want)], want) {
		t.Errorf("Keys() = %q, want %q first", keys, want)
	}
	for i, k := range keys {
		if slices.Contains(keys[:i], k) {
			t.Errorf("Keys() = %q: %s is declared twice", keys, k)
		}
	}
	err := Config{Name: "ok", Limits: Limits{"hugetlb": {N: 1}}}.validate()
	if err == nil || !strings.Contains(err.Error(), `key "hugetlb": no controller file declares it`) {
		t.Errorf("validate(unknown key) = %v, want it refused, naming the key", err)
	}
}

// TestHypotheticalController: a new controller is one file that declares
// its keys and registers itself (here, in the test only): the leaf's
// settings, the controllers it needs and Keys follow with no other line.
func TestHypotheticalController(t *testing.T) {
	saved := slices.Clone(controllerFiles)
	t.Cleanup(func() { controllerFiles = saved })
	register(controller{name: "hugetlb", order: 1000, keys: []string{"hugetlb_2mb"},
		isSet: func(l Limits) bool { return l["hugetlb_2mb"].N > 0 },
		set: func(_ int, l Limits) []Setting {
			return []Setting{{Controller: "hugetlb", File: "hugetlb.2MB.max", Value: strconv.FormatInt(l["hugetlb_2mb"].N, 10)}}
		},
		stat: func(int, string, *Usage) error { return nil }})
	l := Limits{"hugetlb_2mb": {N: 2 << 20}}
	if err := (Config{Name: "ok", Limits: l}).validate(); err != nil {
		t.Errorf("validate(hugetlb_2mb) = %v, want nil", err)
	}
	want := []Setting{{"memory", "memory.swap.max", "0", true}, {"hugetlb", "hugetlb.2MB.max", "2097152", false}}
	if got := Settings(2, l); !reflect.DeepEqual(got, want) {
		t.Errorf("Settings(2, hugetlb_2mb) = %+v, want %+v", got, want)
	}
	if got := l.controllers(); !reflect.DeepEqual(got, []string{"memory", "hugetlb"}) {
		t.Errorf("controllers() = %v, want memory and hugetlb", got)
	}
	if keys := Keys(); keys[len(keys)-1] != "hugetlb_2mb" {
		t.Errorf("Keys() = %q, want hugetlb_2mb last", keys)
	}
}
