package jail

import (
	"reflect"
	"slices"
	"testing"

	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/view"
)

func TestPlanGroups(t *testing.T) {
	users, lab := report.HostGroup{GID: 100, Name: "users"}, report.HostGroup{GID: 1001, Name: "lab"}
	own := report.HostGroup{GID: 1002, Name: "alice"}
	rootless := func(h *view.HostView) {
		h.EUID, h.EGID, h.OverflowGID = 1001, 1002, 65534
		h.Groups = []report.HostGroup{own, users, lab}
	}
	cases := []struct {
		name       string
		spec       func(*Spec)
		host       func(*view.HostView)
		wantInside []int              // the init's Groups: what the forking thread must hold
		wantKept   []report.HostGroup // the report's host_groups_kept
		wantHeldBy []promise.Layer
	}{
		{"root clears them", nil, func(h *view.HostView) { h.Groups = nil }, nil, []report.HostGroup{}, nil},
		{"rootless without groups", nil, func(h *view.HostView) { h.EUID, h.EGID, h.OverflowGID = 1001, 1002, 65534 }, nil, []report.HostGroup{}, nil},
		{"rootless, primary group only", nil, func(h *view.HostView) {
			rootless(h)
			h.Groups = []report.HostGroup{own}
		}, []int{1000}, []report.HostGroup{}, nil},
		{"rootless with groups", nil, rootless, []int{1000, 65534, 65534},
			[]report.HostGroup{{GID: 100, Name: "users", InsideGID: 65534}, {GID: 1001, Name: "lab", InsideGID: 65534}}, []promise.Layer{promise.LayerMountView, promise.LayerLandlockFS}},
		{"another overflow gid", nil, func(h *view.HostView) {
			rootless(h)
			h.OverflowGID = 65533
		}, []int{1000, 65533, 65533}, []report.HostGroup{{GID: 100, Name: "users", InsideGID: 65533}, {GID: 1001, Name: "lab", InsideGID: 65533}}, []promise.Layer{promise.LayerMountView, promise.LayerLandlockFS}},
		{"rootless with groups, no landlock", func(s *Spec) {
			s.OptIns = promise.OptIns{{Kind: promise.OptInDisable, Protection: promise.ProtectLandlock}, {Kind: promise.OptInDegrade, Protection: promise.ProtectLandlock}}
		}, rootless, []int{1000, 65534, 65534},
			[]report.HostGroup{{GID: 100, Name: "users", InsideGID: 65534}, {GID: 1001, Name: "lab", InsideGID: 65534}}, []promise.Layer{promise.LayerMountView}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, h := testSpec(), testHost()
			if c.spec != nil {
				c.spec(s)
			}
			if c.host != nil {
				c.host(&h)
			}
			p, _, err := BuildPlan(asResolved(s), h)
			if err != nil {
				t.Fatalf("BuildPlan(%s) = %v, want nil", c.name, err)
			}
			if !slices.Equal(p.Init.Groups, c.wantInside) {
				t.Errorf("init groups = %v, want %v", p.Init.Groups, c.wantInside)
			}
			if p.Init.Setgroups != (h.EUID == 0) {
				t.Errorf("init setgroups = %v, want %v (root clears the groups)", p.Init.Setgroups, h.EUID == 0)
			}
			id := p.Enforced.Identity
			if !reflect.DeepEqual(id.HostGroupsKept, c.wantKept) {
				t.Errorf("host_groups_kept = %+v, want %+v", id.HostGroupsKept, c.wantKept)
			}
			if !slices.Equal(id.HeldBy, c.wantHeldBy) {
				t.Errorf("held_by = %v, want %v", id.HeldBy, c.wantHeldBy)
			}
			if (id.Why != "") != (len(c.wantKept) > 0) {
				t.Errorf("why = %q with %d groups kept, want a reason exactly when some are", id.Why, len(c.wantKept))
			}
		})
	}
}
