package cgroupfs

import (
	"errors"
	"os"
	"path/filepath"
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
	if got, want := lim.controllersOn(2), []string{"memory", "cpu", "pids"}; !reflect.DeepEqual(got, want) {
		t.Errorf("controllersOn(2) = %v, want %v", got, want)
	}
	if got, want := (Limits{PIDsKey: {N: 1}}).controllersOn(1), []string{"memory", "pids"}; !reflect.DeepEqual(got, want) {
		t.Errorf("controllersOn(1) = %v, want %v", got, want)
	}
}

// TestNeeds: what a leaf needs is the list's answer, named per version:
// memory always (and why), the others for their keys; cpuacct, taken
// when mounted, is never needed.
func TestNeeds(t *testing.T) {
	mem := Need{Controller: "memory", Keys: []string{MemoryKey, SwapKey}, Always: "peak and OOM accounting"}
	cpu := Need{Controller: "cpu", Keys: []string{CPUsKey}}
	pids := Need{Controller: "pids", Keys: []string{PIDsKey}}
	cases := []struct {
		version int
		l       Limits
		want    []Need
	}{
		{2, Limits{}, []Need{mem}},
		{1, Limits{MemoryKey: {N: 0}}, []Need{mem}},
		{1, Limits{CPUsKey: {CPUs: 0.5}, PIDsKey: {N: 64}}, []Need{mem, cpu, pids}},
		{0, Limits{PIDsKey: {N: 64}}, []Need{mem, pids}},
	}
	for _, c := range cases {
		if got := Needs(c.version, c.l); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Needs(%d, %+v) = %+v, want %+v", c.version, c.l, got, c.want)
		}
	}
}

// TestMissing: the controllers a probed parent lacks are named with a
// fix that is a kernel setting or command, on each version.
func TestMissing(t *testing.T) {
	lim := Limits{CPUsKey: {CPUs: 1}, PIDsKey: {N: 64}}
	grand := t.TempDir() // a grandparent that passes controllers down
	if err := os.WriteFile(filepath.Join(grand, "cgroup.subtree_control"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		info Info
		want string // in the error; "" = nil
	}{
		{"v2 all there", Info{Version: 2, Parents: []string{"/nonexistent/p"}, Controllers: []string{"cpu", "memory", "pids"}}, ""},
		{"v2 no pids", Info{Version: 2, Parents: []string{"/nonexistent/p"}, Controllers: []string{"cpu", "memory"}},
			"cgroup v2 pids controller not available: /nonexistent/p has controllers [cpu memory] (the kernel lacks it or has bound it to cgroup v1 (hybrid mode): boot with systemd.unified_cgroup_hierarchy=1 or cgroup_no_v1=all (the kernel needs CONFIG_CGROUP_PIDS))"},
		{"v2 below a grandparent", Info{Version: 2, Parents: []string{grand + "/p"}, Controllers: []string{"memory"}},
			"cgroup v2 cpu, pids controllers not available: " + grand + "/p has controllers [memory] (enable it in the grandparent: echo \"+cpu +pids\" > " + grand + "/cgroup.subtree_control, "},
		{"v1 no cpu", Info{Version: 1, Parents: []string{"/sys/fs/cgroup/memory"}, Controllers: []string{"memory", "pids"}},
			"(mount its hierarchy (mkdir /sys/fs/cgroup/cpu && mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu; the kernel needs CONFIG_CFS_BANDWIDTH), or use a cgroup v2 host (boot with systemd.unified_cgroup_hierarchy=1))"},
		{"v1 cpuacct not needed", Info{Version: 1, Controllers: []string{"cpu", "memory", "pids"}}, ""},
		{"nothing probed", Info{}, ""},
	}
	for _, c := range cases {
		err := c.info.Missing(lim)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrUnsupported)) {
			t.Errorf("%s: Info%+v.Missing() = %v, want %q (ErrUnsupported)", c.name, c.info, err, c.want)
		}
	}
}

// TestKeys: the list of controllers declares the keys of Limits, in the order
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
	if err == nil || !strings.Contains(err.Error(), `key "hugetlb": no controller declares it`) {
		t.Errorf("validate(unknown key) = %v, want it refused, naming the key", err)
	}
}

// TestHypotheticalController: a new controller is one row of the list
// (added here, in the test only), even one whose value is per device and
// whose v1 hierarchy has another name (io, blkio): the leaf's settings on
// each version, the controllers it needs, the hierarchies v1 looks for
// and Keys follow with no other line.
func TestHypotheticalController(t *testing.T) {
	saved := slices.Clone(controllers)
	t.Cleanup(func() { controllers = saved })
	const rbps = "io_read_bps"
	controllers = append(controllers, &controller{name: "io", v1: "blkio", kernel: "CONFIG_BLK_DEV_THROTTLING",
		keys:  []key{{rbps, PerDevice}},
		isSet: func(l Limits) bool { return len(l[rbps].Devices) > 0 },
		set: func(version int, l Limits) []Setting {
			var out []Setting
			for _, d := range l[rbps].Devices {
				if version == 2 {
					out = append(out, Setting{File: "io.max", Value: d.Device.String() + " rbps=" + strconv.FormatInt(d.N, 10)})
				} else {
					out = append(out, Setting{File: "blkio.throttle.read_bps_device", Value: d.Device.String() + " " + strconv.FormatInt(d.N, 10)})
				}
			}
			return out
		},
		stat: func(reader, int, string, *Usage) error { return nil }})
	l := Limits{rbps: {Devices: []DeviceValue{{Device{8, 0}, 1 << 20}, {Device{259, 1}, 2 << 20}}}}
	if err := (Config{Name: "ok", Limits: l}).validate(); err != nil {
		t.Errorf("validate(%s) = %v, want nil", rbps, err)
	}
	for _, bad := range []Limits{{rbps: {N: 1}}, {MemoryKey: {Devices: []DeviceValue{{N: 1}}}}, {rbps: {Devices: []DeviceValue{{N: -1}}}},
		{rbps: {Devices: []DeviceValue{{Device{8, 0}, 1}, {Device{8, 0}, 2}}}}} {
		if err := (Config{Name: "ok", Limits: bad}).validate(); err == nil {
			t.Errorf("validate(%+v) = nil, want a value of the wrong form, negative or twice refused", bad)
		}
	}
	cases := []struct {
		version int
		want    []Setting
		ctls    []string
	}{
		{2, []Setting{{"memory", "memory.swap.max", "0", true}, {"io", "io.max", "8:0 rbps=1048576", false}, {"io", "io.max", "259:1 rbps=2097152", false}},
			[]string{"memory", "io"}},
		{1, []Setting{{"blkio", "blkio.throttle.read_bps_device", "8:0 1048576", false}, {"blkio", "blkio.throttle.read_bps_device", "259:1 2097152", false}},
			[]string{"memory", "blkio"}},
	}
	for _, c := range cases {
		if got := Settings(c.version, l); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Settings(%d, %s) = %+v, want %+v", c.version, rbps, got, c.want)
		}
		if got := l.controllersOn(c.version); !reflect.DeepEqual(got, c.ctls) {
			t.Errorf("controllersOn(%d) = %v, want %v", c.version, got, c.ctls)
		}
	}
	if keys := Keys(); keys[len(keys)-1] != rbps {
		t.Errorf("Keys() = %q, want %s last", keys, rbps)
	}
	// v1 looks for the blkio hierarchy, and needs it.
	h := host{v1: map[string]*hierarchy{}}
	for _, c := range []string{"memory", "cpu", "cpuacct", "pids"} {
		h.v1[c] = &hierarchy{mount: "/nonexistent/" + c, root: "/", own: "/"}
	}
	if _, err := h.probeV1("", l); err == nil || !strings.Contains(err.Error(), "cgroup v1 blkio controller not available") ||
		!strings.Contains(err.Error(), "CONFIG_BLK_DEV_THROTTLING") {
		t.Errorf("probeV1(no blkio, %s) = %v, want blkio missing, naming its kernel option", rbps, err)
	}
}
