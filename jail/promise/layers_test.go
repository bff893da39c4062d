package promise

import (
	"slices"
	"testing"
)

// TestOptInText: an opt-in's text is what the caller types, as the report's
// degraded list and the errors have always named it.
func TestOptInText(t *testing.T) {
	for _, c := range []struct {
		in   OptIns
		want string
	}{
		{OptIns{{OptInDegrade, ProtectLandlock}}, "--allow-degraded landlock"},
		{OptIns{{OptInDisable, ProtectSeccomp}}, "--unsafe-disable seccomp"},
		{OptIns{{OptInDisable, ProtectLandlock}, {OptInDisable, ProtectCgroup}}, "--unsafe-disable landlock and --unsafe-disable cgroup"},
		{OptIns{{}}, ""},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseOptIns(t *testing.T) {
	for _, c := range []struct {
		name    string
		kind    OptInKind
		names   []string
		want    OptIns
		wantErr string
	}{
		{"none", OptInDisable, nil, OptIns{}, ""},
		{"disable", OptInDisable, []string{"seccomp", "cgroup"}, OptIns{{OptInDisable, ProtectSeccomp}, {OptInDisable, ProtectCgroup}}, ""},
		{"degrade", OptInDegrade, []string{"landlock"}, OptIns{{OptInDegrade, ProtectLandlock}}, ""},
		{"unknown layer to disable", OptInDisable, []string{"selinux"}, nil, `"selinux": known layers are landlock, seccomp, cgroup`},
		{"seccomp cannot be degraded", OptInDegrade, []string{"seccomp"}, nil, `"seccomp": only landlock may be degraded`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseOptIns(c.kind, c.names)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Errorf("ParseOptIns(%s, %q) = %v, want error %q", c.kind, c.names, err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("ParseOptIns(%s, %q) = %v, %v, want %v", c.kind, c.names, got, err, c.want)
			}
		})
	}
}

// TestLayerProtection: every layer of the promise table that a run can go
// without belongs to a protection an opt-in can name; the mount view and
// the namespaces to none.
func TestLayerProtection(t *testing.T) {
	every := map[Layer]bool{}
	for _, d := range promiseTable {
		for _, l := range d.layers {
			every[l] = true
		}
		for _, n := range allNets {
			for _, l := range n.Layers[d.promise] {
				every[l] = true
			}
		}
	}
	for l := range every {
		p, ok := layerProtection[l]
		always := l == LayerMountView || l == LayerPIDNS || l == LayerNetNS
		switch {
		case always && ok:
			t.Errorf("layerProtection[%q] = %q, want none: every run has it", l, p)
		case !always && !slices.Contains(disableLayers, p):
			t.Errorf("layerProtection[%q] = %q, want a protection --unsafe-disable can name (%q)", l, p, disableLayers)
		}
	}
}
