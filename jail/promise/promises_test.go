package promise

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// held returns promise -> held layers, for comparing with a table.
func held(states []PromiseState) map[Promise][]Layer {
	return Report(states)
}

func TestEvaluatePromises(t *testing.T) {
	full := []Layer{LayerMountView, LayerLandlockFS}
	cases := []struct {
		name string
		host HostLayers
		want map[Promise][]Layer // only the promises named are compared
	}{
		{"ABI 7, net none", HostLayers{LandlockABI: 7, Net: NetNone}, map[Promise][]Layer{
			PromiseFSWrite: full, PromiseFSRead: full,
			PromiseSignalsOut:      {LayerPIDNS, LayerLandlockScope},
			PromiseAbstractSockets: {LayerNetNS, LayerLandlockScope},
			PromiseUnixSockets:     {LayerMountView},
			PromiseNoPostgres:      {LayerNetNS, LayerSeccomp},
			PromiseNetwork:         {LayerNetNS, LayerSeccomp},
			PromiseLimits:          {LayerCgroup},
			PromiseNothingLeft:     {LayerPIDNS, LayerCgroup},
		}},
		{"ABI 2 (Debian 12), net none", HostLayers{LandlockABI: 2, Net: NetNone}, map[Promise][]Layer{
			PromiseFSWrite: full, PromiseFSRead: full,
			PromiseSignalsOut:      {LayerPIDNS},
			PromiseAbstractSockets: {LayerNetNS},
			PromisePtraceOut:       {LayerPIDNS, LayerSeccomp},
		}},
		{"no Landlock", HostLayers{Net: NetNone}, map[Promise][]Layer{
			PromiseFSWrite: {LayerMountView}, PromiseFSRead: {LayerMountView},
		}},
		{"ABI 4, net host", HostLayers{LandlockABI: 4, Net: NetHost}, map[Promise][]Layer{
			PromiseNetwork:         {LayerLandlockTCP},
			PromiseNoPostgres:      {LayerLandlockTCP},
			PromiseAbstractSockets: nil,
		}},
		{"ABI 3, net host: no TCP rules", HostLayers{LandlockABI: 3, Net: NetHost}, map[Promise][]Layer{
			PromiseNetwork: nil, PromiseNoPostgres: nil,
		}},
		{"net loopback", HostLayers{LandlockABI: 7, Net: NetLoopback}, map[Promise][]Layer{
			PromiseNetwork: {LayerNetNS}, PromiseNoPostgres: {LayerNetNS},
		}},
		{"seccomp and cgroup disabled", HostLayers{LandlockABI: 7, Net: NetNone, Disabled: []Protection{ProtectSeccomp, ProtectCgroup}}, map[Promise][]Layer{
			PromiseKernelSurface: nil, PromiseLimits: nil,
			PromiseNothingLeft: {LayerPIDNS}, PromisePtraceOut: {LayerPIDNS},
		}},
		{"landlock disabled on ABI 7", HostLayers{LandlockABI: 7, Net: NetNone, Disabled: []Protection{ProtectLandlock}}, map[Promise][]Layer{
			PromiseFSWrite: {LayerMountView}, PromiseSignalsOut: {LayerPIDNS},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := held(EvaluatePromises(c.host, nil))
			if len(got) != len(promiseTable) {
				t.Errorf("EvaluatePromises(%+v) has %d promises, want %d", c.host, len(got), len(promiseTable))
			}
			for p, want := range c.want {
				if !slices.Equal(got[p], want) {
					t.Errorf("EvaluatePromises(%+v)[%s] = %q, want %q", c.host, p, got[p], want)
				}
			}
		})
	}
}

func TestCheckPromises(t *testing.T) {
	cases := []struct {
		name     string
		host     HostLayers
		require  map[Promise]int
		optIns   []OptIn
		wantErr  string   // in the error; "" = the run starts
		wantFix  string   // in PromiseError.Fix
		degraded []string // promises allowed below their requirement
	}{
		{"ABI 7: everything holds", HostLayers{LandlockABI: 7, Net: NetNone}, nil, nil, "", "", nil},
		{"ABI 2 runs by default", HostLayers{LandlockABI: 2, Net: NetNone}, nil, nil, "", "", nil},
		{"ABI 1 runs by default", HostLayers{LandlockABI: 1, Net: NetLoopback}, nil, nil, "", "", nil},
		{"no Landlock is refused", HostLayers{LandlockErr: "this kernel has no Landlock (ENOSYS)", Net: NetNone}, nil, nil,
			"promise fs_write", "Landlock enabled", nil},
		{"no Landlock, allowed by name", HostLayers{Net: NetNone}, nil, []OptIn{{OptInDegrade, ProtectLandlock}},
			"", "", []string{"fs_write", "fs_read"}},
		{"a profile wanting scoping refuses ABI 2", HostLayers{LandlockABI: 2, Net: NetNone}, map[Promise]int{PromiseSignalsOut: 2}, nil,
			"promise signals_out", "Linux >= 6.12 (Landlock ABI 6)", nil},
		{"a profile wanting scoping runs on ABI 6", HostLayers{LandlockABI: 6, Net: NetNone}, map[Promise]int{PromiseSignalsOut: 2}, nil, "", "", nil},
		{"net host without TCP rules is refused", HostLayers{LandlockABI: 3, Net: NetHost}, nil, nil,
			"promise abstract_sockets_out", "Landlock ABI 6", nil},
		{"net host on ABI 6 runs", HostLayers{LandlockABI: 6, Net: NetHost}, nil, nil, "", "", nil},
		{"seccomp disabled by name", HostLayers{LandlockABI: 7, Net: NetNone, Disabled: []Protection{ProtectSeccomp}}, nil, []OptIn{{OptInDisable, ProtectSeccomp}},
			"", "", []string{"kernel_surface"}},
		{"an opt-in for another layer does not do", HostLayers{Net: NetNone, Disabled: []Protection{ProtectSeccomp}}, nil, []OptIn{{OptInDisable, ProtectSeccomp}},
			"promise fs_write", "", nil},
		{"more layers than exist", HostLayers{LandlockABI: 7, Net: NetLoopback}, map[Promise]int{PromiseNetwork: 2}, nil,
			"promise network", "only 1 layer(s) exist", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			short, err := Check(EvaluatePromises(c.host, c.require), c.optIns)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Check(%+v, %v) = %v, want the run to start", c.host, c.optIns, err)
				}
				var names []string
				for _, s := range short {
					names = append(names, string(s.Promise))
				}
				if !slices.Equal(names, c.degraded) {
					t.Errorf("Check(%+v, %v) degraded = %q, want %q", c.host, c.optIns, names, c.degraded)
				}
				return
			}
			var pe *PromiseError
			if !errors.As(err, &pe) {
				t.Fatalf("Check(%+v, %v) = %v, want a *PromiseError", c.host, c.optIns, err)
			}
			if !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(pe.Fix, c.wantFix) {
				t.Errorf("Check(%+v) = %q (fix %q), want %q with fix holding %q", c.host, err, pe.Fix, c.wantErr, c.wantFix)
			}
		})
	}
}

func TestPromiseErrorNamesOptIn(t *testing.T) {
	_, err := Check(EvaluatePromises(HostLayers{Net: NetNone, LandlockErr: "Landlock is built into this kernel but not enabled at boot"}, nil), nil)
	for _, want := range []string{"fs_write", "mount view", "missing landlock fs", "not enabled at boot", "--allow-degraded landlock"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check without Landlock = %v, want it to say %q", err, want)
		}
	}
}

func TestValidateRequireLayers(t *testing.T) {
	cases := []struct {
		m    map[Promise]int
		want string // "" = valid
	}{
		{nil, ""},
		{map[Promise]int{PromiseSignalsOut: 2, PromiseFSWrite: 2}, ""},
		{map[Promise]int{"fs_wrte": 2}, `"fs_wrte": no such promise`},
		{map[Promise]int{PromiseFSWrite: 1}, "below the default of 2"},
		{map[Promise]int{PromiseSignalsOut: 0}, "below the default of 1"},
		{map[Promise]int{PromiseSignalsOut: 3}, "at most 2 exist"},
	}
	for _, c := range cases {
		err := ValidateRequireLayers(c.m, allNets)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("ValidateRequireLayers(%v) = %v, want %q", c.m, err, c.want)
		}
	}
}

func TestDefaultLayers(t *testing.T) {
	for _, p := range Promises() {
		want := 1
		if p == PromiseFSWrite || p == PromiseFSRead {
			want = 2
		}
		if got := DefaultLayers(p); got != want {
			t.Errorf("DefaultLayers(%s) = %d, want %d", p, got, want)
		}
	}
}
